//! The redistribution suite under MPI: random layout pairs over every
//! strategy and remapping, shared sources, element types, grids of
//! different sizes, windows and the error paths. `mpi_redist` runs it on
//! one node with 1 to 8 ranks and across emulated nodes ([`across_nodes`]),
//! next to the suite of [`many_ranks`].
#![allow(
    clippy::cast_possible_truncation,
    reason = "test values are small or wrap on purpose"
)]

use dist_array::{Complex, Dist, DistArray, Element, Layout, LayoutSpec};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, MpiTest, TestResult};
use procgrid::{balanced_extents, ProcGrid};
use redist::{MinRun, NodeCopies, Options, Redistribution, Remap, Strategy, Streaming, Window};

use crate::common::{check, code, random_case, random_extents, random_layout, Lcg};

pub mod across_nodes;
mod ghosts;
mod grid_choice;
pub mod many_ranks;
mod routes;
mod transforms;
mod tuned_ways;
mod wisdom;
use routes::{datatype_verdict_agrees, routes_are_tried_and_the_faster_kept};
use transforms::{
    batch_ways, batches, mixed_batches, node_direct_batches, permuted_pairs, updated_pairs,
};

const STRATEGIES: [Strategy; 5] = [
    Strategy::Alltoallv,
    Strategy::Scheduled,
    Strategy::Async,
    Strategy::Combined,
    Strategy::Auto,
];
const REMAPS: [Remap; 2] = [Remap::None, Remap::Optimal];

fn random_pairs(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(23);
    for case in 0..12 {
        let ndim = case % 4 + 1;
        let max = [40, 13, 7, 5][ndim - 1];
        let (grid_a, from, grid_b, to) = random_case(&mut rng, world, ndim, max)?;
        let options = Options {
            remap: REMAPS[rng.below(2)],
            strategy: STRATEGIES[rng.below(STRATEGIES.len())],
            streaming: [Streaming::Never, Streaming::Above(0)][rng.below(2)],
            ..Options::default()
        };
        let mut r = Redistribution::<f64>::new(&grid_a, &from, &grid_b, &to, options.clone())
            .map_err(|e| e.to_string())?;
        let mut a = DistArray::from_fn(&grid_a, from.clone(), code).map_err(|e| e.to_string())?;
        if rng.below(2) == 0 {
            // Shared source storage: ranks of one node read it directly.
            a = a.into_shared();
        }
        let b = r
            .execute(&a)
            .map_err(|e| format!("{from} -> {to} ({options:?}): {e}"))?;
        ensure_eq!(b.layout(), r.target_layout());
        check(&b, code)
            .map_err(|e| format!("{from} -> {to} ({options:?}, {}): {e}", r.strategy()))?;
        // And back: bit for bit the original.
        let mut back = Redistribution::<f64>::new(
            &grid_b,
            b.layout(),
            &grid_a,
            &from,
            Options {
                remap: Remap::None,
                ..options.clone()
            },
        )
        .map_err(|e| e.to_string())?;
        let b = if rng.below(2) == 0 {
            b.into_shared()
        } else {
            b
        };
        let c = back.execute(&b).map_err(|e| e.to_string())?;
        ensure!(
            c.local() == a.local(),
            "round trip differs for {from} -> {to}"
        );
    }
    Ok(())
}

fn strategies_agree(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let mut rng = Lcg(29);
    for case in 0..6 {
        let ndim = case % 3 + 1;
        let shape: Vec<usize> = (0..ndim)
            .map(|_| rng.below([30, 11, 6][ndim - 1]) + 2)
            .collect();
        let grid = ProcGrid::new(world, &balanced_extents(n, &vec![0; ndim]).unwrap())
            .map_err(|e| e.to_string())?;
        let from = random_layout(&mut rng, &shape, grid.extents());
        let to = random_layout(&mut rng, &shape, grid.extents());
        let a = DistArray::from_fn(&grid, from.clone(), |g| Complex::new(code(g), -code(g)))
            .map_err(|e| e.to_string())?;
        let shared = a.clone().into_shared();
        let mut results = vec![];
        for strategy in STRATEGIES {
            // Packed messages, split messages, messages described by derived
            // datatypes, and messages sent run by run from source storage.
            for (k, (max_message_elements, datatype_min_run, direct_min_run)) in [
                (i32::MAX as usize, MinRun::Never, MinRun::Never),
                (3, MinRun::Never, MinRun::Never),
                (i32::MAX as usize, MinRun::Elements(1), MinRun::Never),
                (i32::MAX as usize, MinRun::Auto, MinRun::Never),
                (i32::MAX as usize, MinRun::Never, MinRun::Elements(1)),
                (4, MinRun::Never, MinRun::Elements(2)),
            ]
            .into_iter()
            .enumerate()
            {
                for node_direct in [true, false] {
                    // Streamed and ordinary stores, each with and without
                    // node-direct copies.
                    let streaming = if (k + usize::from(node_direct)) % 2 == 0 {
                        Streaming::Above(0)
                    } else {
                        Streaming::Never
                    };
                    let options = Options {
                        remap: Remap::None,
                        strategy,
                        max_message_elements,
                        datatype_min_run,
                        direct_min_run,
                        node_direct,
                        streaming,
                        // Built for updates, an execution still overwrites.
                        updates: k % 3 == 2,
                        ..Options::default()
                    };
                    let mut r =
                        Redistribution::<Complex<f64>>::new(&grid, &from, &grid, &to, options)
                            .map_err(|e| e.to_string())?;
                    let mut b = DistArray::zeros(&grid, r.target_layout().clone())
                        .map_err(|e| e.to_string())?;
                    r.execute_into(&a, &mut b).map_err(|e| e.to_string())?;
                    results.push(b.local().to_owned());
                    r.execute_into(&shared, &mut b).map_err(|e| e.to_string())?;
                    results.push(b.local().to_owned());
                }
            }
        }
        ensure!(
            results.windows(2).all(|w| w[0] == w[1]),
            "strategies disagree for {from} -> {to}"
        );
    }
    Ok(())
}

