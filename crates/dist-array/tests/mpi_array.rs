//! DistArray under MPI: launched by the harness with 1, 2, 3, 4, 5, 6 and 8 ranks.
#![allow(
    clippy::cast_possible_truncation,
    reason = "test values are small or wrap on purpose"
)]

use dist_array::{Complex, Dist, DistArray, DistError, Element, Layout, LayoutSpec, Order};
use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{all_indices, ensure, ensure_eq, MpiTest, TestResult};
use ndarray::{ArrayD, Dimension, IxDyn, ShapeBuilder};
use procgrid::{balanced_extents, ProcGrid};

/// A small deterministic generator: every rank draws the same cases.
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

/// A random layout of `ndim` dimensions on `grid`: random non-divisible
/// shapes, block sizes, offsets, rank map and storage order.
fn random_layout(rng: &mut Lcg, grid: &ProcGrid) -> Layout {
    let extents = grid.extents();
    let max = [29, 13, 7, 5][extents.len() - 1];
    let shape: Vec<usize> = extents.iter().map(|_| rng.below(max) + 1).collect();
    let dists: Vec<Dist> = extents
        .iter()
        .map(|&p| {
            let first = rng.below(p);
            match rng.below(4) {
                0 if p == 1 => Dist::Collapsed,
                0 | 1 => Dist::block().starting_at(first),
                _ => Dist::cyclic(rng.below(5) + 1).starting_at(first),
            }
        })
        .collect();
    let spec = LayoutSpec::new(dists, extents.to_vec()).unwrap();
    let mut layout = Layout::new(&shape, &spec).unwrap();
    if rng.below(2) == 0 {
        let mut map: Vec<usize> = (0..layout.ranks()).collect();
        for i in (1..map.len()).rev() {
            map.swap(i, rng.below(i + 1));
        }
        layout = layout.with_rank_map(map).unwrap();
    }
    if rng.below(2) == 0 {
        layout = layout.with_storage(Order::ColumnMajor);
    }
    layout
}

/// Grids of 1 to 4 dimensions over the world: balanced ones and lopsided ones.
fn grids(world: &SimpleCommunicator) -> Vec<ProcGrid> {
    let n = world.size() as usize;
    let mut shapes: Vec<Vec<usize>> = (1..=4)
        .map(|k| balanced_extents(n, &vec![0; k]).unwrap())
        .collect();
    shapes.push(vec![1, n]);
    shapes.push(vec![n, 1, 1]);
    shapes
        .into_iter()
        .map(|s| ProcGrid::new(world, &s).unwrap())
        .collect()
}

fn code(g: &[usize]) -> i64 {
    g.iter().fold(0i64, |acc, &x| acc * 1000 + x as i64 + 1)
}

/// Every local element holds the code of its global index.
fn check_local<T: Element>(a: &DistArray<T>, expect: impl Fn(&[usize]) -> T) -> TestResult {
    let Some(rank) = a.rank() else {
        ensure_eq!(a.local().len(), 0);
        return Ok(());
    };
    let local = a.local();
    ensure_eq!(local.shape(), &a.layout().local_shape(rank).unwrap()[..]);
    for l in all_indices(local.shape()) {
        let g = a.layout().local_to_global(rank, &l).unwrap();
        ensure_eq!(
            local[IxDyn(&l)],
            expect(&g),
            "local {:?} global {:?} layout {}",
            l,
            g,
            a.layout()
        );
    }
    Ok(())
}

fn from_fn_and_gather(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(7);
    let n = world.size() as usize;
    for grid in grids(world) {
        for case in 0..6 {
            let layout = random_layout(&mut rng, &grid);
            let a = DistArray::from_fn(&grid, layout.clone(), code).map_err(|e| e.to_string())?;
            check_local(&a, code)?;
            let root = case % n;
            let whole = a.gather(root).map_err(|e| e.to_string())?;
            ensure_eq!(whole.is_some(), world.rank() as usize == root);
            if let Some(w) = whole {
                ensure_eq!(w.shape(), layout.shape());
                for g in all_indices(layout.shape()) {
                    ensure_eq!(w[IxDyn(&g)], code(&g), "gathered {:?} of {}", g, layout);
                }
            }
        }
    }
    Ok(())
}

