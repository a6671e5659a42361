//! HDF5 datasets under MPI (feature `hdf5`), launched by the harness with
//! 1 to 8 ranks: every element type and several layouts saved and loaded
//! back, windows, a file holding several datasets, datasets in groups,
//! the refusals (the same error on every rank), and files checked and
//! written by h5py (Debian's python3-h5py under /usr/bin/python3).
#![allow(
    clippy::cast_possible_truncation,
    reason = "test values and lengths are small"
)]

use crate::common::{limit_file_size, linear};
use dist_array::{Complex, DistArray, Element, Layout, Order};
use dist_io::{Aggregators, ElementType, Format, IoError, IoOptions};
use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, ensure_eq, MpiTest, Suite, TestResult};
use procgrid::{balanced_extents, ProcGrid};
use std::path::{Path, PathBuf};

/// The value of the element of C-order linear index `i`: what every
/// array saved here holds, and what h5py's `numpy.arange` gives.
trait Value: Element {
    fn at(i: usize) -> Self;
}

macro_rules! value {
    ($($t:ty),*) => {$(
        impl Value for $t {
            fn at(i: usize) -> Self {
                i as $t
            }
        }
    )*};
}
value!(f32, f64, i32, i64, u32, u64);

impl Value for u8 {
    fn at(i: usize) -> Self {
        (i % 251) as u8
    }
}

impl Value for Complex<f32> {
    fn at(i: usize) -> Self {
        Complex::new(i as f32, -(i as f32))
    }
}

impl Value for Complex<f64> {
    fn at(i: usize) -> Self {
        Complex::new(i as f64, -(i as f64))
    }
}

fn text<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// A file name every rank shares: rank 0's process id and the world's
/// size keep concurrent launches apart.
fn scratch(world: &SimpleCommunicator, name: &str) -> PathBuf {
    let mut id = [u64::from(std::process::id())];
    world.process_at_rank(0).broadcast_into(&mut id[..]);
    let dir = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("ndcyclic-h5-{}-{}-{name}", id[0], world.size()))
}

/// Removes `path` on rank 0 once every rank is done with it.
fn remove(world: &SimpleCommunicator, path: &Path) {
    world.barrier();
    if world.rank() == 0 {
        let _ = std::fs::remove_file(path);
    }
    world.barrier();
}

/// Whether this launch runs every case: with more ranks than this
/// machine's two cores, MPICH's polling ranks make each collective call
/// cost milliseconds, so larger launches run the cases that depend on the
/// distribution (layouts, windows, agreement) and fewer of the others.
fn full(world: &SimpleCommunicator) -> bool {
    world.size() <= 2
}

/// Options naming `dataset`.
fn at(dataset: &str) -> IoOptions {
    IoOptions::default().format(Format::Hdf5 {
        dataset: dataset.to_string(),
    })
}

fn grid(world: &SimpleCommunicator, extents: &[usize]) -> Result<ProcGrid, String> {
    ProcGrid::new(world, extents).map_err(text)
}

/// A balanced grid of `k` dimensions over the world.
fn balanced(world: &SimpleCommunicator, k: usize) -> Result<ProcGrid, String> {
    let n = world.size() as usize;
    grid(world, &balanced_extents(n, &vec![0; k]).map_err(text)?)
}

/// An array of `shape` laid out as `spec` on `grid`, every element its value.
fn filled<T: Value>(grid: &ProcGrid, shape: &[usize], spec: &str) -> Result<DistArray<T>, String> {
    let layout = Layout::parse(shape, spec).map_err(text)?;
    DistArray::from_fn(grid, layout, |g| T::at(linear(shape, g))).map_err(text)
}

/// `spec` with the grid's extents: `block,cyclic(2)@{}` on a 2x3 grid is
/// `block,cyclic(2)@2x3`.
fn on(grid: &ProcGrid, dists: &str) -> String {
    let extents: Vec<String> = grid.extents().iter().map(usize::to_string).collect();
    format!("{dists}@{}", extents.join("x"))
}

