//! The suite's routes: whether messages are described to MPI by derived
//! datatypes or packed — the communicator's measurement, and the trial of
//! both ways on a redistribution's first executions.

use crate::common::{check, code};
use dist_array::{DistArray, Layout};
use mpi::collective::SystemOperation;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, TestResult};
use procgrid::ProcGrid;
use redist::{MinRun, Options, Redistribution, Strategy};

/// The measurement of whether datatypes pay gives every rank the same
/// verdict, once per communicator, and redistributions built after it
/// (which take the verdict under `MinRun::Auto`) move the right values.
pub(super) fn datatype_verdict_agrees(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let verdict = redist::exec::datatypes_pay(&grid);
    let (mut lowest, mut highest) = (0u8, 0u8);
    let mine = u8::from(verdict);
    procgrid::waits::all_reduce_into(world, &mine, &mut lowest, SystemOperation::min());
    procgrid::waits::all_reduce_into(world, &mine, &mut highest, SystemOperation::max());
    ensure_eq!((lowest, highest), (mine, mine), "one verdict on every rank");
    ensure_eq!(redist::exec::datatypes_pay(&grid), verdict, "kept");
    let from = Layout::parse(&[64, 40], &format!("block,*@{n}x1")).unwrap();
    let to = Layout::parse(&[64, 40], &format!("cyclic(8),cyclic(16)@{n}x1")).unwrap();
    let a = DistArray::from_fn(&grid, from.clone(), code).map_err(|e| e.to_string())?;
    let options = Options {
        node_direct: false,
        ..Options::default()
    };
    let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, options.clone())
        .map_err(|e| e.to_string())?;
    check(&r.execute(&a).map_err(|e| e.to_string())?, code)
}

/// An `async` redistribution under `MinRun::Auto` whose messages could go
/// packed or typed (runs of 512 bytes, 1 MiB or more a rank) tries both:
/// executions 2 and 3 (and 6 and 7, where neither way is clearly faster)
/// route this rank's messages the other way, and after the fifth (or the
/// ninth) the trial is over on every rank, one way kept;
/// every execution moves the right values. With datatypes decided by the
/// caller (`MinRun::Never`) nothing is tried.
pub(super) fn routes_are_tried_and_the_faster_kept(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let me = world.rank();
    let rows = ProcGrid::new(world, &[1, n]).map_err(|e| e.to_string())?;
    let cols = ProcGrid::builder(&[n, 1])
        .build_sharing(&rows)
        .map_err(|e| e.to_string())?;
    let shape = [1024, 1024];
    let from = Layout::parse(&shape, &format!("cyclic(64),cyclic(64)@1x{n}")).unwrap();
    let to = Layout::parse(&shape, &format!("cyclic(64),cyclic(64)@{n}x1")).unwrap();
    let a = DistArray::from_fn(&rows, from.clone(), code).map_err(|e| e.to_string())?;
    for min_run in [MinRun::Auto, MinRun::Never] {
        let options = Options {
            strategy: Strategy::Async,
            node_direct: false,
            datatype_min_run: min_run,
            ..Options::default()
        };
        let mut r = Redistribution::<f64>::new(&rows, &from, &cols, &to, options.clone())
            .map_err(|e| e.to_string())?;
        let tried = n > 1 && min_run == MinRun::Auto;
        ensure_eq!(
            r.trying_routes(),
            tried,
            "{min_run:?}: trying before the first execution"
        );
        // After each execution: this rank's typed sends, and whether the
        // trial goes on.
        let mut after = Vec::new();
        for e in 0..10 {
            let b = r
                .execute(&a)
                .map_err(|err| format!("{min_run:?}, execution {e}: {err}"))?;
            check(&b, code).map_err(|err| format!("{min_run:?}, execution {e}: {err}"))?;
            let typed = r
                .typed_messages()
                .ok_or("async routes its messages one by one")?;
            after.push((typed, r.trying_routes()));
        }
        let typed: Vec<(usize, usize)> = after.iter().map(|a| a.0).collect();
        let trying: Vec<bool> = after.iter().map(|a| a.1).collect();
        if !tried {
            ensure!(trying.iter().all(|&t| !t), "{min_run:?}: trying {trying:?}");
            ensure!(
                typed.iter().all(|&t| t == typed[0]),
                "{min_run:?}: routes changed: {typed:?}"
            );
            continue;
        }
        // One choice packs every message; the other describes some of
        // them by datatypes on some rank (runs of 512 bytes).
        let (first, other) = (typed[0], typed[1]);
        ensure!(
            first == (0, 0) || other == (0, 0),
            "rank {me}: typed (sends, receives) after each execution {typed:?}: neither way packs"
        );
        let mine = u64::from(first != other);
        let mut differ = 0u64;
        procgrid::waits::all_reduce_into(world, &mine, &mut differ, SystemOperation::max());
        ensure_eq!(
            differ,
            1,
            "no rank routes its messages differently the other way"
        );
        // Tried in executions 1-4 (one way clearly faster) or 1-8, in the
        // order first, other, other, first; the same routes from then on.
        let tries = trying.iter().take_while(|&&t| t).count() + 1;
        let kept = typed[9];
        let order = |e: usize| if matches!(e % 4, 1 | 2) { other } else { first };
        let ok = (tries == 5 || tries == 9)
            && trying[tries - 1..].iter().all(|&t| !t)
            && (0..tries - 1).all(|e| typed[e] == order(e))
            && typed[tries - 1..].iter().all(|&t| t == kept)
            && (kept == first || kept == other);
        ensure!(
            ok,
            "rank {me}: typed {typed:?}, trying {trying:?} after each execution"
        );
        // Every rank whose two ways differ keeps the same one: 1 the
        // first, 2 the other (ranks routing alike either way tell nothing).
        let way = match (first == other, kept == first) {
            (true, _) => None,
            (false, true) => Some(1u8),
            (false, false) => Some(2u8),
        };
        let (mut lowest, mut highest) = (0u8, 0u8);
        let min = SystemOperation::min();
        procgrid::waits::all_reduce_into(world, &way.unwrap_or(u8::MAX), &mut lowest, min);
        let max = SystemOperation::max();
        procgrid::waits::all_reduce_into(world, &way.unwrap_or(0), &mut highest, max);
        ensure_eq!(lowest, highest, "one choice on every rank");
    }
    Ok(())
}
