//! Redistribution on many ranks: the suite `many ranks` of `mpi_redist`,
//! launched with 32 and 64 ranks (more than this machine's cores; waits
//! yield), random layout pairs of every strategy verified element by
//! element, and the small redistribution whose set-up and execution once
//! grew with the rank count.

use dist_array::DistArray;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, MpiTest, Suite, TestResult};
use procgrid::ProcGrid;
use redist::{Options, Redistribution, Remap, Strategy};

use crate::common::{check, code, random_case, Lcg};

/// Random layout pairs on grids of every shape the rank count allows: each
/// executed and checked against the value of every global index, on
/// every strategy and with and without remapping.
fn random_pairs(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(53);
    let strategies = [
        Strategy::Auto,
        Strategy::Alltoallv,
        Strategy::Scheduled,
        Strategy::Async,
    ];
    for case in 0..8 {
        let ndim = case % 3 + 1;
        let max = [400, 40, 12][ndim - 1];
        let (grid_a, from, grid_b, to) = random_case(&mut rng, world, ndim, max)?;
        let options = Options {
            remap: [Remap::None, Remap::Optimal][rng.below(2)],
            strategy: strategies[case % 4],
            ..Options::default()
        };
        let mut r = Redistribution::<f64>::new(&grid_a, &from, &grid_b, &to, options.clone())
            .map_err(|e| format!("{from} -> {to}: {e}"))?;
        let mut a = DistArray::from_fn(&grid_a, from.clone(), code).map_err(|e| e.to_string())?;
        if case % 2 == 0 {
            a = a.into_shared();
        }
        let b = r
            .execute(&a)
            .map_err(|e| format!("{from} -> {to} ({options:?}): {e}"))?;
        check(&b, code).map_err(|e| format!("{from} -> {to} ({:?}): {e}", r.strategy()))?;
        ensure!(r.strategy() != Strategy::Auto, "auto chose itself");
    }
    Ok(())
}

/// 200 elements, BLOCK to CYCLIC(3) on every rank: each rank talks to a
/// few others, and nothing about it may grow with the rank count but what
/// MPI needs.
fn a_small_redistribution(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n]).map_err(|e| e.to_string())?;
    let from =
        dist_array::Layout::parse(&[200], &format!("block@{n}")).map_err(|e| e.to_string())?;
    let to =
        dist_array::Layout::parse(&[200], &format!("cyclic(3)@{n}")).map_err(|e| e.to_string())?;
    let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, Options::default())
        .map_err(|e| e.to_string())?;
    let plan = r.rank_plan();
    ensure!(
        plan.sends().len() <= 4 && plan.recvs().len() <= 4,
        "{} sends",
        plan.sends().len()
    );
    let a = DistArray::from_fn(&grid, from, code).map_err(|e| e.to_string())?;
    let mut b = DistArray::zeros(&grid, to).map_err(|e| e.to_string())?;
    for _ in 0..3 {
        r.execute_into(&a, &mut b).map_err(|e| e.to_string())?;
    }
    check(&b, code)?;
    let (kept, moved, _) = r.totals();
    ensure_eq!(kept + moved, 200);
    Ok(())
}

/// The suite: both bodies at 32 and 64 ranks.
pub fn suite() -> Suite {
    Suite::new(
        "many ranks",
        &[
            MpiTest::new("random_pairs", random_pairs),
            MpiTest::new("a_small_redistribution", a_small_redistribution),
        ],
    )
    .ranks(&[32, 64])
}
