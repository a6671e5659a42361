//! `redist plan`: build a plan without moving data and report what it does.
//!
//! Pure: it never initialises MPI and runs without `mpirun`.
//!
//! - [`to_json`]: the machine-readable object with `elements`,
//!   `elements_kept_local`, `elements_moved`, `messages`, `max_partners`,
//!   `steps`, `schedule_cost`, `target_rank_map`, `plan_ms`;
//! - [`summary`]: the readable report, with the schedule drawn as a table of
//!   steps (like seed 001's figures) when it is small ([`schedule_table`]);
//! - [`run`]: the subcommand itself; with `--rank`, [`crate::rank_report`]
//!   reports one rank's part instead of the whole plan.

use crate::error::CliError;
use crate::plan_args::PlanArgs;
use crate::shape::layout_for;
use redist::{Plan, Remap};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::io::Write;
use std::time::Instant;

/// Largest rank count and step count [`schedule_table`] draws.
pub const MAX_DRAWN_SCHEDULE: usize = 32;

/// Runs `redist plan`: builds the plan (timing it) and writes [`summary`] or,
/// with `--json`, [`to_json`] on one line.
pub fn run(args: &PlanArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let from = layout_for(&args.shape, &args.from)?;
    let to = layout_for(&args.shape, &args.to)?;
    if let Some(rank) = args.rank {
        return crate::rank_report::run(args, rank, &from, &to, out);
    }
    let start = Instant::now();
    let plan = Plan::new(&from, &to, args.remap)?;
    let plan_ms = start.elapsed().as_secs_f64() * 1e3;
    if args.json {
        writeln!(out, "{}", to_json(&plan, plan_ms))?;
    } else {
        out.write_all(summary(&plan, args.remap, plan_ms).as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// The JSON description of `plan` (the `redist plan --json` contract).
pub fn to_json(plan: &Plan, plan_ms: f64) -> Value {
    let s = plan.stats();
    json!({
        "shape": plan.source().shape(),
        "from": plan.source().spec().to_string(),
        "to": plan.target().spec().to_string(),
        "elements": s.elements,
        "elements_kept_local": s.kept_local,
        "elements_moved": s.moved,
        "messages": s.messages,
        "max_partners": s.max_partners,
        "steps": s.steps,
        "schedule_cost": s.schedule_cost,
        "target_rank_map": plan.target().rank_map(),
        "plan_ms": plan_ms,
    })
}

/// The readable report on `plan`.
pub fn summary(plan: &Plan, remap: Remap, plan_ms: f64) -> String {
    let s = plan.stats();
    let pct = |x: usize| {
        if s.elements == 0 {
            0.0
        } else {
            100.0 * x as f64 / s.elements as f64
        }
    };
    let mut out = String::new();
    let shape: Vec<String> = plan
        .source()
        .shape()
        .iter()
        .map(|n| n.to_string())
        .collect();
    let _ = writeln!(
        out,
        "plan {} -> {}  shape {}  remap {remap}  ({plan_ms:.3} ms)",
        plan.source().spec(),
        plan.target().spec(),
        shape.join("x")
    );
    for (d, a) in plan.axes().iter().enumerate() {
        let _ = writeln!(
            out,
            "  dim {d}: block {} over {} -> block {} over {}: period {}, {} whole period(s), tail {}, {} stored runs",
            a.source().block(),
            a.source().procs(),
            a.target().block(),
            a.target().procs(),
            a.period(),
            a.periods(),
            a.tail(),
            a.stored_runs()
        );
    }
    let _ = writeln!(out, "elements        {:>14}", s.elements);
    let _ = writeln!(
        out,
        "kept local      {:>14}  ({:.1}%)",
        s.kept_local,
        pct(s.kept_local)
    );
    let _ = writeln!(
        out,
        "moved           {:>14}  ({:.1}%)",
        s.moved,
        pct(s.moved)
    );
    let _ = writeln!(out, "messages        {:>14}", s.messages);
    let _ = writeln!(out, "max partners    {:>14}", s.max_partners);
    let _ = writeln!(out, "steps           {:>14}", s.steps);
    let _ = writeln!(
        out,
        "schedule cost   {:>14}  (sum over steps of the longest message, elements)",
        s.schedule_cost
    );
    let _ = writeln!(out, "target rank map {:?}", plan.target().rank_map());
    if let Some(table) = schedule_table(plan) {
        let _ = writeln!(
            out,
            "\nschedule (row = step, column = sending rank, entry = receiving rank:elements):"
        );
        out.push_str(&table);
    }
    out
}

/// The schedule as a table like seed 001's figures: one row per step, one
/// column per sending rank, each entry `to:elements` (or `.` when the rank
/// is idle in that step). `None` when there are more than
/// [`MAX_DRAWN_SCHEDULE`] ranks or steps.
pub fn schedule_table(plan: &Plan) -> Option<String> {
    let ranks = plan.source().ranks().max(plan.target().ranks());
    let steps = plan.schedule().steps();
    if ranks > MAX_DRAWN_SCHEDULE || steps.len() > MAX_DRAWN_SCHEDULE || steps.is_empty() {
        return None;
    }
    let messages = plan.messages();
    let cells: Vec<Vec<String>> = steps
        .iter()
        .map(|step| {
            let mut row = vec![".".to_string(); ranks];
            for &i in step {
                let m = messages[i];
                row[m.from] = format!("{}:{}", m.to, m.len);
            }
            row
        })
        .collect();
    let width = cells
        .iter()
        .flatten()
        .map(String::len)
        .chain([ranks.saturating_sub(1).to_string().len()])
        .max()
        .unwrap_or(1);
    let mut out = String::new();
    let _ = write!(out, "step |");
    for r in 0..ranks {
        let _ = write!(out, " {r:>width$}");
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "-----+{}", "-".repeat(ranks * (width + 1)));
    for (k, row) in cells.iter().enumerate() {
        let _ = write!(out, "{k:>4} |");
        for c in row {
            let _ = write!(out, " {c:>width$}");
        }
        let _ = writeln!(out);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dist_array::Layout;

    /// Formerly the doc example of [`run`].
    #[test]
    fn run_example() {
        let args = PlanArgs {
            shape: "100".parse().unwrap(),
            from: "cyclic(10)@5".parse().unwrap(),
            to: "cyclic(5)@5".parse().unwrap(),
            remap: "optimal".parse().unwrap(),
            rank: None,
            list: false,
            json: true,
        };
        let mut out = Vec::new();
        run(&args, &mut out).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["elements_kept_local"], 50);
    }

    /// Formerly the doc example of [`schedule_table`].
    #[test]
    fn schedule_table_example() {
        let from = Layout::parse(&[4], "cyclic@2").unwrap();
        let to = Layout::parse(&[4], "block@2").unwrap();
        let plan = Plan::new(&from, &to, Remap::None).unwrap();
        let table = schedule_table(&plan).unwrap();
        assert_eq!(table, "step |   0   1\n-----+--------\n   0 | 1:1 0:1\n");
    }
}