/// One plan executed on shared and private sources, old and new, more of
/// them than the mappings a receiver keeps: every result is its source's.
fn shared_sources(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let rows = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let cols = ProcGrid::builder(&[1, n])
        .build_sharing(&rows)
        .map_err(|e| e.to_string())?;
    let from = Layout::parse(&[37, 29], &format!("cyclic(3),*@{n}x1")).unwrap();
    let to = Layout::parse(&[37, 29], &format!("*,cyclic(2)@1x{n}")).unwrap();
    let options = Options {
        strategy: Strategy::Async,
        ..Options::default()
    };
    let mut r = Redistribution::<f64>::new(&rows, &from, &cols, &to, options.clone())
        .map_err(|e| e.to_string())?;
    let mut b = DistArray::zeros(&cols, r.target_layout().clone()).map_err(|e| e.to_string())?;
    let make =
        |k: usize| DistArray::from_fn(&rows, from.clone(), move |g| code(g) + 1000.0 * k as f64);
    let kept = make(0).map_err(|e| e.to_string())?.into_shared();
    for k in 0..9usize {
        // The kept source again and again (a cached mapping), new shared
        // sources (new mappings, old ones evicted), and private sources,
        // whose data goes as messages.
        let fresh;
        let a = match k % 3 {
            0 => &kept,
            1 => {
                fresh = make(k).map_err(|e| e.to_string())?.into_shared();
                &fresh
            }
            _ => {
                fresh = make(k).map_err(|e| e.to_string())?;
                &fresh
            }
        };
        // (Private unless the environment lowers the shared threshold.)
        let bytes = std::mem::size_of_val(a.local_slice());
        let large = bytes >= dist_array::storage::shared_min_bytes();
        ensure_eq!(a.shared_storage().is_some(), k % 3 != 2 || large);
        r.execute_into(a, &mut b).map_err(|e| e.to_string())?;
        let shift = if k % 3 == 0 { 0.0 } else { 1000.0 * k as f64 };
        check(&b, |g| code(g) + shift).map_err(|e| format!("source {k}: {e}"))?;
    }
    Ok(())
}

fn element_types(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let cols = ProcGrid::builder(&[1, n])
        .build_sharing(&grid)
        .map_err(|e| e.to_string())?;
    let from = Layout::parse(&[9, 7], &format!("cyclic(2),*@{n}x1")).unwrap();
    let to = Layout::parse(&[9, 7], &format!("*,cyclic(3)@1x{n}")).unwrap();
    fn one<T: Element>(
        g: &ProcGrid,
        c: &ProcGrid,
        f: &Layout,
        t: &Layout,
        v: fn(&[usize]) -> T,
    ) -> TestResult {
        let mut r =
            Redistribution::<T>::new(g, f, c, t, Options::default()).map_err(|e| e.to_string())?;
        let a = DistArray::from_fn(g, f.clone(), v).map_err(|e| e.to_string())?;
        check(&r.execute(&a).map_err(|e| e.to_string())?, v)
    }
    one::<u8>(&grid, &cols, &from, &to, |g| (g[0] * 7 + g[1]) as u8)?;
    one::<i32>(&grid, &cols, &from, &to, |g| -((g[0] * 7 + g[1]) as i32))?;
    one::<i64>(&grid, &cols, &from, &to, |g| {
        ((g[0] * 7 + g[1]) as i64) << 33
    })?;
    one::<f32>(&grid, &cols, &from, &to, |g| code(g) as f32)?;
    one::<Complex<f32>>(&grid, &cols, &from, &to, |g| {
        Complex::new(g[0] as f32, g[1] as f32)
    })?;
    Ok(())
}

fn grids_of_different_sizes(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let few = n.div_ceil(2);
    let small = ProcGrid::builder(&[few])
        .subset(true)
        .build(world)
        .map_err(|e| e.to_string())?;
    let all = ProcGrid::builder(&[n])
        .build_sharing(&small)
        .map_err(|e| e.to_string())?;
    let a_layout = Layout::parse(&[23], &format!("cyclic(2)@{few}")).unwrap();
    let b_layout = Layout::parse(&[23], &format!("block@{n}")).unwrap();
    for (i, strategy) in STRATEGIES.into_iter().enumerate() {
        // Every other strategy with derived datatypes.
        let options = Options {
            strategy,
            datatype_min_run: if i % 2 == 0 {
                MinRun::Elements(2)
            } else {
                MinRun::Never
            },
            direct_min_run: if i % 2 == 1 {
                MinRun::Elements(1)
            } else {
                MinRun::Never
            },
            ..Options::default()
        };
        let mut up =
            Redistribution::<f64>::new(&small, &a_layout, &all, &b_layout, options.clone())
                .map_err(|e| e.to_string())?;
        let a = DistArray::from_fn(&small, a_layout.clone(), code).map_err(|e| e.to_string())?;
        let b = up.execute(&a).map_err(|e| e.to_string())?;
        check(&b, code)?;
        let mut down =
            Redistribution::<f64>::new(&all, &b_layout, &small, &a_layout, options.clone())
                .map_err(|e| e.to_string())?;
        let c = down.execute(&b).map_err(|e| e.to_string())?;
        ensure!(c.local() == a.local());
    }
    Ok(())
}

/// Resident set size in pages.
fn rss() -> usize {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1).and_then(|x| x.parse().ok()))
        .unwrap_or(0)
}

