//! The suite's transforms: permuted axes, updates (scale and accumulate)
//! and batches.

use super::{REMAPS, STRATEGIES};
use crate::common::{check, code, random_case, random_extents, random_layout, Lcg};
use dist_array::{Complex, DistArray, Element, Layout};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, TestResult};
use procgrid::ProcGrid;
use redist::{Options, Redistribution, Remap, Strategy, Window};

/// Random layout pairs with the target's axes permuted (the source's
/// dimension `d` landing on the target's `π[d]`), whole arrays and
/// windows, every strategy, remapped or not, shared sources or not:
/// `B[π(i)] = A[i]` everywhere, the rest of a windowed target untouched.
pub(super) fn permuted_pairs(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let mut rng = Lcg(47);
    for case in 0..16 {
        let ndim = case % 4 + 1;
        let max = [40, 13, 7, 5][ndim - 1];
        let perm = {
            let mut p: Vec<usize> = (0..ndim).collect();
            for i in (1..ndim).rev() {
                p.swap(i, rng.below(i + 1));
            }
            p
        };
        let a: Vec<usize> = (0..ndim).map(|_| rng.below(max) + 1).collect();
        let windowed = case % 3 == 2;
        // The target's shape: the source's permuted, or (windowed) its own.
        let mut b = vec![0; ndim];
        for d in 0..ndim {
            b[perm[d]] = if windowed { rng.below(max) + 1 } else { a[d] };
        }
        let (window, shape) = if windowed {
            let shape: Vec<usize> = (0..ndim)
                .map(|d| rng.below(a[d].min(b[perm[d]]) + 1))
                .collect();
            let ia: Vec<usize> = (0..ndim).map(|d| rng.below(a[d] - shape[d] + 1)).collect();
            let mut ib = vec![0; ndim];
            for d in 0..ndim {
                ib[perm[d]] = rng.below(b[perm[d]] - shape[d] + 1);
            }
            (
                Some(Window::new(&ia, &ib, &shape).map_err(|e| e.to_string())?),
                shape,
            )
        } else {
            (None, a.clone())
        };
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
            remap: if windowed {
                Remap::None
            } else {
                REMAPS[rng.below(2)]
            },
            node_direct: rng.below(2) == 0,
            ..Options::default()
        };
        let what = format!("{from} -> {to} permuted {perm:?}, window {window:?} ({options:?})");
        let mut r = Redistribution::<f64>::with_permutation(
            &grid_a,
            &from,
            &grid_b,
            &to,
            &perm,
            window.as_ref(),
            options,
        )
        .map_err(|e| format!("{what}: {e}"))?;
        ensure_eq!(r.permutation(), Some(&perm[..]));
        let mut src = DistArray::from_fn(&grid_a, from.clone(), code).map_err(|e| e.to_string())?;
        if rng.below(2) == 0 {
            src = src.into_shared();
        }
        let mut dst = DistArray::from_fn(&grid_b, r.target_layout().clone(), |_| -1.0)
            .map_err(|e| e.to_string())?;
        for _ in 0..2 {
            r.execute_into(&src, &mut dst)
                .map_err(|e| format!("{what}: {e}"))?;
        }
        // Target index j holds source index i, i[d] = origin + (j[π d] - its origin).
        let (ia, ib) = match &window {
            Some(w) => (w.source_origin().to_vec(), w.target_origin().to_vec()),
            None => (vec![0; ndim], vec![0; ndim]),
        };
        check(&dst, |j| {
            let mut i = vec![0; ndim];
            for d in 0..ndim {
                let Some(o) = j[perm[d]]
                    .checked_sub(ib[perm[d]])
                    .filter(|&o| o < shape[d])
                else {
                    return -1.0;
                };
                i[d] = ia[d] + o;
            }
            code(&i)
        })
        .map_err(|e| format!("{what}, {}: {e}", r.strategy()))?;
    }
    // A wrong permutation is an error on every rank.
    let grid = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let l = Layout::parse(&[4, 3], &format!("block,*@{n}x1")).unwrap();
    let t = Layout::parse(&[3, 4], &format!("block,*@{n}x1")).unwrap();
    for (perm, target) in [(&[0, 0][..], &t), (&[1, 0][..], &l), (&[0][..], &t)] {
        let r = Redistribution::<f64>::with_permutation(
            &grid,
            &l,
            &grid,
            target,
            perm,
            None,
            Options::default(),
        );
        ensure!(r.is_err(), "permutation {perm:?} onto {target} accepted");
    }
    Ok(())
}