/// Checks that every element of `a`, the window at `origin` of an array of
/// `shape`, holds its value (`value` of its index in the whole array).
fn holds<T: Element>(
    world: &SimpleCommunicator,
    a: &DistArray<T>,
    shape: &[usize],
    origin: &[usize],
    value: impl Fn(&[usize]) -> T + Sync + Send,
) -> TestResult {
    let bad = a.count_where(|g, v| {
        let at: Vec<usize> = g.iter().zip(origin).map(|(a, b)| a + b).collect();
        *v != value(&at)
    }) as u64;
    let mut all = 0u64;
    world.all_reduce_into(&bad, &mut all, SystemOperation::sum());
    ensure_eq!(all, 0, "elements differ in {} of {:?}", a.layout(), shape);
    Ok(())
}

/// The error of `result`, checked to read the same on every rank.
fn refused<V>(world: &SimpleCommunicator, result: Result<V, IoError>) -> Result<IoError, String> {
    let e = match result {
        Ok(_) => Err("expected an error, got Ok".to_string()),
        Err(e) => Ok(e),
    };
    let hash = e.as_ref().map_or(0, |e| {
        e.to_string()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
            })
    });
    let (mut high, mut low) = (0u64, 0u64);
    world.all_reduce_into(&hash, &mut high, SystemOperation::max());
    world.all_reduce_into(&hash, &mut low, SystemOperation::min());
    let e = e?;
    ensure!(
        high == low && high != 0,
        "ranks returned different errors; this one: {e}"
    );
    Ok(e)
}

/// Runs a Python script on rank 0 with `args`; every rank returns its
/// verdict.
fn python(world: &SimpleCommunicator, script: &str, args: &[&str]) -> TestResult {
    let mut verdict = Vec::new();
    if world.rank() == 0 {
        let out = std::process::Command::new("/usr/bin/python3")
            .arg("-c")
            .arg(script)
            .args(args)
            .output();
        verdict = match out {
            Ok(o) if o.status.success() => Vec::new(),
            Ok(o) => format!(
                "python failed ({}): {}{}",
                o.status,
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            )
            .into_bytes(),
            Err(e) => format!("cannot run /usr/bin/python3: {e}").into_bytes(),
        };
    }
    let mut len = [verdict.len() as u64];
    world.process_at_rank(0).broadcast_into(&mut len[..]);
    verdict.resize(len[0] as usize, 0);
    world.process_at_rank(0).broadcast_into(&mut verdict[..]);
    ensure!(verdict.is_empty(), "{}", String::from_utf8_lossy(&verdict));
    Ok(())
}

/// One element type: saved from a 2-D block-cyclic layout, its header
/// read, loaded back on rows.
fn one_type<T: Value>(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let shape = [13, 7];
    let cols = grid(world, &[1, n])?;
    let spec = format!("cyclic(3),cyclic(2)@1x{n}");
    let a = filled::<T>(&cols, &shape, &spec)?;
    let path = scratch(world, &format!("type-{}.h5", T::NAME));
    dist_io::save(&a, &path, &IoOptions::default()).map_err(text)?;
    let info = dist_io::info(&path, &IoOptions::default()).map_err(text)?;
    ensure_eq!(info.element, ElementType::of::<T>());
    ensure_eq!(info.shape, shape.to_vec());
    ensure_eq!(info.order, Order::RowMajor);
    ensure_eq!(
        info.format,
        Format::Hdf5 {
            dataset: "data".into()
        }
    );
    ensure_eq!(info.layout.as_deref(), Some(spec.as_str()));
    ensure_eq!(info.data_offset, None);
    let rows = grid(world, &[n, 1])?;
    let by_rows = format!("block,*@{n}x1").parse().map_err(text)?;
    let b: DistArray<T> =
        dist_io::load(&rows, &by_rows, &path, &IoOptions::default()).map_err(text)?;
    holds(world, &b, &shape, &[0, 0], |g| T::at(linear(&shape, g)))?;
    remove(world, &path);
    Ok(())
}

fn every_element_type(world: &SimpleCommunicator) -> TestResult {
    // The narrowest and the widest on every launch.
    one_type::<u8>(world)?;
    one_type::<Complex<f64>>(world)?;
    if !full(world) {
        return Ok(());
    }
    one_type::<f32>(world)?;
    one_type::<f64>(world)?;
    one_type::<i32>(world)?;
    one_type::<i64>(world)?;
    one_type::<u32>(world)?;
    one_type::<u64>(world)?;
    one_type::<Complex<f32>>(world)
}

