//! Files NumPy writes load correctly, and files dist-io writes are what
//! `numpy.load` reads: every element type, C and Fortran order, `.npy`
//! versions 1.0, 2.0 and 3.0, under MPI with 1 and 3 ranks. Rank 0 runs
//! Debian's `/usr/bin/python3` with NumPy (`scripts/setup.sh` installs
//! `python3-numpy`).

use crate::common::Code;
use dist_array::{Complex, DistArray, Layout, LayoutSpec, Order};
use dist_io::IoOptions;
use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_harness::{ensure, MpiTest, Suite, TestResult};
use procgrid::ProcGrid;
use std::path::PathBuf;
use std::process::Command;

const PYTHON: &str = "/usr/bin/python3";

/// The element types, as NumPy names them, and the NumPy expression of
/// the value of linear index `i` (an integer array) in each: the same
/// values as [`Code::code`].
const TYPES: [(&str, &str); 9] = [
    ("float32", "(i % 2**24).astype('<f4')"),
    ("float64", "i.astype('<f8')"),
    ("int32", "(i - 7).astype('<i4')"),
    ("int64", "(i - 7).astype('<i8')"),
    ("uint8", "(i % 251).astype('u1')"),
    ("uint32", "i.astype('<u4')"),
    ("uint64", "i.astype('<u8')"),
    ("complex64", "((i % 2**24) - 1j * (i % 1000)).astype('<c8')"),
    ("complex128", "(i - 1j * i).astype('<c16')"),
];

/// The shape of every test array: not divisible by the rank counts.
const SHAPE: [usize; 3] = [7, 5, 3];

fn linear(g: &[usize]) -> usize {
    crate::common::linear(&SHAPE, g)
}

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("numpy-files");
    std::fs::create_dir_all(&d).expect("a folder for the test files");
    d
}