fn scatter_round_trip(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(11);
    let n = world.size() as usize;
    for grid in grids(world) {
        for case in 0..4 {
            let layout = random_layout(&mut rng, &grid);
            let root = (case * 3 + 1) % n;
            let whole = (world.rank() as usize == root)
                .then(|| ArrayD::from_shape_fn(IxDyn(layout.shape()), |g| code(g.slice()) as f64));
            let a = DistArray::scatter(
                &grid,
                layout.clone(),
                root,
                whole.as_ref().map(|w| w.view()),
            )
            .map_err(|e| e.to_string())?;
            check_local(&a, |g| code(g) as f64)?;
            let back = a.gather(root).map_err(|e| e.to_string())?;
            ensure_eq!(back, whole, "scatter then gather of {}", layout);
            // A column-major source array on the root scatters the same way.
            let fortran = whole.as_ref().map(|w| {
                let mut f = ArrayD::zeros(IxDyn(layout.shape()).f());
                f.assign(w);
                f
            });
            let b = DistArray::scatter(
                &grid,
                layout.clone(),
                root,
                fortran.as_ref().map(|w| w.view()),
            )
            .map_err(|e| e.to_string())?;
            ensure_eq!(b.local(), a.local());
        }
    }
    Ok(())
}

fn reductions(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(13);
    for grid in grids(world) {
        for _ in 0..4 {
            let layout = random_layout(&mut rng, &grid);
            let values = |g: &[usize]| (code(g) % 97) - 48;
            let a = DistArray::from_fn(&grid, layout.clone(), values).map_err(|e| e.to_string())?;
            let all = all_indices(layout.shape());
            let sum: i128 = all.iter().map(|g| values(g) as i128).sum();
            let max = all.iter().map(|g| values(g).abs()).max().unwrap_or(0) as f64;
            let norm = (all
                .iter()
                .map(|g| (values(g) * values(g)) as f64)
                .sum::<f64>())
            .sqrt();
            ensure_eq!(a.sum().map_err(|e| e.to_string())?, sum);
            ensure_eq!(a.max_abs().map_err(|e| e.to_string())?, max);
            let got = a.norm2().map_err(|e| e.to_string())?;
            ensure!(
                (got - norm).abs() <= 1e-12 * norm.max(1.0),
                "norm {got} vs {norm}"
            );
            // Every rank holds the same bits.
            let f = DistArray::from_fn(&grid, layout.clone(), |g| values(g) as f64 * 0.1)
                .map_err(|e| e.to_string())?;
            let s = f.sum().map_err(|e| e.to_string())?;
            let mut bits = vec![0u64; world.size() as usize];
            world.all_gather_into(&s.to_bits(), &mut bits[..]);
            ensure!(
                bits.iter().all(|&b| b == bits[0]),
                "sums differ across ranks: {bits:?}"
            );
        }
    }
    Ok(())
}

fn typed<T: Element>(world: &SimpleCommunicator, make: fn(&[usize]) -> T) -> TestResult {
    let mut rng = Lcg(17);
    for grid in grids(world).into_iter().take(3) {
        let layout = random_layout(&mut rng, &grid);
        let a = DistArray::from_fn(&grid, layout.clone(), make).map_err(|e| e.to_string())?;
        check_local(&a, make)?;
        if let Some(w) = a.gather(0).map_err(|e| e.to_string())? {
            for g in all_indices(layout.shape()) {
                ensure_eq!(w[IxDyn(&g)], make(&g), "{}", T::NAME);
            }
        }
    }
    Ok(())
}

fn element_types(world: &SimpleCommunicator) -> TestResult {
    typed::<f32>(world, |g| code(g) as f32 * 0.5)?;
    typed::<f64>(world, |g| code(g) as f64 * 0.25)?;
    typed::<i32>(world, |g| -(code(g) as i32))?;
    typed::<i64>(world, |g| code(g) << 20)?;
    typed::<u8>(world, |g| (code(g) % 251) as u8)?;
    typed::<Complex<f64>>(world, |g| Complex::new(code(g) as f64, -(g[0] as f64)))?;
    typed::<Complex<f32>>(world, |g| Complex::new(g[0] as f32, code(g) as f32))?;
    Ok(())
}