fn thousand_executions(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let cols = ProcGrid::builder(&[1, n])
        .build_sharing(&grid)
        .map_err(|e| e.to_string())?;
    let from = Layout::parse(&[32, 32], &format!("block,*@{n}x1")).unwrap();
    let to = Layout::parse(&[32, 32], &format!("*,block@1x{n}")).unwrap();
    let a = DistArray::from_fn(&grid, from.clone(), code).map_err(|e| e.to_string())?;
    // The last round with shared storage: ranks of one node read each
    // other's arrays directly, through mappings made once.
    for (strategy, shared) in [
        (Strategy::Alltoallv, false),
        (Strategy::Scheduled, false),
        (Strategy::Async, false),
        (Strategy::Async, true),
        (Strategy::Combined, false),
    ] {
        let options = Options {
            strategy,
            ..Options::default()
        };
        let share = |x: DistArray<f64>| if shared { x.into_shared() } else { x };
        let a = share(a.clone());
        let mut there = Redistribution::<f64>::new(&grid, &from, &cols, &to, options.clone())
            .map_err(|e| e.to_string())?;
        let mut back =
            Redistribution::<f64>::new(&cols, there.target_layout(), &grid, &from, options.clone())
                .map_err(|e| e.to_string())?;
        let mut b = share(
            DistArray::zeros(&cols, there.target_layout().clone()).map_err(|e| e.to_string())?,
        );
        let mut c = share(DistArray::zeros(&grid, from.clone()).map_err(|e| e.to_string())?);
        let reps = if n > 4 { 150 } else { 500 };
        let mut before = 0;
        for i in 0..reps {
            if i == 50 {
                before = rss();
            }
            there.execute_into(&a, &mut b).map_err(|e| e.to_string())?;
            back.execute_into(&b, &mut c).map_err(|e| e.to_string())?;
        }
        let grown = rss().saturating_sub(before);
        ensure!(
            grown < 256,
            "{strategy} (shared: {shared}): resident memory grew by {grown} pages over {reps} round trips"
        );
        ensure!(c.local() == a.local());
    }
    Ok(())
}

fn errors_agree(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n]).map_err(|e| e.to_string())?;
    let other = ProcGrid::new(world, &[n]).map_err(|e| e.to_string())?;
    let from = Layout::parse(&[10], &format!("block@{n}")).unwrap();
    let to = Layout::parse(&[10], &format!("cyclic@{n}")).unwrap();
    // Grids over different duplicates cannot exchange.
    ensure!(Redistribution::<f64>::new(&grid, &from, &other, &to, Options::default()).is_err());
    let bad = Layout::parse(&[11], &format!("cyclic@{n}")).unwrap();
    ensure!(Redistribution::<f64>::new(&grid, &from, &grid, &bad, Options::default()).is_err());
    let zero = Options {
        max_message_elements: 0,
        ..Options::default()
    };
    ensure!(Redistribution::<f64>::new(&grid, &from, &grid, &to, zero).is_err());
    let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, Options::default())
        .map_err(|e| e.to_string())?;
    let wrong = DistArray::<f64>::zeros(&grid, to.clone()).map_err(|e| e.to_string())?;
    ensure!(r.execute(&wrong).is_err());
    // Nobody is left in a collective: a real execution still completes everywhere.
    let a = DistArray::from_fn(&grid, from, code).map_err(|e| e.to_string())?;
    check(&r.execute(&a).map_err(|e| e.to_string())?, code)
}

/// One rank alone is handed something else — another layout, other
/// options, a wrong array, an array of another grid: every rank returns an
/// error (nobody waits for the odd one out), the odd rank its own, and the
/// redistribution still works afterwards.
fn one_rank_differs(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let me = world.rank() as usize;
    let odd = n.min(2) - 1; // rank 1, or rank 0 alone
    let grid = ProcGrid::new(world, &[n]).map_err(|e| e.to_string())?;
    let other = ProcGrid::new(world, &[n]).map_err(|e| e.to_string())?;
    let from = Layout::parse(&[23], &format!("block@{n}")).unwrap();
    let to = Layout::parse(&[23], &format!("cyclic(2)@{n}")).unwrap();
    let elsewhere = Layout::parse(&[23], &format!("cyclic(3)@{n}")).unwrap();
    let ok = |e: &redist::RedistError, mine: bool| -> TestResult {
        let text = e.to_string();
        if mine {
            ensure!(
                !matches!(e, redist::RedistError::OtherRank { .. }),
                "rank {me}: {text}"
            );
        } else if n > 1 {
            ensure!(
                matches!(e, redist::RedistError::OtherRank { rank, .. } if *rank == odd)
                    || matches!(e, redist::RedistError::Disagreement { .. }),
                "rank {me}: {text}"
            );
        }
        Ok(())
    };
    // Another target layout on one rank: the fingerprints differ.
    let target = if me == odd { &elsewhere } else { &to };
    match Redistribution::<f64>::new(&grid, &from, &grid, target, Options::default()) {
        Ok(_) if n > 1 => {
            return Err(format!(
                "rank {me}: another layout on rank {odd} went unnoticed"
            ))
        }
        Ok(_) => {}
        Err(e) => {
            ensure!(
                matches!(e, redist::RedistError::Disagreement { .. }),
                "rank {me}: {e}"
            );
        }
    }
    // Invalid options on one rank: it fails, the others learn it.
    let options = Options {
        max_message_elements: if me == odd { 0 } else { 1000 },
        ..Options::default()
    };
    match Redistribution::<f64>::new(&grid, &from, &grid, &to, options.clone()) {
        Ok(_) => {
            return Err(format!(
                "rank {me}: invalid options on rank {odd} went unnoticed"
            ))
        }
        Err(e) => ok(&e, me == odd)?,
    }
    // Wrong arrays at execution, where the ranks agree in an all-reduce
    // (the default) and where the exchange agrees as it goes (combined).
    for strategy in [Strategy::Auto, Strategy::Combined] {
        let options = Options {
            strategy,
            ..Options::default()
        };
        let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, options.clone())
            .map_err(|e| e.to_string())?;
        let a = DistArray::from_fn(&grid, from.clone(), code).map_err(|e| e.to_string())?;
        let mut b = DistArray::from_fn(&grid, to.clone(), |_| -1.0).map_err(|e| e.to_string())?;
        // A wrong source array on one rank.
        let wrong = DistArray::from_fn(&grid, to.clone(), code).map_err(|e| e.to_string())?;
        let src = if me == odd { &wrong } else { &a };
        match r.execute_into(src, &mut b) {
            Ok(()) => {
                return Err(format!(
                    "rank {me} ({strategy}): a wrong array on rank {odd} went unnoticed"
                ))
            }
            Err(e) => ok(&e, me == odd)?,
        }
        // Every target is left as it was.
        ensure!(
            b.local().iter().all(|&x| x == -1.0),
            "rank {me} ({strategy}): a failed execution wrote the target"
        );
        // An array of another grid (another communicator) on one rank.
        let foreign = DistArray::from_fn(&other, from.clone(), code).map_err(|e| e.to_string())?;
        let src = if me == odd { &foreign } else { &a };
        match r.execute_into(src, &mut b) {
            Ok(()) => {
                return Err(format!(
                    "rank {me} ({strategy}): a foreign array on rank {odd} went unnoticed"
                ))
            }
            Err(e) => ok(&e, me == odd)?,
        }
        // A wrong target on one rank, through `execute`'s own target: its source.
        match r.execute(if me == odd { &wrong } else { &a }) {
            Ok(_) => {
                return Err(format!(
                    "rank {me} ({strategy}): a wrong source on rank {odd} went unnoticed"
                ))
            }
            Err(e) => ok(&e, me == odd)?,
        }
        // Where the exchange agrees as it goes, even the unchecked call
        // tells every rank.
        if strategy == Strategy::Combined && n > 1 {
            match r.execute_into_unchecked(src, &mut b) {
                Ok(()) => {
                    return Err(format!(
                        "rank {me} (combined, unchecked): a foreign array on rank {odd} went \
                         unnoticed"
                    ))
                }
                Err(e) => ok(&e, me == odd)?,
            }
        }
        // Nobody is left behind: the redistribution still works everywhere.
        r.execute_into(&a, &mut b).map_err(|e| e.to_string())?;
        check(&b, code)?;
    }
    Ok(())
}

