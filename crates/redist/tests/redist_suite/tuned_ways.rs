//! The tuner past one array: a ghost update's node-direct reads measured
//! against messages and kept, read back by later updates (and a file that
//! does not fit, a warning on every rank); a batch measured whole and its
//! choice run by later redistributions.

use super::wisdom::{as_if_measured_on_more_ranks, remove, shared_path};
use crate::common::{check, code};
use dist_array::{DistArray, Layout};
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, same_everywhere, TestResult};
use procgrid::ProcGrid;
use redist::ghost::{cell_source, Corners, GhostOptions, GhostSpec, GhostUpdate};
use redist::tune::wisdom::{Kept, Wisdom};
use redist::tune::{tune_batch, tune_ghosts, TuneSettings};
use redist::{Options, Redistribution};
use std::path::Path;

/// Settings of a short measurement that adds to `path`.
fn settings(path: &Path) -> TuneSettings {
    TuneSettings {
        warmups: 1,
        reps: 3,
        wisdom: Some(path.to_path_buf()),
        progress: false,
    }
}

/// Whether every padded cell of `a` (2-D) holds the code of the cell it
/// stands for ([`cell_source`]).
fn ghosts_right(a: &DistArray<f64>, spec: &GhostSpec) -> TestResult {
    let padded = a.padded();
    let Some(rank) = a.rank() else {
        return Ok(());
    };
    let (rows, cols) = (padded.shape()[0], padded.shape()[1]);
    for i in 0..rows {
        for j in 0..cols {
            let want = cell_source(a.layout(), spec, rank, &[i, j]).map(|g| code(&g));
            let got = padded[[i, j].as_slice()];
            ensure!(
                want == Some(got),
                "cell {:?} holds {got}, expected {want:?}",
                [i, j]
            );
        }
    }
    Ok(())
}

/// Whether `holds` on some rank. Collective.
fn anywhere(world: &SimpleCommunicator, holds: bool) -> bool {
    let mut any = 0i32;
    world.all_reduce_into(&i32::from(holds), &mut any, SystemOperation::max());
    any == 1
}

/// An array of `p` row blocks with one ghost layer, in shared storage.
fn ghosted(world: &SimpleCommunicator) -> Result<(DistArray<f64>, GhostSpec), String> {
    let p = world.size() as usize;
    let grid = ProcGrid::new(world, &[p, 1]).map_err(|e| e.to_string())?;
    let layout = Layout::parse(&[8 * p + 3, 40], &format!("block,block@{p}x1"))
        .map_err(|e| e.to_string())?;
    let a = DistArray::from_fn(&grid, layout, code).map_err(|e| e.to_string())?;
    let a = a
        .into_shared()
        .with_ghosts(&[1, 1])
        .map_err(|e| e.to_string())?;
    Ok((a, GhostSpec::new(&[1, 1], &[true, true], Corners::Box)))
}

