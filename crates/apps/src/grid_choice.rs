//! How the examples report a grid chosen by [`redist::tune::choose_grid`]:
//! as JSON and as one line of text.

use redist::tune::{grids, GridChoice, Outcome};
use serde_json::{json, Value};

/// The choice as JSON: the grid, whether the wisdom file gave it, every
/// candidate's milliseconds per step (or why it was refused), the ratio to
/// the default grid, the steps and seconds spent, the warnings; `null`
/// when no grid was chosen.
pub fn choice_json(choice: Option<&GridChoice>) -> Value {
    let Some(c) = choice else {
        return Value::Null;
    };
    let tried: Vec<_> = c
        .tried
        .iter()
        .map(|t| match &t.outcome {
            Outcome::Timed(s) => json!({"grid": grids::text(&t.grid), "ms": s * 1e3}),
            Outcome::Refused(why) => json!({"grid": grids::text(&t.grid), "refused": why}),
        })
        .collect();
    json!({
        "grid": grids::text(&c.grid),
        "recalled": c.recalled,
        "tried": tried,
        "ratio_to_default": c.ratio(),
        "steps": c.steps,
        "tuning_s": c.tuning_seconds,
        "warnings": c.warnings,
    })
}

/// The choice as one line: `grid 2x2 chosen (from the wisdom file)` or
/// `(measured: 0.88x the default grid's time, 33 steps, 0.44 s)`.
pub fn choice_line(c: &GridChoice) -> String {
    let how = if c.recalled {
        "from the wisdom file".to_string()
    } else {
        format!(
            "measured: {:.2}x the default grid's time, {} steps, {:.2} s",
            c.ratio(),
            c.steps,
            c.tuning_seconds
        )
    };
    format!("grid {} chosen ({how})", grids::text(&c.grid))
}