/// What a rank holds for a redistribution does not grow with the extent:
/// redistributions of 10^3 to 10^12 elements are built (no array is
/// allocated) and their program sizes compared.
fn programs_do_not_grow(world: &SimpleCommunicator) -> TestResult {
    use mpi::collective::{CommunicatorCollectives, SystemOperation};
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n]).map_err(|e| e.to_string())?;
    let sq = balanced_extents(n, &[0, 0]).map_err(|e| e.to_string())?;
    let grid2 = ProcGrid::new(world, &sq).map_err(|e| e.to_string())?;
    let (p, q) = (sq[0], sq[1]);
    for strategy in [Strategy::Async, Strategy::Alltoallv, Strategy::Scheduled] {
        let options = Options {
            strategy,
            ..Options::default()
        };
        let mut sizes = vec![];
        // One MPI_Alltoallv addresses at most 2^31-1 elements per rank.
        let exponents: &[u32] = if strategy == Strategy::Alltoallv {
            &[3, 6, 9]
        } else {
            &[3, 6, 9, 12]
        };
        for &e in exponents {
            let len = 10usize.pow(e);
            let side = 10usize.pow(e / 2);
            let cases = [
                (
                    &grid,
                    vec![len],
                    format!("block@{n}"),
                    format!("cyclic@{n}"),
                ),
                (
                    &grid,
                    vec![len],
                    format!("cyclic(5)@{n}"),
                    format!("cyclic(8)@{n}"),
                ),
                (
                    &grid2,
                    vec![side, len / side],
                    format!("cyclic(3),block@{p}x{q}"),
                    format!("cyclic(2),cyclic(7)@{p}x{q}"),
                ),
            ];
            let mut mine = 0usize;
            for (g, shape, from, to) in cases {
                let from = Layout::parse(&shape, &from).map_err(|e| e.to_string())?;
                let to = Layout::parse(&shape, &to).map_err(|e| e.to_string())?;
                let r = Redistribution::<f64>::new(g, &from, g, &to, options.clone())
                    .map_err(|e| format!("{from} -> {to}: {e}"))?;
                mine = mine.max(r.program_bytes());
            }
            let mut most = 0u64;
            world.all_reduce_into(&(mine as u64), &mut most, SystemOperation::max());
            sizes.push(most);
        }
        // The programs hold one basic period: an extent shorter than a
        // period holds less, a partial last period adds its runs; nothing
        // grows with the number of periods (10^3 → 10^12 elements is a
        // factor of 10^9). Small messages' listed lines add at most a
        // constant (`tuning::LISTED_LINES` lines, under 128 bytes each),
        // whatever the extent.
        let listed = (redist::redist_plan::tuning::LISTED_LINES * 128) as u64;
        let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        ensure!(
            *hi <= 2 * lo + listed,
            "{strategy}: program bytes grow with the extent (10^3, 10^6, 10^9, 10^12): {sizes:?}"
        );
    }
    Ok(())
}

/// Tiny blocks (cyclic(1)–cyclic(3)) against blocks and each other, over
/// long extents and ragged grids: every element lands where it belongs.
fn tiny_blocks_long_extents(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let mut rng = Lcg(31);
    for case in 0..8 {
        let two = case % 2 == 1;
        let shape: Vec<usize> = if two {
            vec![rng.below(60) + 30, rng.below(400) + 200]
        } else {
            vec![rng.below(40_000) + 20_000]
        };
        let (ga, gb) = (
            random_extents(&mut rng, n, shape.len()),
            random_extents(&mut rng, n, shape.len()),
        );
        let tiny = |rng: &mut Lcg, p: usize| {
            let first = rng.below(p);
            match rng.below(3) {
                0 => Dist::block().starting_at(first),
                _ => Dist::cyclic(rng.below(3) + 1).starting_at(first),
            }
        };
        let spec = |rng: &mut Lcg, g: &[usize]| {
            LayoutSpec::new(g.iter().map(|&p| tiny(rng, p)).collect(), g.to_vec())
        };
        let sa = spec(&mut rng, &ga).map_err(|e| e.to_string())?;
        let sb = spec(&mut rng, &gb).map_err(|e| e.to_string())?;
        let from = Layout::new(&shape, &sa).map_err(|e| e.to_string())?;
        let to = Layout::new(&shape, &sb).map_err(|e| e.to_string())?;
        let grid_a = ProcGrid::new(world, &ga).map_err(|e| e.to_string())?;
        let grid_b = ProcGrid::builder(&gb)
            .build_sharing(&grid_a)
            .map_err(|e| e.to_string())?;
        let options = Options {
            strategy: STRATEGIES[case % 4],
            streaming: [Streaming::Never, Streaming::Above(0)][case % 3 % 2],
            ..Options::default()
        };
        let mut r = Redistribution::<f64>::new(&grid_a, &from, &grid_b, &to, options.clone())
            .map_err(|e| e.to_string())?;
        let mut a = DistArray::from_fn(&grid_a, from.clone(), code).map_err(|e| e.to_string())?;
        if case % 3 == 0 {
            a = a.into_shared();
        }
        let b = r
            .execute(&a)
            .map_err(|e| format!("{from} -> {to} ({options:?}): {e}"))?;
        let bad = b.count_where(|g, &x| x != code(g));
        ensure!(
            bad == 0,
            "{from} -> {to} ({}): {bad} elements wrong",
            r.strategy()
        );
    }
    Ok(())
}

