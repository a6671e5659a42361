//! ndcyclic next to ScaLAPACK (`redist_cli::scalapack`, feature
//! `scalapack`), launched by the MPI harness with 1, 2, 3 and 4 ranks: the
//! same arrays through `pdgemr2d` and through a `Redistribution`, compared
//! element by element, whole and in windows; descriptors and layouts round
//! trip.
#![allow(clippy::cast_possible_truncation, reason = "test values are small")]

use dist_array::{Dist, DistArray, Layout, LayoutSpec, Order};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, MpiTest, TestResult};
use procgrid::ProcGrid;
use redist::{Options, Redistribution, Window};
use redist_cli::scalapack::{self, AddOperands, BlacsContext, PblasRoutine, SubMatrix};

struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// The divisors pairs (P, Q) with P·Q = n, one picked at random.
fn random_grid(rng: &mut Lcg, n: usize) -> [usize; 2] {
    let divisors: Vec<usize> = (1..=n).filter(|d| n.is_multiple_of(*d)).collect();
    let p = divisors[rng.below(divisors.len())];
    [p, n / p]
}

/// A random ScaLAPACK-expressible layout: block, cyclic(b) or `*` per
/// dimension, random first processes and rank map, column-major.
fn random_layout(rng: &mut Lcg, shape: &[usize], grid: &[usize]) -> Layout {
    let dists: Vec<Dist> = grid
        .iter()
        .map(|&p| {
            let first = rng.below(p);
            match rng.below(4) {
                0 if p == 1 => Dist::Collapsed,
                0 => Dist::block().starting_at(first),
                _ => Dist::cyclic(rng.below(5) + 1).starting_at(first),
            }
        })
        .collect();
    let l = Layout::new(shape, &LayoutSpec::new(dists, grid.to_vec()).unwrap()).unwrap();
    let mut map: Vec<usize> = (0..l.ranks()).collect();
    for i in (1..map.len()).rev() {
        map.swap(i, rng.below(i + 1));
    }
    l.with_rank_map(map)
        .unwrap()
        .with_storage(Order::ColumnMajor)
}

fn value(g: &[usize]) -> f64 {
    (1000 * g[0] + g[1]) as f64 + 0.5
}

/// Random windows between random layouts on random grids: the target after
/// `pdgemr2d` equals the target after ndcyclic, element by element, and
/// both hold the window's values with the rest untouched.
fn same_as_pdgemr2d(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let mut rng = Lcg(5);
    let everyone = ProcGrid::new(world, &[1, n]).map_err(|e| e.to_string())?;
    let context = BlacsContext::spanning(&everyone).map_err(|e| e.to_string())?;
    for case in 0..10 {
        let a_shape = [rng.below(30) + 1, rng.below(30) + 1];
        let b_shape = [rng.below(30) + 1, rng.below(30) + 1];
        let whole = case % 3 == 0;
        let b_shape = if whole { a_shape } else { b_shape };
        let w: Vec<usize> = (0..2)
            .map(|d| rng.below(a_shape[d].min(b_shape[d])) + 1)
            .collect();
        let window = if whole {
            Window::whole(&a_shape)
        } else {
            let ia: Vec<usize> = (0..2).map(|d| rng.below(a_shape[d] - w[d] + 1)).collect();
            let ib: Vec<usize> = (0..2).map(|d| rng.below(b_shape[d] - w[d] + 1)).collect();
            Window::new(&ia, &ib, &w).map_err(|e| e.to_string())?
        };
        let (ga, gb) = (random_grid(&mut rng, n), random_grid(&mut rng, n));
        let grid_a = ProcGrid::builder(&ga)
            .build_sharing(&everyone)
            .map_err(|e| e.to_string())?;
        let grid_b = ProcGrid::builder(&gb)
            .build_sharing(&everyone)
            .map_err(|e| e.to_string())?;
        let from = random_layout(&mut rng, &a_shape, &ga);
        let to = random_layout(&mut rng, &b_shape, &gb);
        let what = format!("{window} of {from} -> {to}");
        let ctx_a = BlacsContext::for_layout(&grid_a, &from).map_err(|e| e.to_string())?;
        let ctx_b = BlacsContext::for_layout(&grid_b, &to).map_err(|e| e.to_string())?;
        let desc_a = scalapack::descriptor(&from, &ctx_a).map_err(|e| e.to_string())?;
        let desc_b = scalapack::descriptor(&to, &ctx_b).map_err(|e| e.to_string())?;
        let a = DistArray::from_fn(&grid_a, from.clone(), value).map_err(|e| e.to_string())?;
        let mut by_scalapack =
            DistArray::from_fn(&grid_b, to.clone(), |_| -1.0).map_err(|e| e.to_string())?;
        scalapack::pdgemr2d(&window, &a, &desc_a, &mut by_scalapack, &desc_b, &context)
            .map_err(|e| format!("{what}: {e}"))?;
        let mut r = Redistribution::<f64>::with_window(
            &grid_a,
            &from,
            &grid_b,
            &to,
            &window,
            Options::default(),
        )
        .map_err(|e| format!("{what}: {e}"))?;
        let mut by_ndcyclic =
            DistArray::from_fn(&grid_b, to.clone(), |_| -1.0).map_err(|e| e.to_string())?;
        r.execute_into(&a, &mut by_ndcyclic)
            .map_err(|e| format!("{what}: {e}"))?;
        ensure!(
            by_scalapack.local_slice() == by_ndcyclic.local_slice(),
            "{what}: pdgemr2d and ndcyclic differ on rank {}",
            world.rank()
        );
        // And both are right (not merely equal).
        let bad = by_ndcyclic.count_where(|g, v| {
            let want = window.source_index_of(g).map_or(-1.0, |s| value(&s));
            *v != want
        });
        ensure_eq!(bad, 0, "{what}: wrong elements");
    }
    Ok(())
}

