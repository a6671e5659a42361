//! Saving and loading under MPI, one program of three suites (the files
//! NumPy reads and writes, `suites/numpy_files.rs`, and with the feature
//! `hdf5` HDF5 datasets, `suites/hdf5.rs`, next to its own), launched by
//! the harness with 1, 2, 3, 4, 5, 6 and 8 ranks: round trips between random layouts, grids, element
//! types and storage orders; windows; files written by one rank count and
//! read by another; every refusal, the same on every rank; failures that
//! leave the previous file as it was.

mod common;
mod suites;

use common::{limit_file_size, linear, same_everywhere, Code, Lcg};
use dist_array::{Complex, Dist, DistArray, Layout, LayoutSpec, Order};
use dist_io::{Aggregators, ElementType, IoError, IoOptions};
use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::topology::{Color, Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, MpiTest, Suite, TestResult};
use procgrid::{balanced_extents, ProcGrid};
use std::path::{Path, PathBuf};

/// Where the launches keep their files: set by the launcher for every
/// launch, so a launch can read what launches of other rank counts wrote.
const DIR_VAR: &str = "NDCYCLIC_IO_TEST_DIR";

fn dir() -> PathBuf {
    PathBuf::from(std::env::var(DIR_VAR).expect("the launcher sets the test folder"))
}

/// An array holding the code of its global index in a file of `file`
/// shape, the array being the window at `origin`.
fn coded<T: Code>(grid: &ProcGrid, layout: Layout) -> DistArray<T> {
    let shape = layout.shape().to_vec();
    DistArray::from_fn(grid, layout, |g| T::code(linear(&shape, g))).unwrap()
}

/// Whether every element of `a`, on every rank, holds the code of its
/// index in a file's array of shape `file` (`a` being the window at
/// `origin`). Collective.
fn holds_codes<T: Code>(
    world: &SimpleCommunicator,
    a: &DistArray<T>,
    file: &[usize],
    origin: &[usize],
) -> bool {
    let bad = a.count_where(|g, v| {
        let at: Vec<usize> = g.iter().zip(origin).map(|(a, b)| a + b).collect();
        *v != T::code(linear(file, &at))
    }) as u64;
    let mut all = 0u64;
    world.all_reduce_into(&bad, &mut all, SystemOperation::sum());
    all == 0
}

