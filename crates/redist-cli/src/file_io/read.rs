//! `redist io read`: a file (or a window of it) loaded into a layout
//! (`load`, untimed), then into that array `--reps` times (`load_into`),
//! checked with `--verify`
//! against the value of each element's global index in the file, and with
//! `--baseline mpiio` read by MPI-IO alone into the same layout (with
//! `--baseline hdf5`, by parallel HDF5 alone: `hdf5_baseline.rs`).

use super::args::{IoBaseline, ReadArgs, TypeArg};
use super::report::{Report, Timed};
use super::timing::time_reps;
use super::{grid_for, options_of, type_arg};
use crate::collective::{max_over, on_every_rank, sum_over};
use crate::error::CliError;
use crate::measure::values::{linear, IndexValue};
use dist_array::{DistArray, Layout};
use dist_io::{ElementType, FileInfo, Format, IoOptions};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_extras::file::{Access, MpiFile};
use redist::RedistError;
use std::io::Write;

/// The element type to read: `--type`, else the file's. Every rank reads
/// the header; a rank that cannot makes every rank fail.
pub(super) fn element_of(args: &ReadArgs, world: &SimpleCommunicator) -> Result<TypeArg, CliError> {
    let found = match args.element {
        Some(t) => Ok(t),
        None => header(args).map(|info| type_arg(info.element)),
    };
    let code = found.as_ref().map_or(u64::MAX, |&t| t as u64);
    let agreed = on_every_rank(world, max_over(world, code) == code && code != u64::MAX);
    match found {
        Ok(t) if agreed => Ok(t),
        Ok(_) => Err(CliError::File {
            path: args.common.file.display().to_string(),
            message: "another rank could not read the file's header".to_string(),
        }),
        Err(e) => Err(e),
    }
}

/// The options of a read of `args`.
fn options(args: &ReadArgs) -> IoOptions {
    options_of(&args.common, None)
}

/// The file's header, read by this process.
fn header(args: &ReadArgs) -> Result<FileInfo, CliError> {
    Ok(dist_io::info(&args.common.file, &options(args))?)
}

/// Runs `redist io read` for elements of type `T`. Collective over
/// `world`; rank 0 writes the report to `out`.
pub(super) fn run<T: IndexValue>(
    args: &ReadArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let common = &args.common;
    let info = header(args)?;
    let read = Window::of(args, &info);
    let layout =
        crate::shape::layout_for(&crate::shape::Shape(read.extent.clone()), &common.layout)?;
    let grid = grid_for(&layout, world)?;
    let mut options = options(args);
    options.progress = !common.json;
    // The first load makes the array (its pages paid once, untimed, as
    // the baselines read into an array they have); the timed ones read
    // into it, as a solver reloading a checkpoint into its field would.
    let mut array: DistArray<T> = if read.whole {
        dist_io::load(&grid, &common.layout, &common.file, &options)?
    } else {
        dist_io::load_window(
            &grid,
            &common.layout,
            &common.file,
            &read.origin,
            &read.extent,
            &options,
        )?
    };
    let times = time_reps(
        world,
        common.reps,
        || {},
        || {
            if read.whole {
                dist_io::load_into(&mut array, &common.file, &options)?;
            } else {
                dist_io::load_window_into(&mut array, &common.file, &read.origin, &options)?;
            }
            Ok(())
        },
    )?;
    let ours_verified = args
        .verify
        .then(|| holds_file_values(world, &array, &info.shape, &read.origin));
    let theirs = baselines::<T>(args, world, &grid, &layout, &info, &read)?;
    let verified = ours_verified.map(|v| v && theirs.verified);
    let report = Report {
        operation: "read",
        common,
        shape: read.extent,
        element: ElementType::of::<T>(),
        order: info.order,
        format: info.format.clone(),
        ranks: world.size() as usize,
        timed: Timed {
            ours: times,
            mpiio: theirs.mpiio,
            hdf5: theirs.hdf5,
            verified,
        },
    };
    report.print(world, out)?;
    if verified == Some(false) {
        return Err(CliError::VerificationFailed);
    }
    Ok(())
}

/// The part of the file a read loads: the window at `origin` of `extent`
/// (`--from-window`, `--window`; by default from the origin to the file's
/// end), and whether that is the whole file.
struct Window {
    origin: Vec<usize>,
    extent: Vec<usize>,
    whole: bool,
}

impl Window {
    /// The window `args` asks for in the file `info` describes.
    fn of(args: &ReadArgs, info: &FileInfo) -> Window {
        let k = info.shape.len();
        let origin = args
            .from_window
            .as_ref()
            .map_or(vec![0; k], |o| o.0.clone());
        let extent = match &args.window {
            Some(w) => w.0.clone(),
            None => (0..k.min(origin.len()))
                .map(|d| info.shape[d].saturating_sub(origin[d]))
                .collect(),
        };
        let whole = origin.iter().all(|&o| o == 0) && extent == info.shape;
        Window {
            origin,
            extent,
            whole,
        }
    }
}