/// Updates of the target, `B := β·B + α·op(A)` (transposed or not), over
/// random layout pairs and every strategy, real and complex, with β = 0 on
/// a target of NaNs (never read) and op the conjugate: every element as
/// the formula says, and refused on every rank where the redistribution was
/// not built for updates.
pub(super) fn updated_pairs(world: &SimpleCommunicator) -> TestResult {
    let c = |re: f64, im: f64| Complex::new(re, im);
    let complex = [
        (c(2.0, 0.0), c(3.0, 0.0), false),
        (c(0.5, 1.0), c(0.0, 0.0), true),
        (c(1.0, 0.0), c(-1.0, 0.5), true),
    ];
    updated_cases(
        world,
        53,
        &complex,
        |g| c(code(g), -2.0 * code(g)),
        |j| c(j.iter().sum::<usize>() as f64, 1.0),
    )?;
    // f64: the vector path of transposing copies.
    let real = [(2.0, 3.0, false), (-0.5, 0.0, false), (1.0, 1.0, false)];
    updated_cases(world, 59, &real, code, |j| j.iter().sum::<usize>() as f64)?;
    // Not built for updates: refused everywhere, nothing left waiting.
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n]).map_err(|e| e.to_string())?;
    let l = Layout::parse(&[9], &format!("block@{n}")).unwrap();
    let t = Layout::parse(&[9], &format!("cyclic@{n}")).unwrap();
    let mut r = Redistribution::<f64>::new(&grid, &l, &grid, &t, Options::default())
        .map_err(|e| e.to_string())?;
    let a = DistArray::from_fn(&grid, l, code).map_err(|e| e.to_string())?;
    let mut b = DistArray::zeros(&grid, t).map_err(|e| e.to_string())?;
    ensure!(r
        .execute_update_into(&a, &mut b, redist::Update::new(2.0, 1.0))
        .is_err());
    r.execute_into(&a, &mut b).map_err(|e| e.to_string())?;
    check(&b, code)
}

/// Random cases of [`updated_pairs`] with elements of type `T`: the source
/// holds `value` of each global index, the target `old` (NaN where β = 0),
/// each of `updates` (α, β, conjugate) applied once.
fn updated_cases<T: redist::Scalar + Element>(
    world: &SimpleCommunicator,
    seed: u64,
    updates: &[(T, T, bool)],
    value: impl Fn(&[usize]) -> T + Send + Sync + Copy,
    old: impl Fn(&[usize]) -> T + Send + Sync + Copy,
) -> TestResult {
    let mut rng = Lcg(seed);
    for case in 0..12 {
        let ndim = case % 3 + 1;
        let max = [40, 13, 7][ndim - 1];
        let (grid_a, from, grid_b, to) = random_case(&mut rng, world, ndim, max)?;
        let transpose = ndim == 2 && case % 2 == 0;
        let to = if transpose {
            random_layout(
                &mut rng,
                &[from.shape()[1], from.shape()[0]],
                to.grid_extents(),
            )
        } else {
            to
        };
        let options = Options {
            strategy: STRATEGIES[rng.below(STRATEGIES.len())],
            node_direct: rng.below(2) == 0,
            updates: true,
            ..Options::default()
        };
        let mut r = if transpose {
            Redistribution::<T>::with_permutation(
                &grid_a,
                &from,
                &grid_b,
                &to,
                &[1, 0],
                None,
                options.clone(),
            )
        } else {
            Redistribution::<T>::new(&grid_a, &from, &grid_b, &to, options.clone())
        }
        .map_err(|e| e.to_string())?;
        // Where target index j comes from in the source.
        let source_of = |j: &[usize]| -> Vec<usize> {
            if transpose {
                vec![j[1], j[0]]
            } else {
                j.to_vec()
            }
        };
        let mut a = DistArray::from_fn(&grid_a, from.clone(), value).map_err(|e| e.to_string())?;
        if rng.below(2) == 0 {
            a = a.into_shared();
        }
        for &(alpha, beta, conjugate) in updates {
            let nan = beta == T::zero();
            let mut b = DistArray::from_fn(&grid_b, r.target_layout().clone(), |j| {
                if nan {
                    nan_of(old(j))
                } else {
                    old(j)
                }
            })
            .map_err(|e| e.to_string())?;
            let update = redist::Update {
                alpha,
                beta,
                conjugate,
            };
            r.execute_update_into(&a, &mut b, update)
                .map_err(|e| format!("{from} -> {to} ({options:?}): {e}"))?;
            check(&b, |j| {
                update.apply(if nan { T::zero() } else { old(j) }, value(&source_of(j)))
            })
            .map_err(|e| format!("{from} -> {to} {update:?} ({}): {e}", r.strategy()))?;
        }
    }
    Ok(())
}