/// A descriptor gives back its layout; layouts ScaLAPACK cannot hold are
/// refused.
fn descriptors_round_trip(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let mut rng = Lcg(9);
    for _ in 0..6 {
        let g = random_grid(&mut rng, n);
        let grid = ProcGrid::new(world, &g).map_err(|e| e.to_string())?;
        let shape = [rng.below(40) + 1, rng.below(40) + 1];
        let layout = random_layout(&mut rng, &shape, &g);
        let ctx = BlacsContext::for_layout(&grid, &layout).map_err(|e| e.to_string())?;
        ensure_eq!(ctx.shape(), (g[0], g[1]));
        let desc = scalapack::descriptor(&layout, &ctx).map_err(|e| e.to_string())?;
        let back = scalapack::layout_from_descriptor(&desc, &grid).map_err(|e| e.to_string())?;
        // The same owner and local index for every element.
        for i in 0..shape[0] {
            for j in 0..shape[1] {
                ensure_eq!(
                    back.global_to_local(&[i, j]).map_err(|e| e.to_string())?,
                    layout.global_to_local(&[i, j]).map_err(|e| e.to_string())?,
                    "{layout} vs {back} at ({i}, {j})"
                );
            }
        }
        let a = DistArray::<f64>::zeros(&grid, layout.clone()).map_err(|e| e.to_string())?;
        if let Some(rank) = a.rank() {
            let rows = layout.local_shape(rank).map_err(|e| e.to_string())?[0];
            ensure_eq!(desc[8], rows.max(1) as i32, "LLD of {layout}");
        }
        let row_major = layout.clone().with_storage(Order::RowMajor);
        ensure!(scalapack::descriptor(&row_major, &ctx).is_err());
    }
    Ok(())
}