/// Runs `script` with NumPy on rank 0; every rank learns whether it
/// succeeded. Collective.
fn python(world: &SimpleCommunicator, script: &str) -> TestResult {
    let mut ok = 1i32;
    let mut message = String::new();
    if world.rank() == 0 {
        match Command::new(PYTHON).arg("-c").arg(script).output() {
            Ok(out) if out.status.success() => {}
            Ok(out) => {
                ok = 0;
                message = format!(
                    "python failed:\n{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            Err(e) => {
                ok = 0;
                message =
                    format!("cannot run {PYTHON} ({e}); run scripts/setup.sh (python3-numpy)");
            }
        }
    }
    world.process_at_rank(0).broadcast_into(&mut ok);
    ensure!(
        ok == 1,
        "{}",
        if message.is_empty() {
            "python failed on rank 0".into()
        } else {
            message
        }
    );
    Ok(())
}

/// The layouts files are loaded into and saved from: a few grids and
/// distributions over every rank.
fn layouts(n: usize) -> Vec<(Vec<usize>, String)> {
    vec![
        (vec![n, 1, 1], format!("cyclic(2),*,*@{n}x1x1")),
        (vec![1, n, 1], format!("*,cyclic,*@1x{n}x1")),
        (vec![1, 1, n], format!("block,block,cyclic(2)@1x1x{n}")),
    ]
}

fn load_and_check<T: Code>(
    world: &SimpleCommunicator,
    path: &PathBuf,
    case: usize,
    storage: Order,
) -> TestResult {
    let n = world.size() as usize;
    let (extents, spec) = &layouts(n)[case % 3];
    let grid = ProcGrid::new(world, extents).unwrap();
    let spec: LayoutSpec = spec.parse().unwrap();
    let options = IoOptions::default().storage(storage).staging_bytes(200);
    let a: DistArray<T> = dist_io::load(&grid, &spec, path, &options)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    ensure!(
        a.shape() == SHAPE,
        "{}: shape {:?}",
        path.display(),
        a.shape()
    );
    let bad = a.count_where(|g, v| *v != T::code(linear(g))) as u64;
    let mut all = 0u64;
    world.all_reduce_into(&bad, &mut all, SystemOperation::sum());
    ensure!(all == 0, "{}: {all} elements differ", path.display());
    Ok(())
}

/// Files `numpy.save` (and `numpy.lib.format.write_array` for versions
/// 2.0 and 3.0) writes load into several layouts, either storage order.
fn numpy_writes_we_read(world: &SimpleCommunicator) -> TestResult {
    let n = world.size();
    let d = dir();
    let mut script = format!(
        "import numpy as np\nd = {:?}\ni = np.arange({})\n",
        d.display().to_string(),
        SHAPE.iter().product::<usize>()
    );
    for (name, expr) in TYPES {
        script += &format!(
            "a = ({expr}).reshape({SHAPE:?})\n\
             np.save(f'{{d}}/np-{n}-{name}-C-1.npy', a)\n\
             np.save(f'{{d}}/np-{n}-{name}-F-1.npy', np.asfortranarray(a))\n\
             for v in (2, 3):\n    \
                 with open(f'{{d}}/np-{n}-{name}-C-{{v}}.npy', 'wb') as f:\n        \
                     np.lib.format.write_array(f, a, version=(v, 0))\n    \
                 with open(f'{{d}}/np-{n}-{name}-F-{{v}}.npy', 'wb') as f:\n        \
                     np.lib.format.write_array(f, np.asfortranarray(a), version=(v, 0))\n"
        );
    }
    python(world, &script)?;
    let mut case = 0usize;
    for (name, _) in TYPES {
        for order in ["C", "F"] {
            for v in 1..=3 {
                let path = d.join(format!("np-{n}-{name}-{order}-{v}.npy"));
                let info =
                    dist_io::info(&path, &IoOptions::default()).map_err(|e| e.to_string())?;
                ensure!(
                    info.version == Some((v, 0)),
                    "{}: version {:?}",
                    path.display(),
                    info.version
                );
                let storage = if case.is_multiple_of(2) {
                    Order::RowMajor
                } else {
                    Order::ColumnMajor
                };
                let check = |name: &str| match name {
                    "float32" => load_and_check::<f32>(world, &path, case, storage),
                    "float64" => load_and_check::<f64>(world, &path, case, storage),
                    "int32" => load_and_check::<i32>(world, &path, case, storage),
                    "int64" => load_and_check::<i64>(world, &path, case, storage),
                    "uint8" => load_and_check::<u8>(world, &path, case, storage),
                    "uint32" => load_and_check::<u32>(world, &path, case, storage),
                    "uint64" => load_and_check::<u64>(world, &path, case, storage),
                    "complex64" => load_and_check::<Complex<f32>>(world, &path, case, storage),
                    _ => load_and_check::<Complex<f64>>(world, &path, case, storage),
                };
                check(name)?;
                case += 1;
            }
        }
    }
    Ok(())
}

fn save_coded<T: Code>(
    world: &SimpleCommunicator,
    path: &PathBuf,
    case: usize,
    storage: Order,
) -> TestResult {
    let n = world.size() as usize;
    let (extents, spec) = &layouts(n)[case % 3];
    let grid = ProcGrid::new(world, extents).unwrap();
    let layout = Layout::parse(&SHAPE, spec).unwrap().with_storage(storage);
    let a = DistArray::from_fn(&grid, layout, |g| T::code(linear(g))).unwrap();
    let options = IoOptions::default().staging_bytes(100 + 50 * case);
    dist_io::save(&a, path, &options).map_err(|e| format!("{}: {e}", path.display()))
}

/// What dist-io writes is what `numpy.load` (memory-mapped) reads: dtype,
/// shape, order and every value.
fn we_write_numpy_reads(world: &SimpleCommunicator) -> TestResult {
    let n = world.size();
    let d = dir();
    let mut case = 0usize;
    for (name, _) in TYPES {
        for (order, storage) in [("C", Order::RowMajor), ("F", Order::ColumnMajor)] {
            let path = d.join(format!("rs-{n}-{name}-{order}.npy"));
            let save = |name: &str| match name {
                "float32" => save_coded::<f32>(world, &path, case, storage),
                "float64" => save_coded::<f64>(world, &path, case, storage),
                "int32" => save_coded::<i32>(world, &path, case, storage),
                "int64" => save_coded::<i64>(world, &path, case, storage),
                "uint8" => save_coded::<u8>(world, &path, case, storage),
                "uint32" => save_coded::<u32>(world, &path, case, storage),
                "uint64" => save_coded::<u64>(world, &path, case, storage),
                "complex64" => save_coded::<Complex<f32>>(world, &path, case, storage),
                _ => save_coded::<Complex<f64>>(world, &path, case, storage),
            };
            save(name)?;
            case += 1;
        }
    }
    let mut script = format!(
        "import numpy as np\nd = {:?}\ni = np.arange({})\n",
        d.display().to_string(),
        SHAPE.iter().product::<usize>()
    );
    for (name, expr) in TYPES {
        script += &format!(
            "want = ({expr}).reshape({SHAPE:?})\n\
             for order in 'CF':\n    \
                 a = np.load(f'{{d}}/rs-{n}-{name}-{{order}}.npy', mmap_mode='r')\n    \
                 assert a.dtype == np.dtype('{name}'), (a.dtype, '{name}')\n    \
                 assert a.shape == want.shape, a.shape\n    \
                 assert (a.flags.f_contiguous and not a.flags.c_contiguous) == (order == 'F'), order\n    \
                 assert np.array_equal(a, want), ('{name}', order)\n"
        );
    }
    python(world, &script)
}

/// The suite `numpy_files`.
pub fn suite() -> Suite {
    Suite::new(
        "numpy_files",
        &[
            MpiTest::new("numpy_writes_we_read", numpy_writes_we_read),
            MpiTest::new("we_write_numpy_reads", we_write_numpy_reads),
        ],
    )
    .ranks(&[1, 3])
}