/// A NaN of `x`'s type (`f64` or `Complex<f64>`): what a target holds that
/// an update with β = 0 must never read.
fn nan_of<T: redist::Scalar>(_x: T) -> T {
    bytemuck::cast_slice::<f64, T>(&[f64::NAN, f64::NAN])[0]
}

/// Batches of K arrays through one exchange, over random layout pairs and
/// every strategy: each target as the array it came from, and ranks passing
/// different batch sizes refused everywhere.
pub(super) fn batches(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(61);
    for case in 0..8 {
        let ndim = case % 3 + 1;
        let max = [40, 13, 7][ndim - 1];
        let (grid_a, from, grid_b, to) = random_case(&mut rng, world, ndim, max)?;
        let options = Options {
            strategy: STRATEGIES[rng.below(STRATEGIES.len())],
            ..Options::default()
        };
        let mut r = Redistribution::<f64>::new(&grid_a, &from, &grid_b, &to, options.clone())
            .map_err(|e| e.to_string())?;
        let k = [1, 3, 5][case % 3];
        let value = |j: usize| move |g: &[usize]| code(g) + 0.25 * j as f64;
        let srcs: Vec<DistArray<f64>> = (0..k)
            .map(|j| DistArray::from_fn(&grid_a, from.clone(), value(j)))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        let mut dsts: Vec<DistArray<f64>> = (0..k)
            .map(|_| DistArray::zeros(&grid_b, r.target_layout().clone()))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        for _ in 0..2 {
            let s: Vec<&DistArray<f64>> = srcs.iter().collect();
            let mut d: Vec<&mut DistArray<f64>> = dsts.iter_mut().collect();
            r.execute_batch_into(&s, &mut d)
                .map_err(|e| format!("{from} -> {to} ({options:?}), {k} arrays: {e}"))?;
        }
        for (j, d) in dsts.iter().enumerate() {
            check(d, value(j)).map_err(|e| format!("{from} -> {to}, array {j}: {e}"))?;
        }
    }
    // Another batch size on one rank: refused everywhere, nobody waits.
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n]).map_err(|e| e.to_string())?;
    let l = Layout::parse(&[9], &format!("block@{n}")).unwrap();
    let t = Layout::parse(&[9], &format!("cyclic@{n}")).unwrap();
    let mut r = Redistribution::<f64>::new(&grid, &l, &grid, &t, Options::default())
        .map_err(|e| e.to_string())?;
    let a = DistArray::from_fn(&grid, l, code).map_err(|e| e.to_string())?;
    let mut b = DistArray::zeros(&grid, t.clone()).map_err(|e| e.to_string())?;
    let mut c = DistArray::zeros(&grid, t).map_err(|e| e.to_string())?;
    let two = world.rank() == 0 && n > 1;
    let result = if two {
        r.execute_batch_into(&[&a, &a], &mut [&mut b, &mut c])
    } else {
        r.execute_batch_into(&[&a], &mut [&mut b])
    };
    ensure!(
        n == 1 || result.is_err(),
        "batches of different sizes went unnoticed"
    );
    ensure!(r.execute_batch_into(&[&a], &mut [&mut b, &mut c]).is_err());
    r.execute_batch_into(&[&a, &a], &mut [&mut b, &mut c])
        .map_err(|e| e.to_string())?;
    check(&b, code)?;
    check(&c, code)
}