fn bulk_operations(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(19);
    for grid in grids(world) {
        let layout = random_layout(&mut rng, &grid);
        let mut y = DistArray::from_fn(&grid, layout.clone(), |g| code(g) as f64)
            .map_err(|e| e.to_string())?;
        let x = DistArray::from_fn(&grid, layout.clone(), |g| g[0] as i32)
            .map_err(|e| e.to_string())?;
        y.map_inplace(|v| *v = *v * 2.0 + 1.0);
        y.zip_with(&x, |v, &w| *v -= w as f64)
            .map_err(|e| e.to_string())?;
        check_local(&y, |g| code(g) as f64 * 2.0 + 1.0 - g[0] as f64)?;
        let other = Layout::new(layout.shape(), layout.spec())
            .unwrap()
            .with_storage(match layout.storage() {
                Order::RowMajor => Order::ColumnMajor,
                Order::ColumnMajor => Order::RowMajor,
            });
        let z = DistArray::<f64>::zeros(&grid, other).map_err(|e| e.to_string())?;
        ensure!(matches!(
            y.zip_with(&z, |_, _| {}),
            Err(DistError::LayoutMismatch { .. })
        ));
    }
    Ok(())
}

fn subset_grid(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let me = world.rank() as usize;
    let used = n.div_ceil(2);
    let grid = ProcGrid::builder(&[used, 1])
        .subset(true)
        .build(world)
        .map_err(|e| e.to_string())?;
    let layout = Layout::parse(&[11, 3], &format!("cyclic(2),*@{used}x1")).unwrap();
    let a = DistArray::from_fn(&grid, layout.clone(), code).map_err(|e| e.to_string())?;
    ensure_eq!(a.rank().is_some(), me < used);
    check_local(&a, code)?;
    ensure_eq!(
        a.sum().map_err(|e| e.to_string())?,
        all_indices(&[11, 3])
            .iter()
            .map(|g| code(g) as i128)
            .sum::<i128>()
    );
    let root = n - 1; // possibly a rank outside the grid
    if let Some(w) = a.gather(root).map_err(|e| e.to_string())? {
        ensure_eq!(
            w,
            ArrayD::from_shape_fn(IxDyn(&[11, 3]), |g| code(g.slice()))
        );
    }
    Ok(())
}

/// Large local parts live in shared storage, small ones can be moved there,
/// and either way the array reads, writes, reduces and gathers the same.
fn shared_storage(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    // 256 rows of 512 i64 per rank: 1 MiB, above the sharing threshold (64
    // KiB unless the environment sets another: `never` keeps it private).
    let shares = 256 * 512 * 8 >= dist_array::storage::shared_min_bytes();
    let large = Layout::parse(&[256 * n, 512], &format!("cyclic(8),*@{n}x1")).unwrap();
    let a = DistArray::from_fn(&grid, large.clone(), code).map_err(|e| e.to_string())?;
    let s = a.shared_storage();
    ensure_eq!(s.is_some(), shares);
    if let Some(s) = s {
        ensure_eq!(s.bytes, 256 * 512 * 8);
    }
    check_local(&a, code)?;
    let z = DistArray::<i64>::zeros(&grid, large).map_err(|e| e.to_string())?;
    ensure_eq!(z.shared_storage().is_some(), shares);
    ensure!(z.local_slice().iter().all(|&x| x == 0));
    let small = Layout::parse(&[37, 5], &format!("cyclic(2),*@{n}x1")).unwrap();
    let b = DistArray::from_fn(&grid, small, code).map_err(|e| e.to_string())?;
    // Private, unless the environment lowers the shared threshold.
    let bytes = std::mem::size_of_val(b.local_slice());
    let large = bytes >= dist_array::storage::shared_min_bytes();
    ensure_eq!(b.shared_storage().is_some(), large);
    let sum = b.sum().map_err(|e| e.to_string())?;
    let whole = b.gather(0).map_err(|e| e.to_string())?;
    let mut c = b.clone().into_shared();
    ensure_eq!(c.shared_storage().is_some(), !b.local().is_empty());
    check_local(&c, code)?;
    ensure_eq!(c.sum().map_err(|e| e.to_string())?, sum);
    ensure!(c.gather(0).map_err(|e| e.to_string())? == whole);
    // A clone is its own storage; into_local copies the values out.
    let d = c.clone();
    c.map_inplace(|x| *x = -*x);
    check_local(&d, code)?;
    check_local(&c, |g| -code(g))?;
    ensure!(d.clone().into_local() == d.local().to_owned());
    Ok(())
}

