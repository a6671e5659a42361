//! `redist tune` of one redistribution: measure every admissible choice on
//! real arrays (`redist::tune::tune`), beside `auto`'s own, report them and
//! keep the fastest in a wisdom file (`--wisdom F`), where later jobs
//! (`redist run --wisdom F`, `Options::wisdom`, `NDCYCLIC_WISDOM`) find it.
//!
//! It takes `redist run`'s arguments for the arrays and options (shape,
//! layouts, element type, the option flags) and `--reps`; the arrays hold
//! `redist run`'s values, and `--verify` checks the last execution's
//! result. With `--batch K`, each choice is timed on batches of K arrays
//! (`redist::tune::tune_batch`). Windows, permutations, mixed batches,
//! updates and remapping are not tuned (an error says so).

use super::ExchangeArgs;
use crate::collective::report_and_verdict;
use crate::error::CliError;
use crate::measure::args::by_element;
use crate::measure::setup::{job, options_for};
use crate::measure::values::{self, IndexValue};
use crate::measure::RunArgs;
use dist_array::DistArray;
use mpi::topology::{Communicator, SimpleCommunicator};
use redist::tune::{tune, tune_batch, TuneSettings, Tuned};
use redist::Remap;
use serde_json::json;
use std::io::Write;

/// Runs `redist tune` on `world`: every rank takes part; rank 0 writes to
/// `out`.
///
/// # Errors
///
/// [`CliError::Unsupported`] for windows, permutations, mixed batches,
/// updates or remapping; the library's errors, alike on every rank.
pub fn run(
    args: &ExchangeArgs<'_>,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    check(args.run)?;
    by_element!(args.run.element, run_typed(args, world, out))
}

/// What `redist tune` does not tune (the same verdict on every rank: the
/// arguments are the same).
fn check(r: &RunArgs) -> Result<(), CliError> {
    let refused = [
        (
            r.window.is_some()
                || r.from_window.is_some()
                || r.to_window.is_some()
                || r.to_shape.is_some(),
            "--window, --from-window, --to-window or --to-shape",
        ),
        (r.permutation().is_some(), "--permute or --transpose"),
        (!r.batch_types.is_empty(), "--batch-types"),
        (r.updates(), "--alpha, --beta or --conjugate"),
        (r.remap != Remap::None, "--remap"),
        (!r.baseline.is_empty(), "--baseline"),
    ];
    match refused.iter().find(|(given, _)| *given) {
        Some((_, what)) => Err(CliError::Unsupported {
            what,
            expected: "redist tune measures whole-array redistributions without \
                       transforms or remapping; time the others with redist run"
                .to_string(),
        }),
        None => Ok(()),
    }
}

/// `redist tune` with elements of type `T`: set up the arrays, measure,
/// verify, report on rank 0. Collective.
fn run_typed<T: IndexValue>(
    args: &ExchangeArgs<'_>,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    // The layouts and grids set up as redist run's, no wisdom read.
    let quiet = RunArgs {
        wisdom: None,
        ..args.run.clone()
    };
    let job = job::<T>(&quiet, world)?;
    let to = job.r.target_layout().clone();
    let k = args.run.batch.unwrap_or(1);
    let srcs = (0..k)
        .map(|j| values::source::<T>(&job.grid_a, &job.from, j))
        .collect::<Result<Vec<_>, _>>()?;
    let mut dsts = (0..k)
        .map(|_| values::target::<T>(&job.grid_b, &to, None, false))
        .collect::<Result<Vec<_>, _>>()?;
    let root = world.rank() == 0;
    let settings = TuneSettings {
        warmups: args.warmups,
        reps: args.run.reps,
        wisdom: args.run.wisdom.clone(),
        progress: root && !args.run.json,
    };
    let options = redist::Options {
        wisdom: None,
        ..options_for(args.run)
    };
    let (grid_a, grid_b) = (&job.grid_a, &job.grid_b);
    let tuned = match args.run.batch {
        None => tune(
            grid_a,
            &job.from,
            grid_b,
            &to,
            &options,
            &srcs[0],
            &mut dsts[0],
            &settings,
        )?,
        Some(_) => {
            let s: Vec<&DistArray<T>> = srcs.iter().collect();
            let mut d: Vec<&mut DistArray<T>> = dsts.iter_mut().collect();
            tune_batch(
                grid_a, &job.from, grid_b, &to, &options, &s, &mut d, &settings,
            )?
        }
    };
    let verified = args.run.verify.then(|| {
        let moved = values::Moved {
            shape: job.from.shape(),
            window: None,
            permutation: None,
        };
        let comm = job.grid_a.communicator();
        // Every array checked on every rank, in the same order (each
        // check collective: none skipped).
        let each: Vec<bool> = (dsts.iter().enumerate())
            .map(|(j, d)| values::all_as_expected(comm, d, moved, &|v| v, j))
            .collect();
        each.iter().all(|&ok| ok)
    });
    let report = Report {
        args,
        from: &job.from,
        to: &to,
        ranks: job.ranks,
        tuned: &tuned,
        verified,
    };
    report_and_verdict(world, || write_report(&report, out), verified)
}

