//! Redistributions of arrays with ghost layers: a ghosted source into a
//! plain target, a plain source into a ghosted target, ghosted into
//! ghosted with other widths, whole, permuted and windowed, through every
//! exchange with node-direct copies on and off, one array, batches and
//! mixed batches. Every target interior element is checked against its
//! global value and every ghost cell against the sentinel it was given; a
//! ghost cell written, or read as if it were data, shows.

use dist_array::DistArray;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, TestResult};
use procgrid::ProcGrid;
use redist::{MixedBatch, Options, Padding, RedistError, Redistribution, Remap, Strategy, Window};

use super::STRATEGIES;
use crate::common::{check, code, random_case, random_extents, random_layout, Lcg};

/// What every ghost cell holds before and after a redistribution (every
/// global value, [`code`], is at least 1).
const GHOST: f64 = -7.0;

/// What target elements outside a window hold.
const UNSET: f64 = -3.0;

/// Ghost widths of 0 to 2 per axis, at least one of them not 0.
fn random_widths(rng: &mut Lcg, ndim: usize) -> Vec<usize> {
    let mut w: Vec<usize> = (0..ndim).map(|_| rng.below(3)).collect();
    if w.iter().all(|&x| x == 0) {
        w[rng.below(ndim)] = rng.below(2) + 1;
    }
    w
}

/// An array of `layout` on `grid` with `widths` of ghosts, every interior
/// element `f` of its global index and every ghost [`GHOST`]; in shared
/// storage when `shared` (so that node-direct copies read or write it).
fn ghosted(
    grid: &ProcGrid,
    layout: &dist_array::Layout,
    widths: &[usize],
    shared: bool,
    f: impl Fn(&[usize]) -> f64 + Sync + Send,
) -> Result<DistArray<f64>, String> {
    let mut a =
        DistArray::zeros_with_ghosts(grid, layout.clone(), widths).map_err(|e| e.to_string())?;
    if shared {
        a = a.into_shared();
    }
    a.padded_mut().fill(GHOST);
    let values = DistArray::from_fn(grid, layout.clone(), f).map_err(|e| e.to_string())?;
    a.local_mut().assign(&values.local());
    Ok(a)
}

/// Every ghost cell of `a` still holds [`GHOST`] (and no interior element
/// does).
fn ghosts_untouched(a: &DistArray<f64>, what: &str) -> TestResult {
    let ghosts = a.padded().iter().filter(|&&x| x == GHOST).count();
    let cells = a.padded().len() - a.local().len();
    ensure_eq!(ghosts, cells, "{what}: ghost cells of {}", a.layout());
    Ok(())
}

/// Which sides of case `case` have ghosts: the source, the target, or
/// both (with other widths).
fn sides(case: usize, rng: &mut Lcg, ndim: usize) -> (Vec<usize>, Vec<usize>) {
    match case % 3 {
        0 => (random_widths(rng, ndim), vec![0; ndim]),
        1 => (vec![0; ndim], random_widths(rng, ndim)),
        _ => loop {
            let (a, b) = (random_widths(rng, ndim), random_widths(rng, ndim));
            if a != b {
                break (a, b);
            }
        },
    }
}

/// The exchanges a case goes through: every strategy, `async` and `auto`
/// with node-direct copies on and off (the others never copy node-direct).
fn ways() -> Vec<(Strategy, bool)> {
    (STRATEGIES.iter())
        .flat_map(|&s| match s {
            Strategy::Async | Strategy::Auto => vec![(s, true), (s, false)],
            _ => vec![(s, true)],
        })
        .collect()
}

