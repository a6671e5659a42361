//! The suite's grid choice: a job's candidate grids timed on whole steps,
//! the fastest chosen on every rank and kept in a wisdom file, which a
//! later job reads instead of measuring; set-ups that fail refuse a grid,
//! steps that fail end the choosing on every rank, and wisdom that does
//! not fit is a warning.

use super::wisdom::{as_if_measured_on_more_ranks, remove, shared_path};
use crate::common::{check, code};
use dist_array::{DistArray, Layout};
use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, same_everywhere, TestResult};
use procgrid::ProcGrid;
use redist::tune::wisdom::Wisdom;
use redist::tune::{choose_grid, grids, GridChoice, GridSettings, Outcome};
use redist::{Options, RedistError, Redistribution};
use std::cell::Cell;
use std::path::Path;
use std::time::Duration;

/// One warm-up and three timed steps, the wisdom file at `path`.
fn settings(path: &Path) -> GridSettings {
    GridSettings {
        warmups: 1,
        reps: 3,
        wisdom: Some(path.to_path_buf()),
        progress: false,
    }
}

/// The job: a 37 × 29 array in blocks on `grid`, redistributed to whole
/// rows cyclically over every rank and checked, each step; `slow` adds a
/// pause to each step (to make the winner known).
fn job(
    world: &SimpleCommunicator,
    grid: &[usize],
    slow: Duration,
) -> Result<impl FnMut() -> Result<(), RedistError>, RedistError> {
    let p = world.size() as usize;
    let blocks_grid = ProcGrid::builder(grid).subset(true).build(world)?;
    let rows_grid = ProcGrid::builder(&[p, 1]).build_sharing(&blocks_grid)?;
    let blocks = Layout::parse(&[37, 29], &format!("block,block@{}x{}", grid[0], grid[1]))?;
    let rows = Layout::parse(&[37, 29], &format!("cyclic(3),*@{p}x1"))?;
    let a = DistArray::from_fn(&blocks_grid, blocks.clone(), code)?;
    let mut r =
        Redistribution::<f64>::new(&blocks_grid, &blocks, &rows_grid, &rows, Options::default())?;
    Ok(move || {
        let b = r.execute(&a)?;
        check(&b, code).map_err(RedistError::Internal)?;
        std::thread::sleep(slow);
        Ok(())
    })
}

/// The grids of every rank's choice, as one text (the same everywhere or
/// not).
fn agreed(world: &SimpleCommunicator, c: &GridChoice) -> bool {
    let outcomes: Vec<String> = c
        .tried
        .iter()
        .map(|t| match &t.outcome {
            Outcome::Timed(_) => format!("{:?} timed", t.grid),
            Outcome::Refused(_) => format!("{:?} refused", t.grid),
        })
        .collect();
    same_everywhere(
        world,
        &format!("{:?} {outcomes:?} {:?}", c.grid, c.warnings),
    )
}

/// The fastest grid is chosen on every rank — here the last candidate,
/// which alone has no pause — and kept: a second choosing reads it from
/// the wisdom file and sets nothing up.
pub(super) fn grids_are_chosen_by_whole_steps(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let candidates = grids(p, 2);
    let last = candidates.last().cloned().ok_or("no candidates")?;
    let path = shared_path(world, "chosen");
    let setups = Cell::new(0);
    let chosen = choose_grid(world, "suite job", &candidates, &settings(&path), |g| {
        setups.set(setups.get() + 1);
        let slow = if *g == last[..] { 0 } else { 30 };
        job(world, g, Duration::from_millis(slow))
    })
    .map_err(|e| e.to_string())?;
    ensure_eq!(chosen.grid, last, "the grid without a pause");
    ensure!(agreed(world, &chosen), "one choice on every rank");
    ensure_eq!(setups.get(), candidates.len());
    ensure_eq!(chosen.tried.len(), candidates.len());
    ensure_eq!(chosen.steps, candidates.len() * 4);
    ensure!(!chosen.recalled && chosen.warnings.is_empty(), "{chosen:?}");
    if candidates.len() > 1 {
        ensure!(chosen.ratio() < 0.9, "{chosen:?}");
    }
    if world.rank() == 0 {
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let grid = redist::tune::grids::text(&last);
        ensure!(text.contains(&format!("\tgrid {grid}\t")), "{text}");
        ensure!(text.contains("job suite job"), "{text}");
    }
    // Read back: nothing set up, nothing run.
    setups.set(0);
    let again = choose_grid(world, "suite job", &candidates, &settings(&path), |g| {
        setups.set(setups.get() + 1);
        job(world, g, Duration::ZERO)
    })
    .map_err(|e| e.to_string())?;
    ensure!(again.recalled, "{again:?}");
    ensure_eq!(again.grid, last);
    ensure_eq!((setups.get(), again.steps), (0, 0));
    ensure!(again.warnings.is_empty(), "{:?}", again.warnings);
    ensure!(agreed(world, &again), "one recalled choice");
    remove(world, &path);
    Ok(())
}