/// `async` messages whose pieces are cut where a run of target storage
/// ends (each received straight into target storage, with no unpacking):
/// blocks of 48 and 37 rows against whole target rows, ragged at the end;
/// every element lands where it belongs.
fn pieces_land_in_target_runs(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    for (shape, rows) in [([1024, 1024], 48), ([1000, 1100], 37)] {
        let from =
            Layout::parse(&shape, &format!("cyclic({rows}),*@{n}x1")).map_err(|e| e.to_string())?;
        let to = Layout::parse(&shape, &format!("cyclic({}),cyclic(8)@1x{n}", shape[0]))
            .map_err(|e| e.to_string())?;
        let grid_a = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
        let grid_b = ProcGrid::builder(&[1, n])
            .build_sharing(&grid_a)
            .map_err(|e| e.to_string())?;
        // Messages, even between ranks of one node (large arrays live in
        // shared memory, which node-direct copies would read).
        let options = Options {
            strategy: Strategy::Async,
            node_direct: false,
            ..Options::default()
        };
        let mut r = Redistribution::<f64>::new(&grid_a, &from, &grid_b, &to, options.clone())
            .map_err(|e| e.to_string())?;
        let a = DistArray::from_fn(&grid_a, from.clone(), code).map_err(|e| e.to_string())?;
        for _ in 0..2 {
            let b = r.execute(&a).map_err(|e| format!("{from} -> {to}: {e}"))?;
            let bad = b.count_where(|g, &x| x != code(g));
            ensure!(bad == 0, "{from} -> {to}: {bad} elements wrong");
        }
    }
    Ok(())
}

/// Where a shared target receives long stretches from the ranks of its
/// node, they write their messages into it (from shared and private
/// sources alike, into shared and private targets side by side); when a
/// writer cannot map a target, that message follows as messages. Every
/// execution lands every element, whoever fails, over executions on the
/// same and on new arrays.
fn written_into_lent_targets(world: &SimpleCommunicator) -> TestResult {
    let p = world.size() as usize;
    let grid = ProcGrid::new(world, &[p]).map_err(|e| e.to_string())?;
    let me = world.rank() as usize;
    if p == 1 {
        // Nothing to write into: no node-direct copies are set up.
        return Ok(());
    }
    let policy = dist_array::storage::node_writes();
    let writes = policy != dist_array::storage::NodeWrites::Never;
    // Only messages between ranks of one node are written or read (the
    // suite also runs across emulated nodes).
    let node = grid.node();
    let near = |links: &[redist::redist_plan::Link]| {
        links.iter().filter(|l| node.contains(l.peer)).count()
    };
    // Source runs of 80 bytes to a few KiB: targets are lent.
    let n = 40 * 300 * 2 * p + 17;
    let cases = [
        ("cyclic(40)", "cyclic(300)"),
        ("cyclic(300)", "cyclic(200)"),
        ("cyclic(10)", "cyclic(97)"),
    ];
    for (from, to) in cases {
        let from = Layout::parse(&[n], &format!("{from}@{p}")).map_err(|e| e.to_string())?;
        let to = Layout::parse(&[n], &format!("{to}@{p}")).map_err(|e| e.to_string())?;
        let options = Options {
            strategy: Strategy::Async,
            ..Options::default()
        };
        let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, options.clone())
            .map_err(|e| e.to_string())?;
        let mut shared_target = DistArray::<f64>::zeros(&grid, to.clone())
            .map_err(|e| e.to_string())?
            .into_shared();
        for round in 0..6usize {
            // Rounds 2 and 3: rank 1, then every rank, cannot map; odd
            // rounds read a private source; round 4 a new target.
            let fails = match round {
                2 => me == 1,
                3 => true,
                _ => false,
            };
            let a = DistArray::from_fn(&grid, from.clone(), move |g| code(g) + round as f64)
                .map_err(|e| e.to_string())?;
            let a = if round % 2 == 0 {
                a.into_shared()
            } else {
                // On the heap, where `from_local` keeps its elements.
                DistArray::from_local(&grid, from.clone(), a.into_local())
                    .map_err(|e| e.to_string())?
            };
            ensure!(
                (round % 2 == 0) == a.shared_storage().is_some(),
                "round {round}: the source is not where the test wants it"
            );
            if round == 4 {
                shared_target = DistArray::<f64>::zeros(&grid, to.clone())
                    .map_err(|e| e.to_string())?
                    .into_shared();
            }
            if fails {
                redist::faults::inject(&[redist::faults::Fault::Map]);
            }
            let result = r.execute_into(&a, &mut shared_target);
            redist::faults::inject(&[]);
            let at = format!("{from} -> {to}, round {round}");
            result.map_err(|e| format!("{at}: {e}"))?;
            check(&shared_target, |g| code(g) + round as f64).map_err(|e| format!("{at}: {e}"))?;
            // Every send to a rank of the node is written, unless this
            // rank could not map the target; where writes are sealed out
            // (`NDCYCLIC_NODE_WRITES=never`) they are read from shared
            // sources instead.
            let copies = r.node_copies().ok_or("no node-direct copies")?;
            let (sends, recvs) = (near(r.rank_plan().sends()), near(r.rank_plan().recvs()));
            // A rank lends its target where it receives from its node
            // (always, with `always`).
            let lends = recvs > 0 || policy == dist_array::storage::NodeWrites::Always;
            let expect = if !writes {
                NodeCopies {
                    written: 0,
                    read: if round % 2 == 0 && !fails { recvs } else { 0 },
                    lent: false,
                }
            } else {
                NodeCopies {
                    written: if fails { 0 } else { sends },
                    read: 0,
                    lent: lends,
                }
            };
            ensure!(
                copies == expect,
                "{at}: {copies:?}, {sends} sends in the node"
            );
            // A private target next to it: read or sent, never written.
            let private = DistArray::from_local(
                &grid,
                to.clone(),
                DistArray::<f64>::zeros(&grid, to.clone())
                    .map_err(|e| e.to_string())?
                    .into_local(),
            )
            .map_err(|e| e.to_string())?;
            let mut private = private;
            r.execute_into(&a, &mut private)
                .map_err(|e| format!("{at}, private: {e}"))?;
            check(&private, |g| code(g) + round as f64)
                .map_err(|e| format!("{at}, private: {e}"))?;
            let copies = r.node_copies().ok_or("no node-direct copies")?;
            // Read where the source is shared (even rounds), sent
            // otherwise.
            let expect = if round % 2 == 0 { recvs } else { 0 };
            ensure!(
                copies.written == 0 && copies.read == expect && !copies.lent,
                "{at}, private: {copies:?}, {recvs} receives"
            );
        }
    }
    // Source runs of 8 KiB: by default read, the target not lent.
    if dist_array::storage::node_writes() == dist_array::storage::NodeWrites::Auto {
        let from = Layout::parse(&[n], &format!("cyclic(1000)@{p}")).map_err(|e| e.to_string())?;
        let to = Layout::parse(&[n], &format!("cyclic(2000)@{p}")).map_err(|e| e.to_string())?;
        let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, Options::default())
            .map_err(|e| e.to_string())?;
        let a = DistArray::from_fn(&grid, from.clone(), code)
            .map_err(|e| e.to_string())?
            .into_shared();
        let mut b = DistArray::<f64>::zeros(&grid, to.clone())
            .map_err(|e| e.to_string())?
            .into_shared();
        r.execute_into(&a, &mut b).map_err(|e| e.to_string())?;
        check(&b, code)?;
        let copies = r.node_copies().ok_or("no node-direct copies")?;
        let recvs = near(r.rank_plan().recvs());
        ensure!(
            !copies.lent && copies.written == 0 && copies.read == recvs,
            "{from} -> {to}: {copies:?}, {recvs} receives"
        );
    }
    Ok(())
}