/// Random redistributions of ghosted arrays, whole (through
/// `Redistribution::between`, and through `new` and `execute`), with the
/// axes permuted, and of windows; each through every exchange, executed
/// twice (the second reuses buffers and mappings, and lists small
/// messages' lines).
pub fn ghosted_pairs(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(71);
    // Messages this rank read node-direct from a peer's source, and
    // whether it has peers on its node.
    let (mut near_reads, mut near) = (0usize, false);
    for case in 0..8 {
        let kind = case % 4;
        let ndim = if kind == 1 {
            2 + rng.below(2)
        } else {
            rng.below(3) + 1
        };
        let max = [30, 9, 5][ndim - 1];
        let (grid_a, from, grid_b, seen) = random_case(&mut rng, world, ndim, max)?;
        let (ws, wt) = sides(case, &mut rng, ndim);
        // The target: `seen` itself, or for a permutation `seen` with its
        // axes permuted (source axis d lands on target axis perm[d]).
        let perm: Vec<usize> = match ndim {
            1 => vec![0],
            2 => vec![1, 0],
            _ => vec![2, 0, 1],
        };
        let mut inverse = vec![0; ndim];
        for (d, &a) in perm.iter().enumerate() {
            inverse[a] = d;
        }
        let (to, grid_t) = if kind == 1 {
            let to = seen.select_axes(&inverse).map_err(|e| e.to_string())?;
            let grid = ProcGrid::builder(to.grid_extents())
                .build_sharing(&grid_a)
                .map_err(|e| e.to_string())?;
            (to, grid)
        } else {
            (seen.clone(), grid_b.clone())
        };
        // A window of each shape from random origins (kind 2).
        let shape = from.shape().to_vec();
        let wshape: Vec<usize> = shape.iter().map(|&n| rng.below(n) + 1).collect();
        let so: Vec<usize> = (shape.iter().zip(&wshape))
            .map(|(&n, &w)| rng.below(n - w + 1))
            .collect();
        let to_origin: Vec<usize> = (shape.iter().zip(&wshape))
            .map(|(&n, &w)| rng.below(n - w + 1))
            .collect();
        let window = Window::new(&so, &to_origin, &wshape).map_err(|e| e.to_string())?;
        let expect = |g: &[usize]| -> f64 {
            match kind {
                1 => code(&perm.iter().map(|&a| g[a]).collect::<Vec<_>>()),
                2 => {
                    let inside =
                        (0..ndim).all(|d| g[d] >= to_origin[d] && g[d] < to_origin[d] + wshape[d]);
                    if !inside {
                        return UNSET;
                    }
                    code(
                        &(0..ndim)
                            .map(|d| g[d] - to_origin[d] + so[d])
                            .collect::<Vec<_>>(),
                    )
                }
                _ => code(g),
            }
        };
        for (i, (strategy, node_direct)) in ways().into_iter().enumerate() {
            let what = format!(
                "case {case} ({kind}): {from} ghosts {ws:?} -> {to} ghosts {wt:?}, \
                 {strategy}, node-direct {node_direct}"
            );
            let options = Options {
                strategy,
                node_direct,
                padding: Padding::new(&ws, &wt),
                ..Options::default()
            };
            // Shared sources where node-direct copies may read them (but
            // in one case of four, to see them fall back), else every other.
            let reads = node_direct && matches!(strategy, Strategy::Async | Strategy::Auto);
            let shared = (if reads { case % 4 != 3 } else { i % 2 == 0 }, i % 3 != 1);
            let a = ghosted(&grid_a, &from, &ws, shared.0, code)?;
            let initial = if kind == 2 { UNSET } else { 0.5 };
            let mut b = ghosted(&grid_t, &to, &wt, shared.1, move |_| initial)?;
            let built = match kind {
                0 => Redistribution::between(&a, &b, options),
                1 => Redistribution::with_permutation(
                    &grid_a, &from, &grid_t, &to, &perm, None, options,
                ),
                2 => Redistribution::with_window(&grid_a, &from, &grid_t, &to, &window, options),
                _ => Redistribution::new(&grid_a, &from, &grid_t, &to, options),
            };
            let mut r = built.map_err(|e| format!("{what}: {e}"))?;
            if kind == 3 {
                // A new target, ghosts zero: only its interior is written.
                let fresh = r.execute(&a).map_err(|e| format!("{what}: {e}"))?;
                ensure_eq!(fresh.ghost_widths(), &wt[..], "{what}");
                check(&fresh, expect).map_err(|e| format!("{what}, new target: {e}"))?;
                let zeros = fresh.padded().iter().filter(|&&x| x == 0.0).count();
                ensure_eq!(zeros, fresh.padded().len() - fresh.local().len(), "{what}");
            }
            for round in 0..2 {
                r.execute_into(&a, &mut b)
                    .map_err(|e| format!("{what}: {e}"))?;
                check(&b, expect)
                    .map_err(|e| format!("{what}, {}, round {round}: {e}", r.strategy()))?;
                ghosts_untouched(&b, &what)?;
                ghosts_untouched(&a, &what)?;
            }
            if let Some(c) = r.node_copies().filter(|_| ws.iter().any(|&w| w > 0)) {
                near_reads += c.read;
            }
            near |= grid_a.node().ranks().len() > 1;
        }
    }
    // Padded storages are mapped by the node's peers, not refused for
    // their size: some messages were read node-direct.
    let mut any = 0u64;
    let mine = u64::try_from(near_reads).unwrap_or(u64::MAX);
    world.all_reduce_into(&mine, &mut any, SystemOperation::sum());
    let mut nodes_shared = 0u8;
    world.all_reduce_into(&u8::from(near), &mut nodes_shared, SystemOperation::max());
    ensure!(
        nodes_shared == 0 || any > 0,
        "no message was read node-direct from a ghosted source"
    );
    Ok(())
}