/// A random layout on `grid`: non-divisible shapes, block sizes, first
/// blocks, rank map, storage order.
fn random_layout(rng: &mut Lcg, grid: &ProcGrid, shape: &[usize]) -> Layout {
    let extents = grid.extents();
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
    let mut layout = Layout::new(shape, &spec).unwrap();
    if rng.below(3) == 0 {
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

/// A random grid of `k` dimensions over the world.
fn random_grid(rng: &mut Lcg, world: &SimpleCommunicator, k: usize) -> ProcGrid {
    let n = world.size() as usize;
    let mut extents = balanced_extents(n, &vec![0; k]).unwrap();
    if rng.below(2) == 0 {
        extents.reverse();
    }
    if rng.below(3) == 0 {
        extents = vec![1; k];
        extents[rng.below(k)] = n;
    }
    ProcGrid::new(world, &extents).unwrap()
}

fn random_options(rng: &mut Lcg, world: &SimpleCommunicator, bytes: usize) -> IoOptions {
    let n = world.size() as usize;
    let aggregators = match rng.below(4) {
        0 => Aggregators::PerNode(1),
        1 => Aggregators::Count(rng.below(n) + 1),
        2 => Aggregators::PerNode(n),
        _ if n > 1 => {
            Aggregators::Ranks(vec![n - 1, 0].into_iter().take(rng.below(2) + 1).collect())
        }
        _ => Aggregators::Ranks(vec![0]),
    };
    // Between one round and about four.
    let staging = (bytes / (rng.below(4) + 1)).max(16);
    IoOptions::default()
        .aggregators(aggregators)
        .staging_bytes(staging)
}

/// One random round trip of element type `T`: saved from one random
/// layout, loaded into another on another grid. Collective.
fn round_trip<T: Code>(world: &SimpleCommunicator, rng: &mut Lcg, case: usize) -> TestResult {
    let k = rng.below(3) + 1;
    let max = [200, 23, 9][k - 1];
    let shape: Vec<usize> = (0..k).map(|_| rng.below(max) + 1).collect();
    let g1 = random_grid(rng, world, k);
    let l1 = random_layout(rng, &g1, &shape);
    let a: DistArray<T> = coded(&g1, l1.clone());
    let path = dir().join(format!("trip-{}-{case}.npy", world.size()));
    let bytes = shape.iter().product::<usize>() * std::mem::size_of::<T>();
    let options = random_options(rng, world, bytes);
    dist_io::save(&a, &path, &options).map_err(|e| format!("case {case}: {e}"))?;
    let info = dist_io::info(&path, &IoOptions::default()).map_err(|e| e.to_string())?;
    ensure_eq!(info.shape, shape);
    ensure_eq!(info.element, ElementType::of::<T>());
    ensure_eq!(info.order, l1.storage());
    let g2 = random_grid(rng, world, k);
    let l2 = random_layout(rng, &g2, &shape);
    let options = random_options(rng, world, bytes).storage(l2.storage());
    let b: DistArray<T> =
        dist_io::load(&g2, l2.spec(), &path, &options).map_err(|e| format!("case {case}: {e}"))?;
    ensure!(
        holds_codes(world, &b, &shape, &vec![0; k]),
        "case {case}: {shape:?} saved from {} ({:?}) loaded as {} differs",
        l1.spec(),
        l1.storage(),
        l2.spec()
    );
    if case.is_multiple_of(2) {
        // Into an existing array.
        let mut c: DistArray<T> = DistArray::zeros(&g2, l2.clone()).unwrap();
        dist_io::load_into(&mut c, &path, &options).map_err(|e| e.to_string())?;
        ensure!(
            holds_codes(world, &c, &shape, &vec![0; k]),
            "case {case}: load_into"
        );
    }
    if world.rank() == 0 {
        std::fs::remove_file(&path).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Random round trips of every element type.
fn round_trips(world: &SimpleCommunicator) -> TestResult {
    let mut rng = Lcg(world.size() as u64 * 7919);
    for case in 0..9 {
        match case % 9 {
            0 => round_trip::<f64>(world, &mut rng, case)?,
            1 => round_trip::<f32>(world, &mut rng, case)?,
            2 => round_trip::<i32>(world, &mut rng, case)?,
            3 => round_trip::<i64>(world, &mut rng, case)?,
            4 => round_trip::<u8>(world, &mut rng, case)?,
            5 => round_trip::<u32>(world, &mut rng, case)?,
            6 => round_trip::<u64>(world, &mut rng, case)?,
            7 => round_trip::<Complex<f32>>(world, &mut rng, case)?,
            _ => round_trip::<Complex<f64>>(world, &mut rng, case)?,
        }
    }
    Ok(())
}

/// What the ghost cells of the arrays of [`ghosted_arrays`] hold: no
/// code of an index is negative.
const GHOST: f64 = -7.0;

/// Whether every ghost cell of `a`, on every rank, still holds [`GHOST`].
/// Collective.
fn ghosts_untouched(world: &SimpleCommunicator, a: &DistArray<f64>) -> bool {
    let ghosts = a.padded().iter().filter(|&&x| x == GHOST).count();
    let bad = u64::from(ghosts != a.padded().len() - a.local().len());
    let mut all = 0u64;
    world.all_reduce_into(&bad, &mut all, SystemOperation::sum());
    all == 0
}

/// Arrays with ghost layers: saved, the file holds the plain array (read
/// back into an array without ghosts, on another layout); loaded into, the
/// interior takes the file and the ghosts stay. Whole rows on a grid of
/// rows too, which without ghosts go straight between storage and file.
fn ghosted_arrays(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let mut rng = Lcg(n as u64 * 104_729);
    for case in 0..4 {
        let k = rng.below(3) + 1;
        let shape: Vec<usize> = (0..k).map(|_| rng.below([90, 17, 7][k - 1]) + 1).collect();
        let g1 = random_grid(&mut rng, world, k);
        let l1 = if case == 0 {
            // Whole rows, row-major: the straight way, were it not ghosted.
            let mut extents = vec![1; k];
            extents[0] = n;
            let grid = ProcGrid::new(world, &extents).unwrap();
            let spec: Vec<String> = (0..k)
                .map(|d| {
                    if d == 0 {
                        "block".to_string()
                    } else {
                        "*".to_string()
                    }
                })
                .collect();
            let grid_spec: Vec<String> = extents.iter().map(|e| e.to_string()).collect();
            let spec = format!("{}@{}", spec.join(","), grid_spec.join("x"));
            (Layout::parse(&shape, &spec).unwrap(), grid)
        } else {
            (random_layout(&mut rng, &g1, &shape), g1)
        };
        let (l1, g1) = l1;
        let mut widths: Vec<usize> = (0..k).map(|_| rng.below(3)).collect();
        widths[rng.below(k)] = rng.below(2) + 1;
        let mut a = DistArray::<f64>::zeros_with_ghosts(&g1, l1.clone(), &widths).unwrap();
        a.padded_mut().fill(GHOST);
        a.local_mut().assign(&coded::<f64>(&g1, l1.clone()).local());
        let what = format!("case {case}: {l1} with ghosts {widths:?}");
        // With HDF5 built in, one case as a dataset.
        let ext = if cfg!(feature = "hdf5") && case == 3 {
            "h5"
        } else {
            "npy"
        };
        let path = dir().join(format!("ghosted-{n}-{case}.{ext}"));
        let bytes = shape.iter().product::<usize>() * 8;
        let options = random_options(&mut rng, world, bytes);
        dist_io::save(&a, &path, &options).map_err(|e| format!("{what}: {e}"))?;
        let info = dist_io::info(&path, &IoOptions::default()).map_err(|e| e.to_string())?;
        ensure_eq!(info.shape, shape, "{what}");
        ensure!(ghosts_untouched(world, &a), "{what}: saving wrote a ghost");
        // Back without ghosts, on another layout.
        let g2 = random_grid(&mut rng, world, k);
        let l2 = random_layout(&mut rng, &g2, &shape);
        let spec = l2.spec().clone();
        let b: DistArray<f64> =
            dist_io::load(&g2, &spec, &path, &options).map_err(|e| format!("{what}: {e}"))?;
        ensure!(!b.has_ghosts(), "{what}");
        ensure!(holds_codes(world, &b, &shape, &vec![0; k]), "{what}: saved");
        // Into a ghosted array of yet other widths.
        let other: Vec<usize> = widths.iter().map(|&w| 2 - w).collect();
        let mut c = DistArray::<f64>::zeros_with_ghosts(&g2, l2, &other).unwrap();
        c.padded_mut().fill(GHOST);
        dist_io::load_into(&mut c, &path, &options).map_err(|e| format!("{what}: {e}"))?;
        ensure!(
            holds_codes(world, &c, &shape, &vec![0; k]),
            "{what}: loaded into"
        );
        ensure!(ghosts_untouched(world, &c), "{what}: loading wrote a ghost");
    }
    Ok(())
}

/// Planes, slabs and boxes of a 3-D file loaded into arrays of their own
/// shape; a window written into an existing file leaves the rest.
fn windows(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let shape = [11, 13, 7];
    let grid = ProcGrid::new(world, &balanced_extents(n, &[0, 0, 0]).unwrap()).unwrap();
    let e = grid.extents().to_vec();
    let layout = Layout::parse(
        &shape,
        &format!("cyclic(2),block,cyclic@{}x{}x{}", e[0], e[1], e[2]),
    )
    .unwrap()
    .with_storage(Order::ColumnMajor);
    let a: DistArray<f64> = coded(&grid, layout);
    let path = dir().join(format!("windows-{n}.npy"));
    let small = IoOptions::default()
        .staging_bytes(512)
        .aggregators(Aggregators::Count(2));
    dist_io::save(&a, &path, &small).map_err(|e| e.to_string())?;
    let rows = ProcGrid::new(world, &[n, 1, 1]).unwrap();
    let spec: LayoutSpec = format!("cyclic,*,*@{n}x1x1").parse().unwrap();
    let cases: [([usize; 3], [usize; 3]); 6] = [
        ([4, 0, 0], [1, 13, 7]),
        ([0, 5, 0], [11, 1, 7]),
        ([0, 0, 6], [11, 13, 1]),
        ([2, 3, 1], [5, 4, 3]),
        ([0, 0, 0], [11, 13, 7]),
        ([10, 12, 6], [1, 1, 1]),
    ];
    for (i, (origin, w)) in cases.into_iter().enumerate() {
        let options = if i.is_multiple_of(2) {
            small.clone()
        } else {
            IoOptions::default()
        };
        let b: DistArray<f64> = dist_io::load_window(&rows, &spec, &path, &origin, &w, &options)
            .map_err(|e| format!("{origin:?} {w:?}: {e}"))?;
        ensure!(
            holds_codes(world, &b, &shape, &origin),
            "window {w:?} at {origin:?}"
        );
        if i.is_multiple_of(3) {
            let mut c: DistArray<f64> =
                DistArray::zeros(&rows, dist_array::layout_on_grid(&w, &spec, &rows).unwrap())
                    .unwrap();
            dist_io::load_window_into(&mut c, &path, &origin, &options)
                .map_err(|e| e.to_string())?;
            ensure!(
                holds_codes(world, &c, &shape, &origin),
                "into: {w:?} at {origin:?}"
            );
        }
    }
    // A window written into the file: its elements become -1, the rest stay.
    let (origin, w) = ([3usize, 2, 1], [4usize, 9, 5]);
    let patch = DistArray::from_fn(
        &rows,
        dist_array::layout_on_grid(&w, &spec, &rows).unwrap(),
        |_| -1.0,
    )
    .unwrap();
    dist_io::save_window(&patch, &path, &origin, &small).map_err(|e| e.to_string())?;
    let whole: DistArray<f64> =
        dist_io::load(&grid, a.layout().spec(), &path, &IoOptions::default())
            .map_err(|e| e.to_string())?;
    let inside = |g: &[usize]| (0..3).all(|d| g[d] >= origin[d] && g[d] < origin[d] + w[d]);
    let bad = whole.count_where(|g, v| {
        let expected = if inside(g) {
            -1.0
        } else {
            f64::code(linear(&shape, g))
        };
        *v != expected
    }) as u64;
    let mut all = 0u64;
    world.all_reduce_into(&bad, &mut all, SystemOperation::sum());
    ensure_eq!(all, 0);
    Ok(())
}

/// Files written by each launch (its rank count) and read by the later
/// ones, and within a launch by sub-communicators of fewer ranks: any
/// rank count reads what any other wrote.
fn across_rank_counts(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let shape = [37, 23];
    let grid = ProcGrid::new(world, &[1, n]).unwrap();
    let layout = Layout::parse(&shape, &format!("cyclic(3),cyclic(2)@1x{n}")).unwrap();
    let a: DistArray<i64> = coded(&grid, layout);
    dist_io::save(
        &a,
        dir().join(format!("ranks-{n}.npy")),
        &IoOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    let rows = ProcGrid::new(world, &[n, 1]).unwrap();
    let spec: LayoutSpec = format!("block,*@{n}x1").parse().unwrap();
    let mut read = 0;
    for k in 1..=8 {
        let path = dir().join(format!("ranks-{k}.npy"));
        if k >= n || !path.exists() {
            continue;
        }
        let b: DistArray<i64> = dist_io::load(&rows, &spec, &path, &IoOptions::default())
            .map_err(|e| format!("written on {k} ranks: {e}"))?;
        ensure!(
            holds_codes(world, &b, &shape, &[0, 0]),
            "written on {k}, read on {n}"
        );
        read += 1;
    }
    if world.rank() == 0 {
        println!("  read the files of {read} launches with fewer ranks");
    }
    // A sub-communicator of the first ranks saves; the whole world loads;
    // then the world saves and the sub-communicator loads.
    let k = n.div_ceil(2);
    let color = if (world.rank() as usize) < k {
        Color::with_value(0)
    } else {
        Color::undefined()
    };
    let sub = world.split_by_color(color);
    let path = dir().join(format!("sub-{n}.npy"));
    if let Some(sub) = &sub {
        let g = ProcGrid::new(sub, &[k]).unwrap();
        let l = Layout::parse(&[101], &format!("cyclic(4)@{k}")).unwrap();
        let s: DistArray<u32> = coded(&g, l);
        dist_io::save(&s, &path, &IoOptions::default()).map_err(|e| e.to_string())?;
    }
    world.barrier();
    let all = ProcGrid::new(world, &[n]).unwrap();
    let b: DistArray<u32> = dist_io::load(
        &all,
        &format!("cyclic(5)@{n}").parse().unwrap(),
        &path,
        &IoOptions::default(),
    )
    .map_err(|e| e.to_string())?;
    ensure!(
        holds_codes(world, &b, &[101], &[0]),
        "saved on {k}, loaded on {n}"
    );
    let path2 = dir().join(format!("world-{n}.npy"));
    dist_io::save(&b, &path2, &IoOptions::default()).map_err(|e| e.to_string())?;
    if let Some(sub) = &sub {
        let g = ProcGrid::new(sub, &[k]).unwrap();
        let c: DistArray<u32> = dist_io::load(
            &g,
            &format!("block@{k}").parse().unwrap(),
            &path2,
            &IoOptions::default(),
        )
        .map_err(|e| e.to_string())?;
        ensure!(
            holds_codes(sub, &c, &[101], &[0]),
            "saved on {n}, loaded on {k}"
        );
    }
    world.barrier();
    Ok(())
}

/// Checks that `result` is an error on every rank, the same everywhere,
/// whose text holds `needle`.
fn refused<V>(world: &SimpleCommunicator, result: Result<V, IoError>, needle: &str) -> TestResult {
    let text = match result {
        Ok(_) => String::from("(accepted)"),
        Err(e) => e.to_string(),
    };
    ensure!(same_everywhere(world, &text), "ranks disagree: {text}");
    ensure!(
        text.contains(needle),
        "expected an error naming {needle:?}, got: {text}"
    );
    Ok(())
}

/// Writes `bytes` to `path` on rank 0; every rank waits.
fn plant(world: &SimpleCommunicator, path: &Path, bytes: &[u8]) {
    if world.rank() == 0 {
        std::fs::write(path, bytes).unwrap();
    }
    world.barrier();
}

/// Every refusal of a load names the file and what was wrong, the same
/// on every rank, and nobody hangs.
fn refusals(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n, 1]).unwrap();
    let spec: LayoutSpec = format!("block,*@{n}x1").parse().unwrap();
    let o = IoOptions::default();
    let d = dir();
    let missing = d.join(format!("missing-{n}.npy"));
    refused(
        world,
        dist_io::load::<f64>(&grid, &spec, &missing, &o),
        "cannot open",
    )?;
    refused(
        world,
        dist_io::load::<f64>(&grid, &spec, &d, &o),
        "directory",
    )?;
    // A good file to spoil.
    let good = d.join(format!("good-{n}.npy"));
    let a: DistArray<f64> = coded(
        &grid,
        dist_array::layout_on_grid(&[9, 4], &spec, &grid).unwrap(),
    );
    dist_io::save(&a, &good, &o).map_err(|e| e.to_string())?;
    let bytes = std::fs::read(&good).map_err(|e| e.to_string())?;
    let bad = d.join(format!("bad-{n}.npy"));
    plant(world, &bad, &bytes[..bytes.len() - 8]);
    refused(
        world,
        dist_io::load::<f64>(&grid, &spec, &bad, &o),
        "truncated",
    )?;
    plant(world, &bad, &bytes[..100]);
    refused(
        world,
        dist_io::load::<f64>(&grid, &spec, &bad, &o),
        "ends inside",
    )?;
    plant(world, &bad, b"PK\x03\x04 certainly not an array");
    refused(
        world,
        dist_io::load::<f64>(&grid, &spec, &bad, &o),
        "neither a .npy",
    )?;
    let mut v9 = bytes.clone();
    v9[6] = 9;
    plant(world, &bad, &v9);
    refused(
        world,
        dist_io::load::<f64>(&grid, &spec, &bad, &o),
        "version",
    )?;
    let spoil = |from: &str, to: &str| {
        let (from, to) = (from.as_bytes(), to.as_bytes());
        let at = bytes.windows(from.len()).position(|w| w == from).unwrap();
        let mut b = bytes[..at].to_vec();
        b.extend_from_slice(to);
        b.extend_from_slice(&bytes[at + from.len()..]);
        b
    };
    plant(world, &bad, &spoil("'<f8'", "'>f8'"));
    refused(
        world,
        dist_io::load::<f64>(&grid, &spec, &bad, &o),
        "big-endian",
    )?;
    plant(world, &bad, &spoil("'<f8'", "'|O8'"));
    refused(
        world,
        dist_io::load::<f64>(&grid, &spec, &bad, &o),
        "object",
    )?;
    plant(world, &bad, &spoil("'shape'", "'shapx'"));
    refused(world, dist_io::load::<f64>(&grid, &spec, &bad, &o), "shap")?;
    refused(world, dist_io::load::<f32>(&grid, &spec, &good, &o), "f64")?;
    let flat: LayoutSpec = format!("block@{n}").parse().unwrap();
    let g1 = ProcGrid::new(world, &[n]).unwrap();
    refused(
        world,
        dist_io::load::<f64>(&g1, &flat, &good, &o),
        "2-dimensional",
    )?;
    refused(
        world,
        dist_io::load_window::<f64>(&grid, &spec, &good, &[5, 0], &[5, 4], &o),
        "does not fit",
    )?;
    let mut wrong: DistArray<f64> = DistArray::zeros(
        &grid,
        dist_array::layout_on_grid(&[9, 5], &spec, &grid).unwrap(),
    )
    .unwrap();
    refused(world, dist_io::load_into(&mut wrong, &good, &o), "shape")?;
    refused(
        world,
        dist_io::save_window(&wrong, &good, &[0, 0], &o),
        "does not fit",
    )?;
    refused(
        world,
        dist_io::load::<f64>(&grid, &spec, &good, &o.clone().staging_bytes(0)),
        "staging budget",
    )?;
    refused(
        world,
        dist_io::load::<f64>(
            &grid,
            &spec,
            &good,
            &o.clone().aggregators(Aggregators::Ranks(vec![n])),
        ),
        "aggregator ranks",
    )?;
    // Ranks handed different files: no rank hangs, all get the same error.
    if n > 1 {
        let mine = if world.rank() == 0 {
            good.clone()
        } else {
            bad.clone()
        };
        refused(
            world,
            dist_io::load::<f64>(&grid, &spec, &mine, &o),
            "different arguments",
        )?;
    }
    // The good file survived all this.
    let back: DistArray<f64> = dist_io::load(&grid, &spec, &good, &o).map_err(|e| e.to_string())?;
    ensure!(holds_codes(world, &back, &[9, 4], &[0, 0]));
    Ok(())
}

/// The files of `dir` whose names start with `prefix` (temporary files
/// included).
fn files_like(dir: &Path, prefix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|f| f.trim_start_matches('.').starts_with(prefix))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A save that fails — on one rank alone (a file size limit), for every
/// rank (a directory that does not exist), or on a full file system (a
/// small tmpfs, where the test may mount one) — returns the same error
/// everywhere, keeps the previous file byte for byte and leaves no
/// temporary file behind.
fn failures_keep_the_old_file(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let grid = ProcGrid::new(world, &[n]).unwrap();
    let d = dir();
    let name = format!("keep-{n}");
    let path = d.join(format!("{name}.npy"));
    let small: DistArray<u8> = coded(
        &grid,
        Layout::parse(&[1000], &format!("cyclic(7)@{n}")).unwrap(),
    );
    dist_io::save(&small, &path, &IoOptions::default()).map_err(|e| e.to_string())?;
    let before = std::fs::read(&path).map_err(|e| e.to_string())?;
    let big: DistArray<u8> = coded(
        &grid,
        Layout::parse(&[1 << 20], &format!("cyclic(7)@{n}")).unwrap(),
    );
    // The last rank writes everything and may write 64 KiB files only.
    let last = n - 1;
    if world.rank() as usize == last {
        limit_file_size(1 << 16);
    }
    let options = IoOptions::default().aggregators(Aggregators::Ranks(vec![last]));
    refused(
        world,
        dist_io::save(&big, &path, &options),
        "writing failed",
    )?;
    if world.rank() as usize == last {
        limit_file_size(libc::RLIM_INFINITY);
    }
    world.barrier();
    ensure!(
        std::fs::read(&path).map_err(|e| e.to_string())? == before,
        "the old file changed"
    );
    ensure_eq!(files_like(&d, &name), vec![format!("{name}.npy")]);
    // A folder that does not exist.
    let nowhere = d.join("no-such-folder").join("x.npy");
    refused(
        world,
        dist_io::save(&big, &nowhere, &IoOptions::default()),
        "writing failed",
    )?;
    full_file_system(world, &small, &big)
}

/// On a tmpfs of 256 KiB (mounted by rank 0 where the test runs as root):
/// a save larger than the room fails everywhere alike and keeps the old
/// file. Elsewhere it says why it did not run.
fn full_file_system(
    world: &SimpleCommunicator,
    small: &DistArray<u8>,
    big: &DistArray<u8>,
) -> TestResult {
    let n = world.size() as usize;
    let mount = dir().join(format!("tmpfs-{n}"));
    let mut mounted = 0i32;
    if world.rank() == 0 {
        let _ = std::fs::create_dir_all(&mount);
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=256k", "ndcyclic-test"])
            .arg(&mount)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted = i32::from(ok);
    }
    world.process_at_rank(0).broadcast_into(&mut mounted);
    if mounted == 0 {
        if world.rank() == 0 {
            eprintln!("full_file_system: cannot mount a tmpfs here (not root?); part skipped");
        }
        return Ok(());
    }
    let path = mount.join("state.npy");
    let result = (|| {
        dist_io::save(small, &path, &IoOptions::default()).map_err(|e| e.to_string())?;
        let before = std::fs::read(&path).map_err(|e| e.to_string())?;
        refused(
            world,
            dist_io::save(big, &path, &IoOptions::default()),
            "writing failed",
        )?;
        world.barrier();
        ensure!(
            std::fs::read(&path).map_err(|e| e.to_string())? == before,
            "the old file changed"
        );
        ensure_eq!(files_like(&mount, "state"), vec!["state.npy".to_string()]);
        Ok(())
    })();
    world.barrier();
    if world.rank() == 0 {
        let _ = std::process::Command::new("umount").arg(&mount).status();
        let _ = std::fs::remove_dir(&mount);
    }
    result
}

fn main() {
    if !mpi_harness::is_rank() {
        // One folder for every launch of this run, so launches of later
        // rank counts read the files of earlier ones.
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dist-io-tests");
        let _ = std::fs::remove_dir_all(&base);
        let dir = base.join(std::process::id().to_string());
        std::fs::create_dir_all(&dir).expect("a folder for the test files");
        std::env::set_var(DIR_VAR, &dir);
    }
    let dist_io = Suite::new(
        "dist_io",
        &[
            MpiTest::new("round_trips", round_trips),
            MpiTest::new("windows", windows),
            MpiTest::new("across_rank_counts", across_rank_counts),
            MpiTest::new("refusals", refusals),
            MpiTest::new("failures_keep_the_old_file", failures_keep_the_old_file),
            MpiTest::new("ghosted_arrays", ghosted_arrays),
        ],
    );
    let all = vec![dist_io, suites::numpy_files::suite()];
    #[cfg(feature = "hdf5")]
    let all = [all, vec![suites::hdf5::suite()]].concat();
    mpi_harness::run_suites(&all);
}