/// Batches in each of their ways: many small arrays whose ranks move
/// different amounts (rank 0 most), in several groups that every rank
/// must count alike; and arrays long enough to move one by one. Private
/// and shared sources, every strategy.
pub(super) fn batch_ways(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n]).map_err(|e| e.to_string())?;
    // 2500 elements as cyclic(2000): rank 0 holds 2000 and sends about
    // 1000 to a cyclic target (8 KiB, groups of 32 arrays), rank 1 holds
    // 500; 20000 elements send 80 KiB per array, past BATCH_ALONE_BYTES.
    let cases = [
        (2500, "cyclic(2000)", "cyclic", 40),
        (20000, "block", "cyclic(3)", 3),
    ];
    for (len, from, to, k) in cases {
        let from = Layout::parse(&[len], &format!("{from}@{n}")).unwrap();
        let to = Layout::parse(&[len], &format!("{to}@{n}")).unwrap();
        for (s, &strategy) in STRATEGIES.iter().enumerate() {
            let options = Options {
                strategy,
                ..Options::default()
            };
            let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, options.clone())
                .map_err(|e| e.to_string())?;
            let value = |j: usize| move |g: &[usize]| code(g) + 0.25 * j as f64;
            let mut srcs = Vec::with_capacity(k);
            for j in 0..k {
                let a =
                    DistArray::from_fn(&grid, from.clone(), value(j)).map_err(|e| e.to_string())?;
                srcs.push(if s % 2 == 1 { a.into_shared() } else { a });
            }
            let mut dsts: Vec<DistArray<f64>> = (0..k)
                .map(|_| DistArray::zeros(&grid, to.clone()))
                .collect::<Result<_, _>>()
                .map_err(|e| e.to_string())?;
            let s: Vec<&DistArray<f64>> = srcs.iter().collect();
            let mut d: Vec<&mut DistArray<f64>> = dsts.iter_mut().collect();
            r.execute_batch_into(&s, &mut d)
                .map_err(|e| format!("{from} -> {to} ({strategy:?}), {k} arrays: {e}"))?;
            for (j, d) in dsts.iter().enumerate() {
                check(d, value(j))
                    .map_err(|e| format!("{from} -> {to} ({strategy:?}), array {j}: {e}"))?;
            }
        }
    }
    Ok(())
}

/// Batches through node-direct copies (`async` between ranks of one node):
/// sources shared, private on some ranks, or unreadable to some receivers
/// (`Fault::Map` injected), which then ask for their messages: every array
/// of every batch arrives, on every rank.
pub(super) fn node_direct_batches(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(67);
    let me = world.rank() as usize;
    let mut direct = 0;
    for case in 0..6 {
        let ndim = case % 3 + 1;
        let max = [40, 13, 7][ndim - 1];
        let (grid_a, from, grid_b, to) = random_case(&mut rng, world, ndim, max)?;
        let options = Options {
            strategy: Strategy::Async,
            ..Options::default()
        };
        let mut r = Redistribution::<f64>::new(&grid_a, &from, &grid_b, &to, options.clone())
            .map_err(|e| e.to_string())?;
        direct += usize::from(r.reads_shared_sources());
        let k = [2, 3, 4][case % 3];
        let value = |round: usize, j: usize| {
            move |g: &[usize]| code(g) + 0.25 * j as f64 + 10.0 * round as f64
        };
        let mut dsts: Vec<DistArray<f64>> = (0..k)
            .map(|_| DistArray::zeros(&grid_b, r.target_layout().clone()))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        for round in 0..4 {
            // Round 0: every source shared; 1: array 1 private on even
            // ranks; 2: rank 1 cannot map; 3: no rank can.
            let mut srcs = Vec::with_capacity(k);
            for j in 0..k {
                let a = DistArray::from_fn(&grid_a, from.clone(), value(round, j))
                    .map_err(|e| e.to_string())?;
                srcs.push(if round == 1 && j == 1 && me.is_multiple_of(2) {
                    DistArray::from_local(&grid_a, from.clone(), a.into_local())
                        .map_err(|e| e.to_string())?
                } else {
                    a.into_shared()
                });
            }
            if (round == 2 && me == 1) || round == 3 {
                redist::faults::inject(&[redist::faults::Fault::Map]);
            }
            let s: Vec<&DistArray<f64>> = srcs.iter().collect();
            let mut d: Vec<&mut DistArray<f64>> = dsts.iter_mut().collect();
            let result = r.execute_batch_into(&s, &mut d);
            redist::faults::inject(&[]);
            result.map_err(|e| format!("{from} -> {to}, round {round}, {k} arrays: {e}"))?;
            for (j, d) in dsts.iter().enumerate() {
                check(d, value(round, j))
                    .map_err(|e| format!("{from} -> {to}, round {round}, array {j}: {e}"))?;
            }
        }
    }
    ensure!(
        world.size() == 1 || direct > 0,
        "no case read shared sources directly"
    );
    Ok(())
}

