//! The suite's wisdom: a measured choice kept in a file and run by later
//! redistributions without a probe or a trial of routes; files that do not
//! fit (another rank count, corrupt, unreadable, missing) leave `auto`'s
//! rules to decide, with the same warning on every rank and no error.

use crate::common::{check, code};
use dist_array::{DistArray, Layout};
use mpi::collective::{CommunicatorCollectives, Root};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, same_everywhere, TestResult};
use procgrid::ProcGrid;
use redist::tune::wisdom::Wisdom;
use redist::tune::{tune, TuneSettings, Tuned, WISDOM_VARIABLE};
use redist::{Options, RedistError, Redistribution, Strategy};
use std::path::{Path, PathBuf};

/// A path in a temporary folder every rank of the node sees, the same on
/// every rank (rank 0's, broadcast), with `name` in it.
pub(super) fn shared_path(world: &SimpleCommunicator, name: &str) -> PathBuf {
    let mut id = u64::from(std::process::id()) << 16 | (name.len() as u64);
    world.process_at_rank(0).broadcast_into(&mut id);
    PathBuf::from(format!("/dev/shm/ndcyclic-wisdom-{id:x}-{name}"))
}

/// Tunes the redistribution of `a` into `b` (their layouts and grids),
/// `reps` timed executions a choice after one warm-up, adding the fastest
/// to the wisdom file at `path`. Collective.
fn tune_into(
    a: &DistArray<f64>,
    b: &mut DistArray<f64>,
    reps: usize,
    path: &Path,
) -> Result<Tuned, RedistError> {
    let settings = TuneSettings {
        warmups: 1,
        reps,
        wisdom: Some(path.to_path_buf()),
        progress: false,
    };
    let (from, to) = (a.layout().clone(), b.layout().clone());
    let grid_b = b.grid().clone();
    tune(
        a.grid(),
        &from,
        &grid_b,
        &to,
        &Options::default(),
        a,
        b,
        &settings,
    )
}

/// Rewrites the wisdom file at `path` (rank 0) as if its entries had been
/// measured on one rank more. Collective (a barrier).
pub(super) fn as_if_measured_on_more_ranks(world: &SimpleCommunicator, path: &Path) -> TestResult {
    if world.rank() == 0 {
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        let mut w = Wisdom::parse(&text)?;
        for e in &mut w.entries {
            e.key.machine.ranks += 1;
        }
        std::fs::write(path, w.render()).map_err(|e| e.to_string())?;
    }
    world.barrier();
    Ok(())
}

/// Removes `path` on rank 0 once every rank is done with it.
pub(super) fn remove(world: &SimpleCommunicator, path: &Path) {
    world.barrier();
    if world.rank() == 0 {
        let _ = std::fs::remove_file(path);
        let mut lock = path.as_os_str().to_owned();
        lock.push(".lock");
        let _ = std::fs::remove_file(PathBuf::from(lock));
    }
}

/// The case of this suite: big enough (256 KiB a rank and more, runs of
/// 512 bytes) that `auto` alone would probe datatypes and try routes.
fn case(world: &SimpleCommunicator) -> Result<(ProcGrid, Layout, Layout), String> {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let from = Layout::parse(&[512, 256], &format!("block,*@{n}x1")).map_err(|e| e.to_string())?;
    let to = Layout::parse(&[512, 256], &format!("cyclic(8),cyclic(64)@{n}x1"))
        .map_err(|e| e.to_string())?;
    Ok((grid, from, to))
}

/// Tuned once into a wisdom file, the case is run from it: the choice the
/// tuner kept, no trial of routes, no warning, the right values — also
/// when the environment names the file; a second case merges into it.
pub(super) fn tuned_choices_are_remembered(world: &SimpleCommunicator) -> TestResult {
    let (grid, from, to) = case(world)?;
    let path = shared_path(world, "remembered");
    let a = DistArray::from_fn(&grid, from.clone(), code).map_err(|e| e.to_string())?;
    let mut b = DistArray::zeros(&grid, to.clone()).map_err(|e| e.to_string())?;
    let tuned = tune_into(&a, &mut b, 2, &path).map_err(|e| e.to_string())?;
    check(&b, code)?;
    ensure!(tuned.best.seconds <= tuned.auto.seconds, "{tuned:?}");
    ensure!(tuned.tried.len() >= 2, "{tuned:?}");
    ensure!(
        same_everywhere(world, &tuned.best.choice.to_string()),
        "one best"
    );
    let with_file = Options {
        wisdom: Some(path.clone()),
        ..Options::default()
    };
    let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, with_file)
        .map_err(|e| e.to_string())?;
    ensure_eq!(
        r.measured(),
        Some(tuned.best.choice),
        "the kept choice runs"
    );
    ensure!(!r.tries_routes(), "no trial of routes");
    ensure!(r.warnings().is_empty(), "{:?}", r.warnings());
    ensure_eq!(r.strategy(), tuned.best.choice.strategy);
    for _ in 0..3 {
        check(&r.execute(&a).map_err(|e| e.to_string())?, code)?;
    }
    // The environment's file, when the options name none.
    std::env::set_var(WISDOM_VARIABLE, &path);
    let from_env = Redistribution::<f64>::new(&grid, &from, &grid, &to, Options::default());
    std::env::remove_var(WISDOM_VARIABLE);
    let from_env = from_env.map_err(|e| e.to_string())?;
    ensure_eq!(
        from_env.measured(),
        Some(tuned.best.choice),
        "NDCYCLIC_WISDOM"
    );
    // Another case merges into the file.
    let to2 = Layout::parse(&[512, 256], &format!("*,block@1x{}", world.size()))
        .map_err(|e| e.to_string())?;
    let grid2 = ProcGrid::builder(to2.grid_extents())
        .build_sharing(&grid)
        .map_err(|e| e.to_string())?;
    let mut b2 = DistArray::zeros(&grid2, to2.clone()).map_err(|e| e.to_string())?;
    tune_into(&a, &mut b2, 2, &path).map_err(|e| e.to_string())?;
    let entries = std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|t| Wisdom::parse(&t))?
        .entries
        .len();
    ensure_eq!(entries, 2, "two cases in one file");
    remove(world, &path);
    Ok(())
}