/// When a receiver cannot map a peer's shared storage, it asks for the
/// message instead and the exchange completes with messages: every rank
/// sees its result, whoever fails.
fn unreadable_peers_fall_back(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let rows = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let cols = ProcGrid::builder(&[1, n])
        .build_sharing(&rows)
        .map_err(|e| e.to_string())?;
    let from = Layout::parse(&[61, 47], &format!("cyclic(3),*@{n}x1")).unwrap();
    let to = Layout::parse(&[61, 47], &format!("*,cyclic(2)@1x{n}")).unwrap();
    let options = Options {
        strategy: Strategy::Async,
        ..Options::default()
    };
    let mut r = Redistribution::<f64>::new(&rows, &from, &cols, &to, options.clone())
        .map_err(|e| e.to_string())?;
    let mut b = DistArray::zeros(&cols, r.target_layout().clone()).map_err(|e| e.to_string())?;
    let me = world.rank() as usize;
    for round in 0..4usize {
        // Round 0: nobody fails; then rank 1, then every odd rank, then all.
        let fails = match round {
            0 => false,
            1 => me == 1,
            2 => me % 2 == 1,
            _ => true,
        };
        if fails {
            redist::faults::inject(&[redist::faults::Fault::Map]);
        }
        let a = DistArray::from_fn(&rows, from.clone(), move |g| code(g) + round as f64)
            .map_err(|e| e.to_string())?
            .into_shared();
        let result = r.execute_into(&a, &mut b);
        redist::faults::inject(&[]);
        result.map_err(|e| format!("round {round}: {e}"))?;
        check(&b, |g| code(g) + round as f64).map_err(|e| format!("round {round}: {e}"))?;
    }
    // Staging through shared memory refused on rank 1 while building:
    // `combined` asked for fails on every rank alike; `auto` goes on
    // without it.
    if n > 1 {
        let a = DistArray::from_fn(&rows, from.clone(), code).map_err(|e| e.to_string())?;
        for strategy in [Strategy::Combined, Strategy::Auto] {
            if me == 1 {
                redist::faults::inject(&[redist::faults::Fault::Map]);
            }
            let options = Options {
                strategy,
                ..Options::default()
            };
            let built = Redistribution::<f64>::new(&rows, &from, &cols, &to, options.clone());
            redist::faults::inject(&[]);
            match (strategy, built) {
                (Strategy::Combined, Ok(_)) => {
                    return Err(format!(
                        "rank {me}: combined built where rank 1 cannot stage"
                    ))
                }
                (Strategy::Combined, Err(e)) => ensure!(
                    matches!(
                        e,
                        redist::RedistError::InvalidArgument {
                            what: "strategy",
                            ..
                        }
                    ),
                    "rank {me}: {e}"
                ),
                (_, built) => {
                    let mut r = built.map_err(|e| format!("rank {me}, auto: {e}"))?;
                    ensure!(r.strategy() != Strategy::Combined, "rank {me}: combined");
                    check(&r.execute(&a).map_err(|e| e.to_string())?, code)?;
                }
            }
        }
    }
    Ok(())
}