/// Values of array `j` of a mixed batch, of several element types (`u8`
/// shares round up to whole words, `c64` shares are two words per element).
fn mixed_values(g: &[usize], j: usize) -> (u8, i32, f64, Complex<f64>) {
    let c = code(g);
    (
        ((c as u64 + j as u64) % 251) as u8,
        c as i32 - j as i32,
        c + 0.25 * j as f64,
        Complex::new(c, j as f64),
    )
}

/// Mixed batches: arrays of u8, i32, f64 and c64 with the same layouts in
/// one exchange, random layout pairs (every strategy, the batch moving the
/// same way whichever), a transposing redistribution, batches of several
/// groups; then ranks passing different types, or a wrong layout on one
/// rank: the same verdict everywhere, nobody waits.
pub(super) fn mixed_batches(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(71);
    let n = world.size() as usize;
    for case in 0..7 {
        let ndim = case % 3 + 1;
        let (grid_a, from, grid_b, to, perm) = if case == 6 {
            // The transpose of a 2-D array: B[j, i] = A[i, j].
            let grid = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
            let from = Layout::parse(&[13, 7], &format!("cyclic(2),*@{n}x1")).unwrap();
            let to = Layout::parse(&[7, 13], &format!("cyclic(3),*@{n}x1")).unwrap();
            (grid.clone(), from, grid, to, Some(vec![1, 0]))
        } else {
            let (a, f, b, t) = random_case(&mut rng, world, ndim, [40, 13, 7][ndim - 1])?;
            (a, f, b, t, None)
        };
        let options = Options {
            strategy: STRATEGIES[case % STRATEGIES.len()],
            ..Options::default()
        };
        let mut r = match &perm {
            Some(p) => Redistribution::<f64>::with_permutation(
                &grid_a,
                &from,
                &grid_b,
                &to,
                p,
                None,
                options.clone(),
            ),
            None => Redistribution::<f64>::new(&grid_a, &from, &grid_b, &to, options.clone()),
        }
        .map_err(|e| e.to_string())?;
        let to = r.target_layout().clone();
        // Source index of a target index.
        let back =
            |g: &[usize]| -> Vec<usize> { perm.as_ref().map_or(g.to_vec(), |_| vec![g[1], g[0]]) };
        let k = [3, 5, 8][case % 3];
        let from_fn = |j: usize| {
            let f = from.clone();
            let a = DistArray::from_fn(&grid_a, f.clone(), move |g| mixed_values(g, j).0);
            let b = DistArray::from_fn(&grid_a, f.clone(), move |g| mixed_values(g, j).1);
            let c = DistArray::from_fn(&grid_a, f.clone(), move |g| mixed_values(g, j).2);
            let d = DistArray::from_fn(&grid_a, f, move |g| mixed_values(g, j).3);
            Ok::<_, dist_array::DistError>((a?, b?, c?, d?))
        };
        let srcs: Vec<_> = (0..k)
            .map(from_fn)
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        let zeros = || -> Result<_, dist_array::DistError> {
            Ok((
                DistArray::<u8>::zeros(&grid_b, to.clone())?,
                DistArray::<i32>::zeros(&grid_b, to.clone())?,
                DistArray::<f64>::zeros(&grid_b, to.clone())?,
                DistArray::<Complex<f64>>::zeros(&grid_b, to.clone())?,
            ))
        };
        let mut dsts: Vec<_> = (0..k)
            .map(|_| zeros())
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        let mut batch = redist::MixedBatch::new();
        // Array j is of the j-th type of four, round and round.
        for (j, (s, d)) in srcs.iter().zip(dsts.iter_mut()).enumerate() {
            match j % 4 {
                0 => batch.push(&s.0, &mut d.0),
                1 => batch.push(&s.1, &mut d.1),
                2 => batch.push(&s.2, &mut d.2),
                _ => batch.push(&s.3, &mut d.3),
            };
        }
        let what = format!("{from} -> {to} ({options:?}), {}", batch.types());
        r.execute_mixed_batch(&mut batch)
            .map_err(|e| format!("{what}: {e}"))?;
        drop(batch);
        for (j, d) in dsts.iter().enumerate() {
            let at = |g: &[usize]| mixed_values(&back(g), j);
            let checked = match j % 4 {
                0 => check(&d.0, |g| at(g).0),
                1 => check(&d.1, |g| at(g).1),
                2 => check(&d.2, |g| at(g).2),
                _ => check(&d.3, |g| at(g).3),
            };
            checked.map_err(|e| format!("{what}, array {j}: {e}"))?;
        }
    }
    mixed_groups(world)?;
    mixed_batch_errors(world)
}