/// What the baselines of a read measured: each one's times, if it ran,
/// and whether every array they read held the file's values (true when
/// not checked).
struct Baselines {
    mpiio: Option<Vec<f64>>,
    hdf5: Option<Vec<f64>>,
    verified: bool,
}

/// Reads the file `--reps` times by the baseline `--baseline` names, if
/// any, into the same layout: MPI-IO (a whole `.npy` file only) or
/// parallel HDF5; with `--verify`, checks what it read. Collective.
fn baselines<T: IndexValue>(
    args: &ReadArgs,
    world: &SimpleCommunicator,
    grid: &procgrid::ProcGrid,
    layout: &Layout,
    info: &FileInfo,
    read: &Window,
) -> Result<Baselines, CliError> {
    let common = &args.common;
    let check = |theirs: &DistArray<T>| {
        !args.verify || holds_file_values(world, theirs, &info.shape, &read.origin)
    };
    let mut done = Baselines {
        mpiio: None,
        hdf5: None,
        verified: true,
    };
    match common.baseline {
        Some(IoBaseline::Mpiio) if read.whole && info.format == Format::Npy => {
            let layout = layout.clone().with_storage(info.order);
            let mut theirs = DistArray::<T>::zeros(grid, layout)?;
            let offset = info.data_offset.unwrap_or(0);
            mpiio_read(&mut theirs, &common.file, offset)?;
            let t = time_reps(
                world,
                common.reps,
                || {},
                || mpiio_read(&mut theirs, &common.file, offset),
            )?;
            done.verified = check(&theirs);
            done.mpiio = Some(t);
        }
        Some(IoBaseline::Mpiio) => {
            return Err(CliError::Unsupported {
                what: "--baseline mpiio",
                expected: "a whole .npy file (no --window)".to_string(),
            })
        }
        Some(IoBaseline::Hdf5) => {
            let (t, theirs) = super::hdf5_baseline::read_times::<T>(
                grid, layout, info, read.whole, common, world,
            )?;
            done.verified = check(&theirs);
            done.hdf5 = Some(t);
        }
        None => {}
    }
    Ok(done)
}

/// Whether every element of `array` holds the value of its global index
/// in the file's array of `shape` (the array is the window at `origin`).
/// Collective.
fn holds_file_values<T: IndexValue>(
    comm: &SimpleCommunicator,
    array: &DistArray<T>,
    shape: &[usize],
    origin: &[usize],
) -> bool {
    let bad = array.count_where(|g, v| {
        let at: Vec<usize> = g.iter().zip(origin).map(|(a, b)| a + b).collect();
        *v != T::index_value(linear(shape, &at))
    });
    sum_over(comm, bad as u64) == 0
}

/// `Ok` on every rank only when `local` is `Ok` on every rank.
/// Collective.
pub(super) fn agreed<V, E: Into<RedistError>>(
    comm: &SimpleCommunicator,
    local: Result<V, E>,
) -> Result<V, CliError> {
    let all = on_every_rank(comm, local.is_ok());
    match local {
        Ok(v) if all => Ok(v),
        Ok(_) => Err(CliError::Unsupported {
            what: "the MPI-IO baseline",
            expected: "every rank's MPI-IO calls to succeed (another rank's failed)".into(),
        }),
        Err(e) => Err(CliError::Redist(e.into())),
    }
}

/// The file read as a C programmer reads a block-cyclic array with
/// MPI-IO: a view of `MPI_Type_create_darray` and one `MPI_File_read_all`
/// into the local part. Collective; failures agreed as in the write.
fn mpiio_read<T: IndexValue>(
    array: &mut DistArray<T>,
    path: &std::path::Path,
    offset: u64,
) -> Result<(), CliError> {
    let grid = array.grid().clone();
    let comm = grid.communicator();
    let layout: Layout = array.layout().clone();
    let rank = array.rank();
    let file = agreed(comm, MpiFile::open(comm, path, Access::Read))?;
    let mut file = file;
    let data: &mut [u8] = bytemuck::cast_slice_mut(array.local_slice_mut());
    let read = match rank {
        Some(r) => super::darray::darray(&layout, r, std::mem::size_of::<T>())
            .and_then(|d| Ok(file.read_darray_all(offset, &d, data)?)),
        None => file.read_box_all(None, &mut []).map_err(RedistError::from),
    };
    agreed(comm, read.and(file.close().map_err(RedistError::from)))
}