/// Cases of [`stress`]: `NDCYCLIC_STRESS_CASES` (default 24 per launch).
fn stress_cases() -> usize {
    std::env::var("NDCYCLIC_STRESS_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(24)
}

/// A redistribution [`stress`] tries: from `from` on `grid_a` to `to` on
/// `grid_b`, built with `options`, named `what` in a failure.
struct StressCase<'a> {
    grid_a: &'a ProcGrid,
    from: &'a Layout,
    grid_b: &'a ProcGrid,
    to: &'a Layout,
    options: &'a Options,
    what: &'a str,
}

/// One stress case with elements of type `T` valued `v(global index)`.
fn stress_case<T: Element>(
    rng: &mut Lcg,
    case: &StressCase<'_>,
    v: fn(&[usize]) -> T,
) -> TestResult {
    let StressCase {
        grid_a,
        from,
        grid_b,
        to,
        options,
        what,
    } = *case;
    let mut r = match Redistribution::<T>::new(grid_a, from, grid_b, to, options.clone()) {
        Ok(r) => r,
        // No closed form for this pair: refused on every rank alike.
        Err(redist::RedistError::Plan(redist::PlanError::Remap { .. }))
            if options.remap == Remap::ClosedForm =>
        {
            return Ok(())
        }
        Err(e) => return Err(format!("{what}: {e}")),
    };
    let mut a = DistArray::from_fn(grid_a, from.clone(), v).map_err(|e| e.to_string())?;
    if rng.below(2) == 0 {
        a = a.into_shared();
    }
    let mut b = DistArray::zeros(grid_b, r.target_layout().clone()).map_err(|e| e.to_string())?;
    // Twice: the second execution reuses buffers, mappings and datatypes.
    for round in 0..2 {
        r.execute_into(&a, &mut b)
            .map_err(|e| format!("{what}: {e}"))?;
        check(&b, v).map_err(|e| format!("{what}, {}, round {round}: {e}", r.strategy()))?;
    }
    Ok(())
}

/// Many random redistributions: 1-3 dimensions, extents smaller and larger
/// than the grids and not divisible by them, grids of part of the job,
/// every distribution, first process, rank map and storage order, every
/// strategy and remapping, derived datatypes, direct runs and split
/// messages, shared sources or not, three element types. The seed is
/// `NDCYCLIC_STRESS_SEED` (default 1); a failure names the case.
fn stress(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let seed = std::env::var("NDCYCLIC_STRESS_SEED")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(1u64);
    let mut rng = Lcg(seed);
    for case in 0..stress_cases() {
        let ndim = rng.below(3) + 1;
        let max = [60, 14, 7][ndim - 1];
        let shape: Vec<usize> = (0..ndim).map(|_| rng.below(max) + 1).collect();
        let (na, nb) = (rng.below(n) + 1, rng.below(n) + 1);
        let (ga, gb) = (
            random_extents(&mut rng, na, ndim),
            random_extents(&mut rng, nb, ndim),
        );
        let grid_a = ProcGrid::builder(&ga)
            .subset(true)
            .build(world)
            .map_err(|e| e.to_string())?;
        let grid_b = ProcGrid::builder(&gb)
            .subset(true)
            .build_sharing(&grid_a)
            .map_err(|e| e.to_string())?;
        let from = random_layout(&mut rng, &shape, &ga);
        let to = random_layout(&mut rng, &shape, &gb);
        let options = Options {
            remap: [Remap::None, Remap::Optimal, Remap::ClosedForm][rng.below(3)],
            strategy: STRATEGIES[rng.below(STRATEGIES.len())],
            max_message_elements: [i32::MAX as usize, 1, 3, 17][rng.below(4)],
            datatype_min_run: [
                MinRun::Never,
                MinRun::Auto,
                MinRun::Elements(1),
                MinRun::Elements(4),
            ][rng.below(4)],
            direct_min_run: [MinRun::Auto, MinRun::Elements(1), MinRun::Never][rng.below(3)],
            node_direct: rng.below(2) == 0,
            updates: rng.below(4) == 0,
            streaming: [Streaming::Auto, Streaming::Never, Streaming::Above(0)][rng.below(3)],
            ..Options::default()
        };
        let what = format!("case {case} of seed {seed}: {from} -> {to} ({options:?})");
        let case = StressCase {
            grid_a: &grid_a,
            from: &from,
            grid_b: &grid_b,
            to: &to,
            options: &options,
            what: &what,
        };
        match rng.below(3) {
            0 => stress_case::<f64>(&mut rng, &case, code)?,
            1 => stress_case::<u8>(&mut rng, &case, |g| (code(g) as u64 % 251) as u8)?,
            _ => stress_case::<Complex<f64>>(&mut rng, &case, |g| Complex::new(code(g), -code(g)))?,
        }
    }
    Ok(())
}