/// Batches of ghosted arrays: two sources with one padding into two
/// targets with another, through `async` with node-direct copies (shared
/// sources: read straight, several arrays a note) and through the stacked
/// exchange; and a mixed batch of `f64` and `i32` arrays.
pub fn ghosted_batches(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(83);
    for case in 0..4 {
        let ndim = case % 2 + 1;
        let (grid_a, from, grid_b, to) = random_case(&mut rng, world, ndim, [40, 10][ndim - 1])?;
        let (ws, wt) = sides(case + 2, &mut rng, ndim);
        let strategy = [Strategy::Async, Strategy::Alltoallv][case % 2];
        let options = Options {
            strategy,
            padding: Padding::new(&ws, &wt),
            ..Options::default()
        };
        let what = format!("batch {case}: {from} ghosts {ws:?} -> {to} ghosts {wt:?}, {strategy}");
        let mut r = Redistribution::<f64>::new(&grid_a, &from, &grid_b, &to, options)
            .map_err(|e| format!("{what}: {e}"))?;
        let twice = |g: &[usize]| 2.0 * code(g);
        let u = ghosted(&grid_a, &from, &ws, true, code)?;
        let v = ghosted(&grid_a, &from, &ws, true, twice)?;
        let mut bu = ghosted(&grid_b, &to, &wt, case % 2 == 0, |_| 0.5)?;
        let mut bv = ghosted(&grid_b, &to, &wt, true, |_| 0.5)?;
        for round in 0..2 {
            r.execute_batch_into(&[&u, &v], &mut [&mut bu, &mut bv])
                .map_err(|e| format!("{what}: {e}"))?;
            check(&bu, code).map_err(|e| format!("{what}, round {round}: {e}"))?;
            check(&bv, twice).map_err(|e| format!("{what}, round {round}: {e}"))?;
            ghosts_untouched(&bu, &what)?;
            ghosts_untouched(&bv, &what)?;
        }
        // A mixed batch: the i32 arrays' ghosts hold -7 too.
        let mut m = DistArray::<i32>::zeros_with_ghosts(&grid_a, from.clone(), &ws)
            .map_err(|e| e.to_string())?;
        m.padded_mut().fill(GHOST as i32);
        let values = DistArray::from_fn(&grid_a, from.clone(), |g| code(g) as i32)
            .map_err(|e| e.to_string())?;
        m.local_mut().assign(&values.local());
        let mut bm = DistArray::<i32>::zeros_with_ghosts(&grid_b, to.clone(), &wt)
            .map_err(|e| e.to_string())?;
        bm.padded_mut().fill(GHOST as i32);
        let mut bu = ghosted(&grid_b, &to, &wt, false, |_| 0.5)?;
        let mut batch = MixedBatch::new();
        batch.push(&u, &mut bu).push(&m, &mut bm);
        r.execute_mixed_batch(&mut batch)
            .map_err(|e| format!("{what}, mixed: {e}"))?;
        drop(batch);
        check(&bu, code).map_err(|e| format!("{what}, mixed: {e}"))?;
        check(&bm, |g| code(g) as i32).map_err(|e| format!("{what}, mixed: {e}"))?;
        ghosts_untouched(&bu, &what)?;
        let ghosts = bm.padded().iter().filter(|&&x| x == GHOST as i32).count();
        ensure_eq!(
            ghosts,
            bm.padded().len() - bm.local().len(),
            "{what}, mixed"
        );
    }
    Ok(())
}

/// Arrays on a grid of part of the job: a rank outside it holds nothing,
/// ghosts included, yet knows the widths, so `between` agrees on every
/// rank.
pub fn ghosted_subsets(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let mut rng = Lcg(97);
    for case in 0..3 {
        let ndim = case % 2 + 1;
        let part = (n - 1).max(1);
        let ga = random_extents(&mut rng, part, ndim);
        let gb = random_extents(&mut rng, n, ndim);
        let grid_a = ProcGrid::builder(&ga)
            .subset(true)
            .build(world)
            .map_err(|e| e.to_string())?;
        let grid_b = ProcGrid::builder(&gb)
            .build_sharing(&grid_a)
            .map_err(|e| e.to_string())?;
        let shape: Vec<usize> = (0..ndim)
            .map(|_| rng.below([25, 8][ndim - 1]) + 1)
            .collect();
        let from = random_layout(&mut rng, &shape, &ga);
        let to = random_layout(&mut rng, &shape, &gb);
        let (ws, wt) = sides(2, &mut rng, ndim);
        let a = ghosted(&grid_a, &from, &ws, case == 0, code)?;
        ensure_eq!(a.ghost_widths(), &ws[..], "every rank knows the widths");
        let mut b = ghosted(&grid_b, &to, &wt, false, |_| 0.5)?;
        let what = format!("subset {case}: {from} ghosts {ws:?} -> {to} ghosts {wt:?}");
        let mut r = Redistribution::between(&a, &b, Options::default())
            .map_err(|e| format!("{what}: {e}"))?;
        r.execute_into(&a, &mut b)
            .map_err(|e| format!("{what}: {e}"))?;
        check(&b, code).map_err(|e| format!("{what}: {e}"))?;
        ghosts_untouched(&b, &what)?;
        // And back, into the part of the job.
        let mut c = ghosted(&grid_a, &from, &ws, false, |_| 0.5)?;
        let mut back = Redistribution::between(&b, &c, Options::default())
            .map_err(|e| format!("{what}: {e}"))?;
        back.execute_into(&b, &mut c)
            .map_err(|e| format!("{what}, back: {e}"))?;
        check(&c, code).map_err(|e| format!("{what}, back: {e}"))?;
        ghosts_untouched(&c, &what)?;
    }
    Ok(())
}