/// Layouts of 1 to 3 dimensions, both storage orders, rounds (a small
/// staging budget over several aggregators), saved and loaded on others.
fn layouts(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let path = scratch(world, "layouts.h5");
    let g1 = balanced(world, 1)?;
    let g2 = balanced(world, 2)?;
    let g3 = balanced(world, 3)?;
    let cases: Vec<(&ProcGrid, Vec<usize>, String, Order)> = vec![
        (&g1, vec![29], on(&g1, "cyclic(4)"), Order::RowMajor),
        (
            &g2,
            vec![11, 9],
            on(&g2, "cyclic(2),block"),
            Order::ColumnMajor,
        ),
        (&g2, vec![10, 13], on(&g2, "block,cyclic"), Order::RowMajor),
        (
            &g3,
            vec![5, 6, 7],
            on(&g3, "cyclic(2),block,cyclic(3)"),
            Order::ColumnMajor,
        ),
        (
            &g3,
            vec![4, 3, 9],
            on(&g3, "block,block,block"),
            Order::RowMajor,
        ),
        // No elements: a dataset of shape 0 x 5, nothing to move.
        (&g2, vec![0, 5], on(&g2, "block,cyclic"), Order::RowMajor),
    ];
    let options = [
        IoOptions::default(),
        IoOptions::default()
            .staging_bytes(256)
            .aggregators(Aggregators::Count(n.min(3))),
    ];
    for (i, (g, shape, spec, storage)) in cases.into_iter().enumerate() {
        let layout = Layout::parse(&shape, &spec)
            .map_err(text)?
            .with_storage(storage);
        let a = DistArray::from_fn(g, layout, |x| f64::at(linear(&shape, x))).map_err(text)?;
        let o = options[i % 2].clone().format(Format::Hdf5 {
            dataset: "u".into(),
        });
        dist_io::save(&a, &path, &o).map_err(text)?;
        // The dataset is C order whatever the array's storage.
        let info = dist_io::info(&path, &at("u")).map_err(text)?;
        ensure_eq!(
            (info.shape.clone(), info.order),
            (shape.clone(), Order::RowMajor)
        );
        // Loaded on every grid of its rank, in both storage orders.
        let other = [&g1, &g2, &g3][(i + 1) % 3];
        let k = shape.len();
        let target = if other.extents().len() == k { other } else { g };
        let dists = vec!["cyclic(2)"; k].join(",");
        let spec = on(target, &dists).parse().map_err(text)?;
        let orders = [Order::RowMajor, Order::ColumnMajor];
        let orders = if full(world) {
            &orders[..]
        } else {
            &orders[i % 2..=i % 2]
        };
        for &order in orders {
            let o = o.clone().storage(order);
            let b: DistArray<f64> = dist_io::load(target, &spec, &path, &o).map_err(text)?;
            ensure_eq!(b.layout().storage(), order);
            holds(world, &b, &shape, &vec![0; k], |x| {
                f64::at(linear(&shape, x))
            })?;
        }
        if !full(world) && i > 0 {
            continue;
        }
        // An existing array of another layout loads it too.
        let mut c = DistArray::<f64>::zeros(
            target,
            dist_array::layout_on_grid(&shape, &spec, target).map_err(text)?,
        )
        .map_err(text)?;
        dist_io::load_into(&mut c, &path, &at("/u")).map_err(text)?;
        holds(world, &c, &shape, &vec![0; k], |x| {
            f64::at(linear(&shape, x))
        })?;
    }
    remove(world, &path);
    Ok(())
}