/// Tuned into a wisdom file, a ghost update reads its way back: the
/// kept way runs, with no warning, and the ghosts are right; a file that
/// says messages turns node-direct reads off on every rank; a file from
/// another rank count is a warning, the same on every rank, and the rule
/// decides.
pub(super) fn ghost_ways_are_remembered(world: &SimpleCommunicator) -> TestResult {
    let (mut a, spec) = ghosted(world)?;
    let path = shared_path(world, "ghosts");
    let tuned = tune_ghosts(&mut a, &spec, &GhostOptions::default(), &settings(&path))
        .map_err(|e| e.to_string())?;
    ghosts_right(&a, &spec)?;
    ensure!(tuned.best.seconds <= tuned.default.seconds, "{tuned:?}");
    ensure!(
        same_everywhere(world, &format!("{:?}", tuned.best.node_direct)),
        "one best"
    );
    // Neighbours on the node read each other: both ways timed.
    let shared = world.size() > 1;
    ensure_eq!(tuned.tried.len(), if shared { 2 } else { 1 }, "{tuned:?}");
    ensure_eq!(tuned.default.node_direct, shared, "{tuned:?}");
    let from_file = |file: &Path| GhostOptions {
        node_direct: true,
        wisdom: Some(file.to_path_buf()),
    };
    let mut kept =
        GhostUpdate::with_options(&a, &spec, from_file(&path)).map_err(|e| e.to_string())?;
    ensure!(kept.warnings().is_empty(), "{:?}", kept.warnings());
    ensure_eq!(
        anywhere(world, kept.reads_shared()),
        tuned.best.node_direct && shared,
        "the kept way runs"
    );
    a.padded_mut().fill(-1.0);
    let (plain, _) = ghosted(world)?;
    a.local_mut().assign(&plain.local());
    kept.update(&mut a).map_err(|e| e.to_string())?;
    ghosts_right(&a, &spec)?;
    // A file that found messages faster: no reads, on any rank.
    if world.rank() == 0 {
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let mut w = Wisdom::parse(&text)?;
        for e in &mut w.entries {
            e.choice = Kept::Ghost { node_direct: false };
        }
        std::fs::write(&path, w.render()).map_err(|e| e.to_string())?;
    }
    world.barrier();
    let mut messages =
        GhostUpdate::with_options(&a, &spec, from_file(&path)).map_err(|e| e.to_string())?;
    ensure!(
        !anywhere(world, messages.reads_shared()),
        "messages, as the file says"
    );
    messages.update(&mut a).map_err(|e| e.to_string())?;
    ensure_eq!(messages.copies().read, 0, "no reads");
    ghosts_right(&a, &spec)?;
    // Measured on another rank count: the rule, and one warning.
    as_if_measured_on_more_ranks(world, &path)?;
    let unfit =
        GhostUpdate::with_options(&a, &spec, from_file(&path)).map_err(|e| e.to_string())?;
    let warnings = unfit.warnings().join("\n");
    ensure!(warnings.contains("ranks"), "{warnings:?}");
    ensure!(
        same_everywhere(world, &warnings),
        "one warning on every rank"
    );
    ensure_eq!(
        anywhere(world, unfit.reads_shared()),
        shared,
        "the rule decides"
    );
    remove(world, &path);
    Ok(())
}

/// A batch measured whole: every array right, the best no slower than
/// `auto`, and the choice kept for the redistribution, which later runs
/// it with no trial of routes.
pub(super) fn batches_are_tuned_whole(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let grid = ProcGrid::new(world, &[p, 1]).map_err(|e| e.to_string())?;
    let from = Layout::parse(&[96, 70], &format!("block,*@{p}x1")).map_err(|e| e.to_string())?;
    let to = Layout::parse(&[96, 70], &format!("cyclic(3),cyclic(16)@{p}x1"))
        .map_err(|e| e.to_string())?;
    let value = |k: usize| move |g: &[usize]| code(g) + 1e4 * k as f64;
    let a: Vec<DistArray<f64>> = (0..3)
        .map(|k| DistArray::from_fn(&grid, from.clone(), value(k)))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let mut b: Vec<DistArray<f64>> = (0..3)
        .map(|_| DistArray::zeros(&grid, to.clone()))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let path = shared_path(world, "batches");
    let srcs: Vec<&DistArray<f64>> = a.iter().collect();
    let mut dsts: Vec<&mut DistArray<f64>> = b.iter_mut().collect();
    let options = Options::default();
    let tuned = tune_batch(
        &grid,
        &from,
        &grid,
        &to,
        &options,
        &srcs,
        &mut dsts,
        &settings(&path),
    )
    .map_err(|e| e.to_string())?;
    for (k, bk) in b.iter().enumerate() {
        check(bk, value(k))?;
    }
    ensure!(tuned.best.seconds <= tuned.auto.seconds, "{tuned:?}");
    ensure!(tuned.tried.len() >= 4, "{tuned:?}");
    let with_file = Options {
        wisdom: Some(path.clone()),
        ..Options::default()
    };
    let r = Redistribution::<f64>::new(&grid, &from, &grid, &to, with_file)
        .map_err(|e| e.to_string())?;
    ensure_eq!(
        r.measured(),
        Some(tuned.best.choice),
        "the batch's choice runs"
    );
    ensure!(!r.tries_routes(), "no trial of routes");
    remove(world, &path);
    Ok(())
}