/// Arrays whose ghosts are not what the redistribution was planned for
/// are refused on every rank alike; so are paddings that differ between
/// ranks, that do not fit the layouts, and remapping in `between`.
pub fn ghost_widths_are_checked(world: &SimpleCommunicator) -> TestResult {
    let (n, me) = (world.size() as usize, world.rank() as usize);
    let grid = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let layout = dist_array::Layout::parse(&[2 * n + 1, 5], &format!("block,*@{n}x1"))
        .map_err(|e| e.to_string())?;
    let cols = dist_array::Layout::parse(&[2 * n + 1, 5], &format!("cyclic,*@{n}x1"))
        .map_err(|e| e.to_string())?;
    let options = Options {
        padding: Padding::new(&[1, 1], &[]),
        ..Options::default()
    };
    let mut r = Redistribution::<f64>::new(&grid, &layout, &grid, &cols, options.clone())
        .map_err(|e| e.to_string())?;
    let good = ghosted(&grid, &layout, &[1, 1], false, code)?;
    let plain = DistArray::from_fn(&grid, layout.clone(), code).map_err(|e| e.to_string())?;
    let mut dst = DistArray::zeros(&grid, cols.clone()).map_err(|e| e.to_string())?;
    // Every rank's source without ghosts: refused everywhere by itself.
    match r.execute_into(&plain, &mut dst) {
        Err(RedistError::GhostMismatch { side, planned, got }) => {
            ensure_eq!((side, planned, got), ("source", vec![1, 1], vec![0, 0]));
        }
        other => return Err(format!("a plain source: {other:?}")),
    }
    // One rank's target with ghosts: that rank's error, the others learn.
    let mut wrong = ghosted(&grid, &cols, &[0, 1], false, |_| 0.5)?;
    let last = n - 1;
    let got = if me == last {
        r.execute_into(&good, &mut wrong)
    } else {
        r.execute_into(&good, &mut dst)
    };
    match got {
        Err(RedistError::GhostMismatch { side: "target", .. }) if me == last => {}
        Err(RedistError::OtherRank { rank, .. }) if me != last => ensure_eq!(rank, last),
        other => return Err(format!("a ghosted target on rank {last}: {other:?}")),
    }
    // And the right arrays still go through, their ghosts left alone.
    r.execute_into(&good, &mut dst).map_err(|e| e.to_string())?;
    check(&dst, code)?;
    ghosts_untouched(&good, "the source")?;
    // Paddings that differ between ranks: the same error everywhere.
    if n > 1 {
        let widths = if me == 0 { [2, 0] } else { [1, 0] };
        let differs = Options {
            padding: Padding::new(&widths, &[]),
            ..Options::default()
        };
        match Redistribution::<f64>::new(&grid, &layout, &grid, &cols, differs) {
            Err(RedistError::Disagreement { .. }) => {}
            other => return Err(format!("paddings that differ: {:?}", other.map(|_| ()))),
        }
    }
    // Widths that are not one per axis.
    let short = Options {
        padding: Padding::new(&[], &[1]),
        ..Options::default()
    };
    match Redistribution::<f64>::new(&grid, &layout, &grid, &cols, short) {
        Err(RedistError::InvalidArgument { what, .. }) => ensure_eq!(what, "target ghost widths"),
        other => return Err(format!("one width for two axes: {:?}", other.map(|_| ()))),
    }
    // `between` keeps the target's layout: no remapping.
    let remapped = Options {
        remap: Remap::Optimal,
        ..Options::default()
    };
    match Redistribution::between(&good, &dst, remapped) {
        Err(RedistError::InvalidArgument { what: "remap", .. }) => {}
        other => return Err(format!("between with remapping: {:?}", other.map(|_| ()))),
    }
    ensure!(r.padding().source() == [1, 1] && r.padding().target().is_empty());
    Ok(())
}