/// A wisdom file measured on another rank count, corrupt, unreadable (a
/// folder) or missing: `auto`'s rules decide (a trial of routes where they
/// would), the values are right, and every rank has the same one warning.
pub(super) fn unfit_wisdom_is_a_warning(world: &SimpleCommunicator) -> TestResult {
    let (grid, from, to) = case(world)?;
    let a = DistArray::from_fn(&grid, from.clone(), code).map_err(|e| e.to_string())?;
    let path = shared_path(world, "unfit");
    let mut b = DistArray::zeros(&grid, to.clone()).map_err(|e| e.to_string())?;
    tune_into(&a, &mut b, 1, &path).map_err(|e| e.to_string())?;
    as_if_measured_on_more_ranks(world, &path)?;
    let folder = std::env::temp_dir();
    let corrupt = shared_path(world, "corrupt");
    if world.rank() == 0 {
        std::fs::write(&corrupt, "ndcyclic-wisdom 1\tcase\nnot an entry\n")
            .map_err(|e| e.to_string())?;
    }
    world.barrier();
    let missing = shared_path(world, "missing");
    let cases = [
        (path.clone(), "ranks"),
        (corrupt.clone(), "not a wisdom file"),
        (folder, "cannot read it"),
        (missing, "cannot read it"),
    ];
    for (file, expected) in cases {
        let options = Options {
            wisdom: Some(file.clone()),
            ..Options::default()
        };
        let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, options)
            .map_err(|e| format!("{}: {e}", file.display()))?;
        ensure_eq!(r.measured(), None, "{}", file.display());
        let warnings = r.warnings().join("\n");
        ensure!(
            warnings.contains(expected),
            "{}: {warnings:?}",
            file.display()
        );
        ensure!(
            same_everywhere(world, &warnings),
            "one warning on every rank"
        );
        check(&r.execute(&a).map_err(|e| e.to_string())?, code)?;
    }
    remove(world, &path);
    remove(world, &corrupt);
    Ok(())
}

/// Writing into a file that holds something else than wisdom is refused
/// on every rank, and leaves the file as it was; a strategy named by the
/// caller wins over what a wisdom file holds.
pub(super) fn wisdom_writes_are_careful(world: &SimpleCommunicator) -> TestResult {
    let (grid, from, to) = case(world)?;
    let a = DistArray::from_fn(&grid, from.clone(), code).map_err(|e| e.to_string())?;
    let mut b = DistArray::zeros(&grid, to.clone()).map_err(|e| e.to_string())?;
    let other = shared_path(world, "other");
    if world.rank() == 0 {
        std::fs::write(&other, "precious data\n").map_err(|e| e.to_string())?;
    }
    world.barrier();
    match tune_into(&a, &mut b, 1, &other) {
        Err(RedistError::Wisdom { reason, .. }) => {
            ensure!(reason.contains("not a wisdom file"), "{reason}");
            ensure!(same_everywhere(world, &reason), "one error on every rank");
        }
        other => return Err(format!("expected a Wisdom error, got {other:?}")),
    }
    if world.rank() == 0 {
        let kept = std::fs::read_to_string(&other).map_err(|e| e.to_string())?;
        ensure_eq!(kept, "precious data\n");
    }
    // A strategy named wins: the file is not even read.
    let options = Options {
        strategy: Strategy::Scheduled,
        wisdom: Some(other.clone()),
        ..Options::default()
    };
    let mut r =
        Redistribution::<f64>::new(&grid, &from, &grid, &to, options).map_err(|e| e.to_string())?;
    ensure!(r.warnings().is_empty() && r.measured().is_none());
    ensure_eq!(r.strategy(), Strategy::Scheduled);
    check(&r.execute(&a).map_err(|e| e.to_string())?, code)?;
    remove(world, &other);
    Ok(())
}