/// A mixed batch of 60 arrays, each moving about 8 KiB from rank 0 (the
/// others less): several groups, every rank counting the same.
fn mixed_groups(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n]).map_err(|e| e.to_string())?;
    let from = Layout::parse(&[2500], &format!("cyclic(2000)@{n}")).unwrap();
    let to = Layout::parse(&[2500], &format!("cyclic@{n}")).unwrap();
    let mut r = Redistribution::<u8>::new(&grid, &from, &grid, &to, Options::default())
        .map_err(|e| e.to_string())?;
    let k = 60;
    let value = |j: usize| move |g: &[usize]| mixed_values(g, j);
    let a: Vec<DistArray<f64>> = (0..k)
        .map(|j| DistArray::from_fn(&grid, from.clone(), move |g| value(j)(g).2))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let b: Vec<DistArray<Complex<f64>>> = (0..k)
        .map(|j| DistArray::from_fn(&grid, from.clone(), move |g| value(j)(g).3))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let mut da: Vec<DistArray<f64>> = (0..k)
        .map(|_| DistArray::zeros(&grid, to.clone()))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let mut db: Vec<DistArray<Complex<f64>>> = (0..k)
        .map(|_| DistArray::zeros(&grid, to.clone()))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let mut batch = redist::MixedBatch::new();
    for ((s, d), (t, e)) in a.iter().zip(da.iter_mut()).zip(b.iter().zip(db.iter_mut())) {
        batch.push(s, d).push(t, e);
    }
    r.execute_mixed_batch(&mut batch)
        .map_err(|e| format!("60 pairs: {e}"))?;
    drop(batch);
    for j in 0..k {
        check(&da[j], |g| value(j)(g).2).map_err(|e| format!("f64 array {j}: {e}"))?;
        check(&db[j], |g| value(j)(g).3).map_err(|e| format!("c64 array {j}: {e}"))?;
    }
    Ok(())
}

/// Mixed batches refused alike on every rank: types in another order on
/// rank 0, a pair with another layout on the last rank; an empty batch is
/// nothing to do.
fn mixed_batch_errors(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let me = world.rank() as usize;
    let grid = ProcGrid::new(world, &[n]).map_err(|e| e.to_string())?;
    let l = Layout::parse(&[9], &format!("block@{n}")).unwrap();
    let t = Layout::parse(&[9], &format!("cyclic@{n}")).unwrap();
    let mut r = Redistribution::<f64>::new(&grid, &l, &grid, &t, Options::default())
        .map_err(|e| e.to_string())?;
    let a = DistArray::from_fn(&grid, l.clone(), code).map_err(|e| e.to_string())?;
    let i = DistArray::from_fn(&grid, l.clone(), |g| code(g) as i32).map_err(|e| e.to_string())?;
    let mut b = DistArray::zeros(&grid, t.clone()).map_err(|e| e.to_string())?;
    let mut j = DistArray::<i32>::zeros(&grid, t.clone()).map_err(|e| e.to_string())?;
    let mut batch = redist::MixedBatch::new();
    if me == 0 && n > 1 {
        batch.push(&i, &mut j).push(&a, &mut b);
    } else {
        batch.push(&a, &mut b).push(&i, &mut j);
    }
    let result = r.execute_mixed_batch(&mut batch);
    drop(batch);
    ensure!(
        n == 1 || matches!(result, Err(redist::RedistError::Disagreement { .. })),
        "types in another order on rank 0 went unnoticed: {result:?}"
    );
    let mut wrong = DistArray::<i32>::zeros(&grid, l.clone()).map_err(|e| e.to_string())?;
    let mut batch = redist::MixedBatch::new();
    batch.push(&a, &mut b);
    if me == n - 1 {
        batch.push(&i, &mut wrong);
    } else {
        batch.push(&i, &mut j);
    }
    let result = r.execute_mixed_batch(&mut batch);
    drop(batch);
    ensure!(
        result.is_err(),
        "a wrong target layout on the last rank went unnoticed"
    );
    ensure!(r
        .execute_mixed_batch(&mut redist::MixedBatch::new())
        .is_ok());
    let mut batch = redist::MixedBatch::new();
    batch.push(&a, &mut b).push(&i, &mut j);
    r.execute_mixed_batch(&mut batch)
        .map_err(|e| e.to_string())?;
    drop(batch);
    check(&b, code)?;
    check(&j, |g| code(g) as i32)
}
