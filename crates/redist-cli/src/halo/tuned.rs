//! `redist tune ghosts`: a ghost update of `redist halo`'s arguments
//! measured both ways — node-direct reads and messages — on the real array
//! (`redist::tune::tune_ghosts`), reported, and kept in a wisdom file
//! (`--wisdom F`) where `redist halo --wisdom F`, `GhostOptions::wisdom`
//! and `NDCYCLIC_WISDOM` find it.

use super::{spec_of, verify, HaloArgs};
use crate::collective::report_and_verdict;
use crate::error::CliError;
use crate::measure::args::by_element;
use crate::measure::values::IndexValue;
use clap::Args;
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::ProcGrid;
use redist::ghost::{GhostOptions, GhostUpdate};
use redist::tune::{tune_ghosts, GhostTuned, TuneSettings};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `redist tune ghosts`.
#[derive(Debug, Clone, Args)]
pub struct GhostsArgs {
    /// The update, as `redist halo` takes it (`--wisdom F`: the wisdom
    /// file the result is added to; `--reps`: timed updates of each way).
    #[command(flatten)]
    pub halo: HaloArgs,
    /// Updates of each way before the timed ones.
    #[arg(long, default_value_t = 3)]
    pub warmups: usize,
}

/// Runs `redist tune ghosts` on `world`: every rank takes part; rank 0
/// writes to `out`.
///
/// # Errors
///
/// [`CliError::Unsupported`] for `--overlap`, `--baseline` or
/// `--unchecked` (time those with `redist halo`); the update's errors,
/// alike on every rank.
pub fn run(
    args: &GhostsArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let h = &args.halo;
    if h.overlap || !h.baseline.is_empty() || h.unchecked {
        return Err(CliError::Unsupported {
            what: "--overlap, --baseline or --unchecked",
            expected: "redist halo: redist tune ghosts measures the update alone".to_string(),
        });
    }
    by_element!(h.element, run_typed(args, world, out))
}

/// `redist tune ghosts` with elements of type `T`: the array, the
/// measuring, the check of the fastest way, rank 0's report. Collective.
fn run_typed<T: IndexValue>(
    args: &GhostsArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let h = &args.halo;
    let (layout, spec) = spec_of(h)?;
    let root = world.rank() == 0;
    let grid = ProcGrid::new(world, layout.grid_extents())?;
    let mut a = verify::values::<T>(&grid, &layout, &spec)?;
    let options = GhostOptions {
        node_direct: !h.no_node_direct,
        wisdom: None,
    };
    let settings = TuneSettings {
        warmups: args.warmups,
        reps: h.reps,
        wisdom: h.wisdom.clone(),
        progress: root && !h.json,
    };
    let tuned = tune_ghosts(&mut a, &spec, &options, &settings)?;
    let verified = if h.verify {
        let fastest = GhostOptions {
            node_direct: tuned.best.node_direct,
            wisdom: Some(PathBuf::new()),
        };
        let mut update = GhostUpdate::with_options(&a, &spec, fastest)?;
        Some(verify::after_update(
            world,
            &grid,
            &layout,
            &spec,
            &mut update,
        )?)
    } else {
        None
    };
    report_and_verdict(
        world,
        || write_report(args, &layout, &tuned, verified, out),
        verified,
    )
}

/// A way's name.
fn way(node_direct: bool) -> &'static str {
    if node_direct {
        "node-direct"
    } else {
        "messages"
    }
}

/// Rank 0's report: one JSON line with `--json`, else a few lines.
fn write_report(
    args: &GhostsArgs,
    layout: &dist_array::Layout,
    tuned: &GhostTuned,
    verified: Option<bool>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let h = &args.halo;
    let ms = |s: f64| s * 1e3;
    let tried: Vec<serde_json::Value> = (tuned.tried.iter())
        .map(|t| json!({"way": way(t.node_direct), "ms": ms(t.seconds)}))
        .collect();
    if h.json {
        let v = json!({
            "command": "tune ghosts",
            "shape": layout.shape(),
            "layout": layout.spec().to_string(),
            "ranks": layout.ranks(),
            "type": format!("{:?}", h.element).to_lowercase(),
            "warmups": args.warmups,
            "reps": h.reps,
            "default": way(tuned.default.node_direct),
            "default_ms": ms(tuned.default.seconds),
            "best": way(tuned.best.node_direct),
            "best_ms": ms(tuned.best.seconds),
            "tuned_over_default": tuned.ratio(),
            "tried": tried,
            "executions": tuned.executions,
            "tune_seconds": tuned.seconds,
            "wisdom": h.wisdom.as_ref().map(|p| p.display().to_string()),
            "verified": verified,
        });
        writeln!(out, "{v}")?;
        return Ok(());
    }
    writeln!(
        out,
        "ghost update of {} on {} ranks, {} warm-ups and {} timed updates each",
        layout.spec(),
        layout.ranks(),
        args.warmups,
        h.reps
    )?;
    for t in &tuned.tried {
        let mark = if t == &tuned.best { "  <- best" } else { "" };
        writeln!(
            out,
            "  {}: {:.3} ms{mark}",
            way(t.node_direct),
            ms(t.seconds)
        )?;
    }
    writeln!(
        out,
        "best {} at {:.3} ms, {:.2}x the default; measuring took {} updates, {:.2} s{}",
        way(tuned.best.node_direct),
        ms(tuned.best.seconds),
        tuned.ratio(),
        tuned.executions,
        tuned.seconds,
        (h.wisdom.as_ref())
            .map(|p| format!("; added to {}", p.display()))
            .unwrap_or_default()
    )?;
    if let Some(ok) = verified {
        writeln!(out, "verified: {ok}")?;
    }
    Ok(())
}