/// Windows of a dataset loaded, and written in place.
fn windows(world: &SimpleCommunicator) -> TestResult {
    let path = scratch(world, "windows.h5");
    let g2 = balanced(world, 2)?;
    let shape = [12, 10];
    let spec = on(&g2, "cyclic(2),cyclic(3)");
    let a = filled::<i64>(&g2, &shape, &spec)?;
    dist_io::save(&a, &path, &at("w")).map_err(text)?;
    let target = on(&g2, "block,cyclic").parse().map_err(text)?;
    let (origin, extent) = ([3, 2], [5, 6]);
    let o = at("w").storage(Order::ColumnMajor);
    let b: DistArray<i64> =
        dist_io::load_window(&g2, &target, &path, &origin, &extent, &o).map_err(text)?;
    ensure_eq!(b.shape(), &extent[..]);
    holds(world, &b, &shape, &origin, |g| i64::at(linear(&shape, g)))?;
    // A plane of it.
    let plane: DistArray<i64> =
        dist_io::load_window(&g2, &target, &path, &[7, 0], &[1, 10], &at("w")).map_err(text)?;
    holds(world, &plane, &shape, &[7, 0], |g| {
        i64::at(linear(&shape, g))
    })?;
    // A column-major array written into a window, the rest left alone.
    let (wo, we) = ([2, 5], [4, 3]);
    let layout = Layout::parse(&we, &on(&g2, "cyclic,block"))
        .map_err(text)?
        .with_storage(Order::ColumnMajor);
    let w = DistArray::from_fn(&g2, layout, |g| -1 - linear(&we, g) as i64).map_err(text)?;
    dist_io::save_window(&w, &path, &wo, &at("/w")).map_err(text)?;
    let all: DistArray<i64> = dist_io::load(&g2, &target, &path, &at("w")).map_err(text)?;
    holds(world, &all, &shape, &[0, 0], |g| {
        let inside = (0..2).all(|d| g[d] >= wo[d] && g[d] < wo[d] + we[d]);
        if inside {
            let local = [g[0] - wo[0], g[1] - wo[1]];
            -1 - linear(&we, &local) as i64
        } else {
            i64::at(linear(&shape, g))
        }
    })?;
    // Windows outside the dataset are refused, everywhere alike.
    let outside = dist_io::load_window::<i64>(&g2, &target, &path, &[10, 0], &[5, 6], &at("w"));
    let e = refused(world, outside)?;
    ensure!(matches!(e, IoError::Window { .. }), "{e}");
    let e = refused(world, dist_io::save_window(&w, &path, &[9, 0], &at("w")))?;
    ensure!(matches!(e, IoError::Window { .. }), "{e}");
    remove(world, &path);
    Ok(())
}