fn errors_agree(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let me = world.rank() as usize;
    let grid = ProcGrid::new(world, &[n]).map_err(|e| e.to_string())?;
    let layout = Layout::parse(&[10], &format!("block@{n}")).unwrap();
    let root = n / 2;
    // The root supplies a wrong shape: everyone gets the root's verdict.
    let wrong = ArrayD::<f64>::zeros(IxDyn(&[3, 4]));
    let r = DistArray::scatter(
        &grid,
        layout.clone(),
        root,
        (me == root).then(|| wrong.view()),
    );
    ensure_eq!(
        r.err(),
        Some(DistError::ShapeMismatch {
            expected: vec![10],
            got: vec![3, 4]
        })
    );
    // The root supplies nothing, while others do: everyone gets MissingRootArray.
    let right = ArrayD::<f64>::zeros(IxDyn(&[10]));
    let r = DistArray::scatter(
        &grid,
        layout.clone(),
        root,
        (me != root).then(|| right.view()),
    );
    ensure_eq!(r.err(), Some(DistError::MissingRootArray { root }));
    let r = DistArray::scatter(&grid, layout.clone(), n, Some(right.view()));
    ensure_eq!(r.err(), Some(DistError::BadRoot { root: n, size: n }));
    let a = DistArray::<f64>::zeros(&grid, layout.clone()).map_err(|e| e.to_string())?;
    ensure_eq!(
        a.gather(n + 3).err(),
        Some(DistError::BadRoot {
            root: n + 3,
            size: n
        })
    );
    let mismatched = Layout::parse(&[10], &format!("block@{}", n + 1)).unwrap();
    ensure!(matches!(
        DistArray::<f64>::zeros(&grid, mismatched),
        Err(DistError::GridMismatch { .. })
    ));
    // Too large for one MPI call (4 GiB): refused on every rank before any
    // allocation or communication.
    let grid2 = ProcGrid::new(world, &[n, 1]).map_err(|e| e.to_string())?;
    let huge = Layout::parse(&[1 << 20, 1 << 9], &format!("block,*@{n}x1")).unwrap();
    let r = DistArray::<u64>::scatter(&grid2, huge, 0, None);
    ensure!(
        matches!(
            r,
            Err(DistError::TooLarge {
                what: "scatter",
                ..
            })
        ),
        "{:?}",
        r.err()
    );
    // Nobody is stuck: a collective still completes.
    world.barrier();
    let ok = DistArray::scatter(&grid, layout, root, (me == root).then(|| right.view()))
        .map_err(|e| e.to_string())?;
    ensure_eq!(ok.sum().map_err(|e| e.to_string())?, 0.0);
    Ok(())
}

fn main() {
    mpi_harness::run(
        "dist_array",
        &[
            MpiTest::new("from_fn_and_gather", from_fn_and_gather),
            MpiTest::new("scatter_round_trip", scatter_round_trip),
            MpiTest::new("reductions", reductions),
            MpiTest::new("element_types", element_types),
            MpiTest::new("bulk_operations", bulk_operations),
            MpiTest::new("subset_grid", subset_grid),
            MpiTest::new("shared_storage", shared_storage),
            MpiTest::new("errors_agree", errors_agree),
        ],
    );
}