/// What rank 0 reports: the arguments, what was measured, the check.
struct Report<'a> {
    args: &'a ExchangeArgs<'a>,
    from: &'a dist_array::Layout,
    to: &'a dist_array::Layout,
    ranks: usize,
    tuned: &'a Tuned,
    verified: Option<bool>,
}

/// Rank 0's report: one JSON line with `--json`, else a table.
fn write_report(report: &Report<'_>, out: &mut dyn Write) -> Result<(), CliError> {
    let Report {
        args,
        from,
        to,
        ranks,
        tuned,
        verified,
    } = *report;
    let ms = |s: f64| s * 1e3;
    let tried: Vec<serde_json::Value> = (tuned.tried.iter())
        .map(|t| json!({"choice": t.choice.to_string(), "ms": ms(t.seconds)}))
        .collect();
    let v = json!({
        "command": "tune",
        "shape": from.shape(),
        "from": from.spec().to_string(),
        "to": to.spec().to_string(),
        "ranks": ranks,
        "type": format!("{:?}", args.run.element).to_lowercase(),
        "reps": args.run.reps,
        "batch": args.run.batch,
        "warmups": args.warmups,
        "auto_choice": tuned.auto.choice.to_string(),
        "auto_ms": ms(tuned.auto.seconds),
        "best_choice": tuned.best.choice.to_string(),
        "best_ms": ms(tuned.best.seconds),
        "tuned_over_auto": tuned.ratio(),
        "tried": tried,
        "executions": tuned.executions,
        "tune_seconds": tuned.seconds,
        "wisdom": args.run.wisdom.as_ref().map(|p| p.display().to_string()),
        "verified": verified,
    });
    if args.run.json {
        writeln!(out, "{v}")?;
        return Ok(());
    }
    write_table(report, out)
}

/// Rank 0's table: `auto`'s choice, every choice's time, the best.
fn write_table(report: &Report<'_>, out: &mut dyn Write) -> Result<(), CliError> {
    let Report {
        args,
        from,
        to,
        ranks,
        tuned,
        verified,
    } = *report;
    let ms = |s: f64| s * 1e3;
    writeln!(
        out,
        "{} {} -> {} on {ranks} ranks{}, {} warm-ups and {} timed executions each",
        from.shape()
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join("x"),
        from.spec(),
        to.spec(),
        (args.run.batch)
            .map(|k| format!(" in batches of {k} arrays"))
            .unwrap_or_default(),
        args.warmups,
        args.run.reps
    )?;
    writeln!(
        out,
        "  auto ({}): {:.3} ms",
        tuned.auto.choice,
        ms(tuned.auto.seconds)
    )?;
    for t in &tuned.tried {
        let mark = if t.choice == tuned.best.choice {
            "  <- best"
        } else {
            ""
        };
        writeln!(out, "  {}: {:.3} ms{mark}", t.choice, ms(t.seconds))?;
    }
    writeln!(
        out,
        "best {} at {:.3} ms, {:.2}x auto; measuring took {} executions, {:.2} s{}",
        tuned.best.choice,
        ms(tuned.best.seconds),
        tuned.ratio(),
        tuned.executions,
        tuned.seconds,
        args.run
            .wisdom
            .as_ref()
            .map(|p| format!("; added to {}", p.display()))
            .unwrap_or_default()
    )?;
    if let Some(ok) = verified {
        writeln!(out, "verified: {ok}")?;
    }
    Ok(())
}