/// A file holding several datasets, some in groups: saving one creates or
/// replaces it alone.
fn several_datasets(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let path = scratch(world, "several.h5");
    let cols = grid(world, &[1, n])?;
    let rows = grid(world, &[n, 1])?;
    let rows3 = grid(world, &[n, 1, 1])?;
    let a = filled::<f64>(&cols, &[6, 8], &format!("block,cyclic@1x{n}"))?;
    let b = filled::<u8>(&rows, &[9, 4], &format!("cyclic(2),*@{n}x1"))?;
    dist_io::save(&a, &path, &at("a")).map_err(text)?; // a new file
    dist_io::save(&b, &path, &at("b")).map_err(text)?; // beside a
    let u = filled::<Complex<f32>>(&rows3, &[5, 3, 2], &format!("cyclic,*,*@{n}x1x1"))?;
    dist_io::save(&u, &path, &at("/run/3/u")).map_err(text)?; // in new groups
                                                              // `a` replaced by an array of another type and shape.
    let a2 = filled::<i32>(&rows, &[7, 5], &format!("block,*@{n}x1"))?;
    dist_io::save(&a2, &path, &at("a")).map_err(text)?;
    let by_rows = |k: usize| {
        let extents = std::iter::once(n.to_string())
            .chain(std::iter::repeat_n("1".to_string(), k - 1))
            .collect::<Vec<_>>()
            .join("x");
        let dists = std::iter::once("cyclic")
            .chain(std::iter::repeat_n("*", k - 1))
            .collect::<Vec<_>>()
            .join(",");
        format!("{dists}@{extents}").parse().map_err(text)
    };
    let got: DistArray<u8> = dist_io::load(&rows, &by_rows(2)?, &path, &at("b")).map_err(text)?;
    holds(world, &got, &[9, 4], &[0, 0], |g| {
        u8::at(linear(&[9, 4], g))
    })?;
    let got: DistArray<i32> = dist_io::load(&rows, &by_rows(2)?, &path, &at("/a")).map_err(text)?;
    holds(world, &got, &[7, 5], &[0, 0], |g| {
        i32::at(linear(&[7, 5], g))
    })?;
    let got: DistArray<Complex<f32>> =
        dist_io::load(&rows3, &by_rows(3)?, &path, &at("run/3/u")).map_err(text)?;
    holds(world, &got, &[5, 3, 2], &[0, 0, 0], |g| {
        Complex::<f32>::at(linear(&[5, 3, 2], g))
    })?;
    let info = dist_io::info(&path, &at("a")).map_err(text)?;
    ensure_eq!(info.layout, Some(format!("block,*@{n}x1")));
    // Loading the file without naming a dataset reads `data`, which it lacks.
    let e = refused(
        world,
        dist_io::load::<u8>(&rows, &by_rows(2)?, &path, &IoOptions::default()),
    )?;
    let m = e.to_string();
    ensure!(
        m.contains("no dataset /data") && m.contains("a, b, run/"),
        "the error lists what the file holds: {m}"
    );
    // A dataset that is not there, a group, a path through a dataset.
    if full(world) {
        let e = refused(
            world,
            dist_io::load::<u8>(&rows, &by_rows(2)?, &path, &at("/run/3/v")),
        )?;
        ensure!(e.to_string().contains("/run/3 holds u"), "{e}");
        let e = refused(
            world,
            dist_io::load::<u8>(&rows, &by_rows(2)?, &path, &at("/run/4/u")),
        )?;
        ensure!(e.to_string().contains("no group /run/4"), "{e}");
        let e = refused(
            world,
            dist_io::load::<u8>(&rows, &by_rows(2)?, &path, &at("run")),
        )?;
        ensure!(e.to_string().contains("/run is a group"), "{e}");
        let e = refused(
            world,
            dist_io::load::<u8>(&rows, &by_rows(2)?, &path, &at("b/c")),
        )?;
        ensure!(
            e.to_string().contains("/b is a dataset, not a group"),
            "{e}"
        );
    }
    // The wrong element type.
    let e = refused(
        world,
        dist_io::load::<f64>(&rows, &by_rows(2)?, &path, &at("b")),
    )?;
    ensure!(matches!(e, IoError::Mismatch { .. }), "{e}");
    // Saving under a dataset, or over a group, fails and changes nothing.
    let e = refused(world, dist_io::save(&a, &path, &at("b/c")))?;
    ensure!(matches!(e, IoError::Write { .. }), "{e}");
    if full(world) {
        let e = refused(world, dist_io::save(&a, &path, &at("run/3")))?;
        ensure!(e.to_string().contains("/run/3 is a group"), "{e}");
        let e = refused(world, dist_io::save(&a, &path, &at("")))?;
        ensure!(matches!(e, IoError::InvalidArgument { .. }), "{e}");
    }
    let got: DistArray<u8> = dist_io::load(&rows, &by_rows(2)?, &path, &at("b")).map_err(text)?;
    holds(world, &got, &[9, 4], &[0, 0], |g| {
        u8::at(linear(&[9, 4], g))
    })?;
    // What h5py sees: the datasets, no temporary one, the attributes.
    python(
        world,
        r#"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
names = []
f.visit(names.append)
assert sorted(names) == ['a', 'b', 'run', 'run/3', 'run/3/u'], names
a = f['a']
assert a.dtype == np.int32 and a.shape == (7, 5), (a.dtype, a.shape)
assert (a[...] == np.arange(35).reshape(7, 5)).all()
assert a.attrs['layout'] == sys.argv[2], a.attrs['layout']
assert 'ndcyclic_version' in a.attrs
u = f['run/3/u'][...]
i = np.arange(30).reshape(5, 3, 2)
assert u.dtype == np.complex64 and (u == i - 1j * i).all(), u
assert f['a'].id.get_create_plist().get_layout() == h5py.h5d.CONTIGUOUS
"#,
        &[path.to_str().unwrap_or(""), &format!("block,*@{n}x1")],
    )?;
    remove(world, &path);
    Ok(())
}