/// A set-up that fails on rank 0 alone refuses that grid on every rank;
/// a step that fails on the last rank ends the choosing there with its
/// error and with `OtherRank` on the others; ranks naming different jobs
/// are told so. Nothing hangs.
pub(super) fn grid_failures_are_agreed(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let candidates = grids(p, 2);
    let none = Path::new("");
    let me = world.rank() as usize;
    let refusing = choose_grid(world, "refusing", &candidates, &settings(none), |g| {
        // After the set-up's collective calls, as a set-up must fail.
        let step = job(world, g, Duration::ZERO)?;
        if me == 0 && *g == candidates[0][..] {
            return Err(RedistError::Internal("rank 0 cannot".to_string()));
        }
        Ok(step)
    });
    match refusing {
        // With one candidate, none can be set up.
        Err(RedistError::InvalidArgument { what, .. }) if candidates.len() == 1 => {
            ensure_eq!(what, "candidate grids");
        }
        Ok(c) => {
            ensure!(
                matches!(c.tried[0].outcome, Outcome::Refused(_)),
                "{:?}",
                c.tried[0]
            );
            ensure!(c.grid != candidates[0], "a refused grid is not chosen");
            ensure!(agreed(world, &c), "one verdict");
        }
        Err(e) => return Err(format!("refusing: {e}")),
    }
    let failing = choose_grid(world, "failing", &candidates, &settings(none), |g| {
        let mut step = job(world, g, Duration::ZERO)?;
        let mut count = 0;
        Ok(move || {
            count += 1;
            step()?;
            if me + 1 == p && count == 2 {
                return Err(RedistError::Internal("the last rank's second step".into()));
            }
            Ok(())
        })
    });
    match failing {
        Err(RedistError::Internal(why)) if me + 1 == p => {
            ensure!(why.contains("second step"), "{why}")
        }
        Err(RedistError::OtherRank { rank, .. }) if me + 1 < p => ensure_eq!(rank, p - 1),
        other => return Err(format!("failing: {other:?}")),
    }
    if p > 1 {
        let name = if me == 0 { "one name" } else { "another" };
        match choose_grid(world, name, &candidates, &settings(none), |g| {
            job(world, g, Duration::ZERO)
        }) {
            Err(RedistError::Disagreement { what, .. }) => ensure_eq!(what, "choose_grid"),
            other => return Err(format!("different names: {other:?}")),
        }
    }
    Ok(())
}

/// Wisdom that does not fit — measured on another rank count, corrupt, a
/// folder — gives the same warning on every rank and a measured choice;
/// the file measured elsewhere gains this job's entry, the others are left
/// alone.
pub(super) fn unfit_grid_wisdom_is_a_warning(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let candidates = grids(p, 2);
    let path = shared_path(world, "elsewhere");
    let measure = |file: &Path| {
        choose_grid(world, "unfit job", &candidates, &settings(file), |g| {
            job(world, g, Duration::ZERO)
        })
        .map_err(|e| format!("{}: {e}", file.display()))
    };
    measure(&path)?;
    as_if_measured_on_more_ranks(world, &path)?;
    let corrupt = shared_path(world, "corrupt");
    if world.rank() == 0 {
        std::fs::write(&corrupt, "not wisdom\n").map_err(|e| e.to_string())?;
    }
    world.barrier();
    let cases = [
        (path.clone(), "ranks", 2),
        (corrupt.clone(), "not a wisdom file", 0),
        (std::env::temp_dir(), "cannot read it", 0),
    ];
    for (file, expected, entries) in cases {
        let c = measure(&file)?;
        ensure!(!c.recalled, "{}: {c:?}", file.display());
        let warnings = c.warnings.join("\n");
        ensure!(
            warnings.contains(expected),
            "{}: {warnings}",
            file.display()
        );
        ensure!(agreed(world, &c), "{}: one warning", file.display());
        if entries > 0 && world.rank() == 0 {
            let text = std::fs::read_to_string(&file).map_err(|e| e.to_string())?;
            ensure_eq!(Wisdom::parse(&text)?.entries.len(), entries);
        }
    }
    if world.rank() == 0 {
        let kept = std::fs::read_to_string(&corrupt).map_err(|e| e.to_string())?;
        ensure_eq!(kept, "not wisdom\n", "a foreign file is left alone");
    }
    remove(world, &path);
    remove(world, &corrupt);
    Ok(())
}