/// Random sub-matrix cases of `C := β·C + α·op(A)` on one grid (PBLAS's
/// rule: one context): PBLAS's `pdtran` and `pdgeadd` ('N' and 'T') and
/// ndcyclic's redistributions with the same semantics leave the same
/// target, element by element, and both agree with a naive oracle on the
/// gathered matrices.
fn same_as_pdtran_and_pdgeadd(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let mut rng = Lcg(11);
    for case in 0..12 {
        let gshape = random_grid(&mut rng, n);
        let grid = ProcGrid::new(world, &gshape).map_err(|e| e.to_string())?;
        // sub(C) is m × n; sub(A) is n × m transposed, m × n not.
        let transpose = case % 3 != 2;
        let tran = case % 3 == 0;
        let (m, k) = (rng.below(20) + 1, rng.below(20) + 1);
        let (am, an) = if transpose { (k, m) } else { (m, k) };
        let a_shape = [am + rng.below(6), an + rng.below(6)];
        let c_shape = [m + rng.below(6), k + rng.below(6)];
        let ia = [
            rng.below(a_shape[0] - am + 1),
            rng.below(a_shape[1] - an + 1),
        ];
        let ic = [rng.below(c_shape[0] - m + 1), rng.below(c_shape[1] - k + 1)];
        let a = random_layout(&mut rng, &a_shape, &gshape);
        // One context for both (PBLAS's rule): C numbers its ranks as A.
        let c = random_layout(&mut rng, &c_shape, &gshape)
            .with_rank_map(a.rank_map())
            .map_err(|e| e.to_string())?;
        let context = BlacsContext::for_layout(&grid, &a).map_err(|e| e.to_string())?;
        let (alpha, beta) = [(1.0, 0.0), (2.0, 3.0), (-0.5, 1.0)][case % 3];
        let what = format!(
            "case {case}: C {c} at {ic:?} := {beta}·C + {alpha}·op(A {a} at {ia:?}), {m}x{k}, \
             {}",
            if tran {
                "pdtran"
            } else if transpose {
                "pdgeadd T"
            } else {
                "pdgeadd N"
            }
        );
        let src = DistArray::from_fn(&grid, a.clone(), value).map_err(|e| e.to_string())?;
        let old = |g: &[usize]| -((g[0] + 7 * g[1]) as f64);
        let mut ours = DistArray::from_fn(&grid, c.clone(), old).map_err(|e| e.to_string())?;
        let mut theirs = ours.clone();
        let options = Options {
            updates: true,
            ..Options::default()
        };
        let mut r = if transpose {
            let a = SubMatrix {
                grid: &grid,
                layout: &a,
                origin: ia,
            };
            let c = SubMatrix {
                grid: &grid,
                layout: &c,
                origin: ic,
            };
            scalapack::transposition::<f64>(a, c, [m, k], options)
        } else {
            let w = Window::new(&ia, &ic, &[m, k]).map_err(|e| e.to_string())?;
            Redistribution::with_window(&grid, &a, &grid, &c, &w, options)
        }
        .map_err(|e| format!("{what}: {e}"))?;
        r.execute_update_into(&src, &mut ours, redist::Update::new(alpha, beta))
            .map_err(|e| format!("{what}: {e}"))?;
        let desc_a = scalapack::descriptor(&a, &context).map_err(|e| e.to_string())?;
        let desc_c = scalapack::descriptor(&c, &context).map_err(|e| e.to_string())?;
        let window = Window::new(&ia, &ic, &[am, an]).map_err(|e| e.to_string())?;
        let routine = if tran {
            PblasRoutine::Tran
        } else {
            PblasRoutine::Geadd { transpose }
        };
        let operands = AddOperands {
            alpha,
            a: &src,
            desc_a: &desc_a,
            beta,
            c: &mut theirs,
            desc_c: &desc_c,
        };
        scalapack::pblas_add(routine, &window, operands).map_err(|e| format!("{what}: {e}"))?;
        let o = ours.gather(0).map_err(|e| e.to_string())?;
        let t = theirs.gather(0).map_err(|e| e.to_string())?;
        if let (Some(o), Some(t)) = (o, t) {
            for i in 0..c_shape[0] {
                for j in 0..c_shape[1] {
                    let inside = (ic[0]..ic[0] + m).contains(&i) && (ic[1]..ic[1] + k).contains(&j);
                    let want = if inside {
                        let (si, sj) = (i - ic[0], j - ic[1]);
                        let g = if transpose {
                            [ia[0] + sj, ia[1] + si]
                        } else {
                            [ia[0] + si, ia[1] + sj]
                        };
                        beta * old(&[i, j]) + alpha * value(&g)
                    } else {
                        old(&[i, j])
                    };
                    ensure_eq!(o[[i, j]], want, "{what}: ndcyclic at ({i}, {j})");
                    ensure_eq!(t[[i, j]], want, "{what}: PBLAS at ({i}, {j})");
                }
            }
        }
    }
    Ok(())
}

fn main() {
    mpi_harness::run_with_ranks(
        "scalapack",
        &[1, 2, 3, 4],
        &[
            MpiTest::new("same_as_pdgemr2d", same_as_pdgemr2d),
            MpiTest::new("descriptors_round_trip", descriptors_round_trip),
            MpiTest::new("same_as_pdtran_and_pdgeadd", same_as_pdtran_and_pdgeadd),
        ],
    );
}