/// Files h5py writes, loaded; files the ranks write, read by h5py; and
/// h5py's datasets of types this library does not read, refused.
fn with_h5py(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let path = scratch(world, "h5py.h5");
    python(
        world,
        r#"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], 'w') as f:
    i = np.arange(7 * 5 * 3).reshape(7, 5, 3)
    for t in ['f4', 'f8', 'i4', 'i8', 'u4', 'u8']:
        f['t/' + t] = i.astype(t)
    f['t/u1'] = (i % 251).astype('u1')
    f['t/c8'] = (i - 1j * i).astype('c8')
    f['t/c16'] = (i - 1j * i).astype('c16')
    f['data'] = np.arange(17.0)
    f.create_dataset('packed', data=i.astype('f8'), chunks=(2, 5, 3), compression='gzip')
    f['bad/strings'] = np.array([b'ab', b'cd'])
    f['bad/scalar'] = np.float64(3)
    f['bad/big'] = i.astype('>f8')
    f['bad/short'] = i.astype('i2')
    f['bad/pair'] = np.zeros(4, dtype=[('x', 'f8'), ('y', 'i4')])
    f['bad/bool'] = np.zeros(4, dtype=bool)
"#,
        &[path.to_str().unwrap_or("")],
    )?;
    fn check<T: Value>(world: &SimpleCommunicator, path: &Path, name: &str) -> TestResult {
        let n = world.size() as usize;
        let g = balanced(world, 3)?;
        let shape = [7, 5, 3];
        let spec = on(&g, "cyclic(2),block,cyclic").parse().map_err(text)?;
        let a: DistArray<T> = dist_io::load(&g, &spec, path, &at(name)).map_err(text)?;
        holds(world, &a, &shape, &[0, 0, 0], |x| T::at(linear(&shape, x)))?;
        let info = dist_io::info(path, &at(name)).map_err(text)?;
        ensure_eq!((info.element, info.layout), (ElementType::of::<T>(), None));
        let _ = n;
        Ok(())
    }
    check::<u8>(world, &path, "t/u1")?;
    check::<Complex<f32>>(world, &path, "t/c8")?;
    check::<f64>(world, &path, "packed")?;
    if full(world) {
        // Parallel HDF5 writes compressed datasets only collectively, and
        // ndcyclic writes independently: a window written into h5py's gzip
        // dataset is refused, alike on every rank (and never hangs).
        let g3 = balanced(world, 3)?;
        let w = filled::<f64>(&g3, &[2, 5, 3], &on(&g3, "block,block,block"))?;
        let e = refused(
            world,
            dist_io::save_window(&w, &path, &[1, 0, 0], &at("packed")),
        )?;
        ensure!(
            matches!(e, IoError::Write { .. }) && e.to_string().contains("filters"),
            "{e}"
        );
    }
    if full(world) {
        check::<f32>(world, &path, "t/f4")?;
        check::<f64>(world, &path, "t/f8")?;
        check::<i32>(world, &path, "t/i4")?;
        check::<i64>(world, &path, "t/i8")?;
        check::<u32>(world, &path, "t/u4")?;
        check::<u64>(world, &path, "t/u8")?;
        check::<Complex<f64>>(world, &path, "t/c16")?;
    }
    // Without options: the format from the signature, the dataset `data`.
    let g1 = grid(world, &[n])?;
    let spec = format!("cyclic(3)@{n}").parse().map_err(text)?;
    let d: DistArray<f64> =
        dist_io::load(&g1, &spec, &path, &IoOptions::default()).map_err(text)?;
    holds(world, &d, &[17], &[0], |x| x[0] as f64)?;
    let bad = [
        ("bad/big", "big-endian"),
        ("bad/strings", "strings"),
        ("bad/scalar", "0 dimensions"),
        ("bad/short", "no ndcyclic element type"),
        ("bad/pair", "compound"),
        ("bad/bool", "no ndcyclic element type"),
    ];
    let bad = if full(world) { &bad[..] } else { &bad[..1] };
    for &(name, why) in bad {
        let e = refused(world, dist_io::load::<f64>(&g1, &spec, &path, &at(name)))?;
        ensure!(
            matches!(e, IoError::Header { .. }) && e.to_string().contains(why),
            "{name}: {e}"
        );
        let serial = dist_io::info(&path, &at(name));
        ensure!(serial.is_err_and(|s| s == e), "{name}: info says the same");
    }
    // The ranks write into h5py's file: a column-major array.
    let g2 = balanced(world, 2)?;
    let layout = Layout::parse(&[9, 11], &on(&g2, "cyclic(2),cyclic(3)"))
        .map_err(text)?
        .with_storage(Order::ColumnMajor);
    let x = DistArray::from_fn(&g2, layout, |g| f64::at(linear(&[9, 11], g))).map_err(text)?;
    dist_io::save(&x, &path, &at("/x/y")).map_err(text)?;
    dist_io::save(&x, &path, &at("t/f8")).map_err(text)?; // replaces h5py's
    python(
        world,
        r#"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
for name in ['x/y', 't/f8']:
    y = f[name]
    assert y.dtype == np.float64 and y.shape == (9, 11), (name, y.dtype, y.shape)
    assert (y[...] == np.arange(99).reshape(9, 11)).all(), name
    assert y.attrs['layout'] == sys.argv[2], y.attrs['layout']
assert sorted(f['t'].keys()) == ['c16', 'c8', 'f4', 'f8', 'i4', 'i8', 'u1', 'u4', 'u8']
i = np.arange(7 * 5 * 3).reshape(7, 5, 3)
assert (f['t/i8'][...] == i).all()
"#,
        &[path.to_str().unwrap_or(""), &x.layout().spec().to_string()],
    )?;
    remove(world, &path);
    Ok(())
}