/// Random windows between arrays of different shapes, layouts and grids:
/// the window arrives where it should, everything else in the target keeps
/// its value, with every strategy, shared sources or not.
fn random_windows(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let mut rng = Lcg(41);
    for case in 0..12 {
        let ndim = case % 3 + 1;
        let max = [40, 13, 7][ndim - 1];
        let a: Vec<usize> = (0..ndim).map(|_| rng.below(max) + 1).collect();
        let b: Vec<usize> = (0..ndim).map(|_| rng.below(max) + 1).collect();
        let shape: Vec<usize> = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| rng.below(x.min(y) + 1))
            .collect();
        let ia: Vec<usize> = a
            .iter()
            .zip(&shape)
            .map(|(&x, &w)| rng.below(x - w + 1))
            .collect();
        let ib: Vec<usize> = b
            .iter()
            .zip(&shape)
            .map(|(&x, &w)| rng.below(x - w + 1))
            .collect();
        let window = Window::new(&ia, &ib, &shape).map_err(|e| e.to_string())?;
        let (ga, gb) = (
            random_extents(&mut rng, n, ndim),
            random_extents(&mut rng, n, ndim),
        );
        let grid_a = ProcGrid::new(world, &ga).map_err(|e| e.to_string())?;
        let grid_b = ProcGrid::builder(&gb)
            .build_sharing(&grid_a)
            .map_err(|e| e.to_string())?;
        let from = random_layout(&mut rng, &a, &ga);
        let to = random_layout(&mut rng, &b, &gb);
        let options = Options {
            strategy: STRATEGIES[rng.below(STRATEGIES.len())],
            node_direct: rng.below(2) == 0,
            ..Options::default()
        };
        let what = format!("{window} of {from} -> {to} ({options:?})");
        let mut r = Redistribution::<f64>::with_window(
            &grid_a,
            &from,
            &grid_b,
            &to,
            &window,
            options.clone(),
        )
        .map_err(|e| format!("{what}: {e}"))?;
        let mut src = DistArray::from_fn(&grid_a, from.clone(), code).map_err(|e| e.to_string())?;
        if rng.below(2) == 0 {
            src = src.into_shared();
        }
        let mut dst =
            DistArray::from_fn(&grid_b, to.clone(), |_| -1.0).map_err(|e| e.to_string())?;
        // Twice: the second execution finds the target already written.
        for _ in 0..2 {
            r.execute_into(&src, &mut dst)
                .map_err(|e| format!("{what}: {e}"))?;
        }
        check(&dst, |g| {
            window.source_index_of(g).map_or(-1.0, |s| code(&s))
        })
        .map_err(|e| format!("{what}, {}: {e}", r.strategy()))?;
    }
    Ok(())
}

/// Windows that do not fit are refused on every rank, before anything moves.
fn windows_are_checked(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let a = Layout::parse(&[10, 6], &format!("cyclic(3),*@{n}x1")).map_err(|e| e.to_string())?;
    let b = Layout::parse(&[4, 9], &format!("block,*@{n}x1")).map_err(|e| e.to_string())?;
    let too_tall = Window::new(&[0, 0], &[1, 0], &[4, 3]).map_err(|e| e.to_string())?;
    let err =
        Redistribution::<f64>::with_window(&grid, &a, &grid, &b, &too_tall, Options::default())
            .err()
            .ok_or("a window past the target's end was accepted")?;
    ensure!(
        err.to_string().contains("window"),
        "unexpected error: {err}"
    );
    // Only rank 0 asks for a window that does not fit: every rank errs.
    let mine = if world.rank() == 0 {
        too_tall
    } else {
        Window::new(&[0, 0], &[0, 0], &[4, 3]).map_err(|e| e.to_string())?
    };
    ensure!(
        Redistribution::<f64>::with_window(&grid, &a, &grid, &b, &mine, Options::default())
            .is_err(),
        "rank {} accepted a window rank 0 refused",
        world.rank()
    );
    Ok(())
}

/// Every test of the suite, in the order they run.
pub const TESTS: &[MpiTest] = &[
    MpiTest::new("random_pairs", random_pairs),
    MpiTest::new("strategies_agree", strategies_agree),
    MpiTest::new("shared_sources", shared_sources),
    MpiTest::new("element_types", element_types),
    MpiTest::new("grids_of_different_sizes", grids_of_different_sizes),
    MpiTest::new("thousand_executions", thousand_executions),
    MpiTest::new("errors_agree", errors_agree),
    MpiTest::new("one_rank_differs", one_rank_differs),
    MpiTest::new("programs_do_not_grow", programs_do_not_grow),
    MpiTest::new("tiny_blocks_long_extents", tiny_blocks_long_extents),
    MpiTest::new("pieces_land_in_target_runs", pieces_land_in_target_runs),
    MpiTest::new("unreadable_peers_fall_back", unreadable_peers_fall_back),
    MpiTest::new("written_into_lent_targets", written_into_lent_targets),
    MpiTest::new("stress", stress),
    MpiTest::new("random_windows", random_windows),
    MpiTest::new("windows_are_checked", windows_are_checked),
    MpiTest::new("datatype_verdict_agrees", datatype_verdict_agrees),
    MpiTest::new(
        "routes_are_tried_and_the_faster_kept",
        routes_are_tried_and_the_faster_kept,
    ),
    MpiTest::new("permuted_pairs", permuted_pairs),
    MpiTest::new("updated_pairs", updated_pairs),
    MpiTest::new("batches", batches),
    MpiTest::new("batch_ways", batch_ways),
    MpiTest::new("node_direct_batches", node_direct_batches),
    MpiTest::new("mixed_batches", mixed_batches),
    MpiTest::new("ghosted_pairs", ghosts::ghosted_pairs),
    MpiTest::new("ghosted_batches", ghosts::ghosted_batches),
    MpiTest::new("ghosted_subsets", ghosts::ghosted_subsets),
    MpiTest::new("ghost_widths_are_checked", ghosts::ghost_widths_are_checked),
    MpiTest::new(
        "tuned_choices_are_remembered",
        wisdom::tuned_choices_are_remembered,
    ),
    MpiTest::new(
        "unfit_wisdom_is_a_warning",
        wisdom::unfit_wisdom_is_a_warning,
    ),
    MpiTest::new(
        "wisdom_writes_are_careful",
        wisdom::wisdom_writes_are_careful,
    ),
    MpiTest::new(
        "grids_are_chosen_by_whole_steps",
        grid_choice::grids_are_chosen_by_whole_steps,
    ),
    MpiTest::new(
        "grid_failures_are_agreed",
        grid_choice::grid_failures_are_agreed,
    ),
    MpiTest::new(
        "unfit_grid_wisdom_is_a_warning",
        grid_choice::unfit_grid_wisdom_is_a_warning,
    ),
    MpiTest::new(
        "ghost_ways_are_remembered",
        tuned_ways::ghost_ways_are_remembered,
    ),
    MpiTest::new(
        "batches_are_tuned_whole",
        tuned_ways::batches_are_tuned_whole,
    ),
];