/// Files that are not HDF5, and a missing one.
fn not_hdf5(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let path = scratch(world, "junk.h5");
    if world.rank() == 0 {
        std::fs::write(&path, vec![7u8; 3000]).map_err(text)?;
    }
    world.barrier();
    let g1 = grid(world, &[n])?;
    let spec = format!("block@{n}").parse().map_err(text)?;
    let e = refused(world, dist_io::load::<f64>(&g1, &spec, &path, &at("data")))?;
    ensure!(e.to_string().contains("not an HDF5 file"), "{e}");
    let a = filled::<f64>(&g1, &[10], &format!("block@{n}"))?;
    let e = refused(world, dist_io::save(&a, &path, &IoOptions::default()))?;
    ensure!(e.to_string().contains("is not an HDF5 file"), "{e}");
    let e = dist_io::info(&path, &at("data")).unwrap_err();
    ensure!(e.to_string().contains("not an HDF5 file"), "{e}");
    remove(world, &path);
    let e = refused(world, dist_io::load::<f64>(&g1, &spec, &path, &at("data")))?;
    ensure!(matches!(e, IoError::Open { .. }), "{e}");
    // The save went nowhere: no temporary file left beside it.
    world.barrier();
    if world.rank() == 0 {
        let dir = path.parent().unwrap_or(Path::new("."));
        let stem = path.file_name().map(|f| f.to_string_lossy().into_owned());
        let left = std::fs::read_dir(dir)
            .map_err(text)?
            .filter_map(Result::ok)
            .any(|e| {
                let f = e.file_name().to_string_lossy().into_owned();
                stem.as_ref()
                    .is_some_and(|s| f.starts_with(&format!(".{s}.")))
            });
        ensure!(!left, "a temporary file was left beside {}", path.display());
    }
    // A folder that is not there: nothing is written, every rank says so.
    let nowhere = path.with_file_name("no-such-folder").join("x.h5");
    let e = refused(world, dist_io::save(&a, &nowhere, &IoOptions::default()))?;
    ensure!(
        matches!(e, IoError::Write { .. }) && e.to_string().contains("x.h5"),
        "{e}"
    );
    Ok(())
}

/// A replacement whose writing fails on one rank keeps the old dataset
/// and the file's others, and leaves no temporary dataset. The failing
/// rank is the last one and never rank 0, which writes HDF5's metadata.
fn failed_replacement_keeps_the_old_dataset(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    if n < 2 {
        return Ok(());
    }
    let path = scratch(world, "keep.h5");
    let g1 = grid(world, &[n])?;
    let small = filled::<u8>(&g1, &[1000], &format!("cyclic(7)@{n}"))?;
    let other = filled::<f64>(&g1, &[10], &format!("block@{n}"))?;
    dist_io::save(&small, &path, &at("keep")).map_err(text)?;
    dist_io::save(&other, &path, &at("other")).map_err(text)?;
    let big = filled::<u8>(&g1, &[1 << 20], &format!("cyclic(7)@{n}"))?;
    let last = n - 1;
    if world.rank() as usize == last {
        limit_file_size(1 << 16);
    }
    let o = at("keep").aggregators(Aggregators::Ranks(vec![last]));
    let e = refused(world, dist_io::save(&big, &path, &o));
    if world.rank() as usize == last {
        limit_file_size(libc::RLIM_INFINITY);
    }
    let e = e?;
    ensure!(matches!(e, IoError::Write { .. }), "{e}");
    let spec = format!("block@{n}").parse().map_err(text)?;
    let kept: DistArray<u8> = dist_io::load(&g1, &spec, &path, &at("keep")).map_err(text)?;
    ensure_eq!(kept.shape(), &[1000]);
    holds(world, &kept, &[1000], &[0], |g| u8::at(g[0]))?;
    let kept: DistArray<f64> = dist_io::load(&g1, &spec, &path, &at("other")).map_err(text)?;
    holds(world, &kept, &[10], &[0], |g| f64::at(g[0]))?;
    python(
        world,
        r#"
import sys, h5py
names = []
h5py.File(sys.argv[1], 'r').visit(names.append)
assert sorted(names) == ['keep', 'other'], names
"#,
        &[path.to_str().unwrap_or("")],
    )?;
    remove(world, &path);
    Ok(())
}

/// On a tmpfs of 256 KiB (mounted by rank 0 where the test runs as root):
/// a new file larger than the room fails everywhere alike and leaves no
/// temporary file; a dataset replaced by a larger one than the room keeps
/// the old one and leaves no temporary dataset. Elsewhere it says why it
/// did not run.
fn full_file_system(world: &SimpleCommunicator) -> TestResult {
    let n = world.size() as usize;
    let mount = scratch(world, "tmpfs");
    let mut mounted = 0i32;
    if world.rank() == 0 {
        let _ = std::fs::create_dir_all(&mount);
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=256k", "ndcyclic-h5-test"])
            .arg(&mount)
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted = i32::from(ok);
    }
    world.process_at_rank(0).broadcast_into(&mut mounted);
    if mounted == 0 {
        if world.rank() == 0 {
            eprintln!("full_file_system: cannot mount a tmpfs here (not root?); skipped");
            let _ = std::fs::remove_dir(&mount);
        }
        return Ok(());
    }
    let result = (|| {
        let g1 = grid(world, &[n])?;
        let small = filled::<u8>(&g1, &[1000], &format!("cyclic(7)@{n}"))?;
        let big = filled::<u8>(&g1, &[1 << 20], &format!("cyclic(7)@{n}"))?;
        let fresh = mount.join("new.h5");
        let e = refused(world, dist_io::save(&big, &fresh, &IoOptions::default()))?;
        ensure!(matches!(e, IoError::Write { .. }), "{e}");
        let path = mount.join("old.h5");
        dist_io::save(&small, &path, &at("keep")).map_err(text)?;
        let e = refused(world, dist_io::save(&big, &path, &at("keep")))?;
        ensure!(matches!(e, IoError::Write { .. }), "{e}");
        let spec = format!("block@{n}").parse().map_err(text)?;
        let kept: DistArray<u8> = dist_io::load(&g1, &spec, &path, &at("keep")).map_err(text)?;
        holds(world, &kept, &[1000], &[0], |g| u8::at(g[0]))?;
        let e = refused(
            world,
            dist_io::load::<u8>(&g1, &spec, &path, &at("keep.ndcyclic-tmp")),
        )?;
        ensure!(e.to_string().contains("/ holds keep"), "{e}");
        world.barrier();
        let mut left: Vec<String> = std::fs::read_dir(&mount)
            .map_err(text)?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        ensure_eq!(left, vec!["old.h5".to_string()]);
        Ok(())
    })();
    world.barrier();
    if world.rank() == 0 {
        let _ = std::process::Command::new("umount").arg(&mount).status();
        let _ = std::fs::remove_dir(&mount);
    }
    result
}

/// The suite `mpi_hdf5`.
pub fn suite() -> Suite {
    Suite::new(
        "mpi_hdf5",
        &[
            MpiTest::new("every_element_type", every_element_type),
            MpiTest::new("layouts", layouts),
            MpiTest::new("windows", windows),
            MpiTest::new("several_datasets", several_datasets),
            MpiTest::new("with_h5py", with_h5py),
            MpiTest::new("not_hdf5", not_hdf5),
            MpiTest::new(
                "failed_replacement_keeps_the_old_dataset",
                failed_replacement_keeps_the_old_dataset,
            ),
            MpiTest::new("full_file_system", full_file_system),
        ],
    )
}
