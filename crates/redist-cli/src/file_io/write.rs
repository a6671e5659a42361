//! `redist io write`: an array filled with the value of each element's
//! global index, saved `--reps` times (after one untimed save), and with
//! `--baseline mpiio` the same file written by MPI-IO alone (with
//! `--baseline hdf5`, by parallel HDF5 alone: `hdf5_baseline.rs`).

use super::args::{IoBaseline, OrderArg, WriteArgs};
use super::report::{Report, Timed};
use super::timing::time_reps;
use super::{grid_for, options_of};
use crate::error::CliError;
use crate::measure::values::{self, IndexValue};
use crate::shape::layout_for;
use dist_array::DistArray;
use dist_io::{ElementType, Format};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_extras::file::{Access, MpiFile};
use procgrid::Order;
use redist::RedistError;
use std::io::Write;
use std::path::Path;

/// Runs `redist io write` for elements of type `T`. Collective over
/// `world`; rank 0 writes the report to `out`.
pub(super) fn run<T: IndexValue>(
    args: &WriteArgs,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let common = &args.common;
    let order = match args.order {
        OrderArg::C => Order::RowMajor,
        OrderArg::F => Order::ColumnMajor,
    };
    let layout = layout_for(&args.shape, &common.layout)?.with_storage(order);
    let grid = grid_for(&layout, world)?;
    let mut options = options_of(common, None).sync(args.sync);
    options.progress = !common.json;
    let format = options
        .format
        .clone()
        .unwrap_or_else(|| Format::from_name(&common.file));
    let array = values::source::<T>(&grid, &layout, 0)?;
    dist_io::save(&array, &common.file, &options)?; // warm-up: page cache, connections
    let fresh = || remove_file(world, &common.file);
    let times = time_reps(world, common.reps, fresh, || {
        dist_io::save(&array, &common.file, &options)?;
        Ok(())
    })?;
    let baseline = match common.baseline {
        Some(IoBaseline::Mpiio) if format == Format::Npy => {
            let write = || mpiio_write(&array, &common.file, args.sync);
            write()?;
            Some(time_reps(world, common.reps, fresh, write)?)
        }
        Some(IoBaseline::Mpiio) => {
            return Err(CliError::Unsupported {
                what: "--baseline mpiio",
                expected: "a .npy file (--format npy)".to_string(),
            })
        }
        Some(IoBaseline::Hdf5) | None => None,
    };
    let hdf5 = match common.baseline {
        Some(IoBaseline::Hdf5) => Some(super::hdf5_baseline::write_times(
            &array, &format, common, args.sync, world, fresh,
        )?),
        _ => None,
    };
    let report = Report {
        operation: "write",
        common,
        shape: array.shape().to_vec(),
        element: ElementType::of::<T>(),
        order,
        format,
        ranks: world.size() as usize,
        timed: Timed {
            ours: times,
            mpiio: baseline,
            hdf5,
            verified: None,
        },
    };
    report.print(world, out)
}

/// The file written as a C programmer writes a block-cyclic array with
/// MPI-IO: the `.npy` header by rank 0, the data through a view of
/// `MPI_Type_create_darray` and one `MPI_File_write_all`. Collective; a
/// failure on any rank is agreed after opening and at the end, so none is
/// left waiting.
fn mpiio_write<T: IndexValue>(
    array: &DistArray<T>,
    path: &Path,
    sync: bool,
) -> Result<(), CliError> {
    let comm = array.grid().communicator();
    let layout = array.layout();
    let header = dist_io::npy::encode(ElementType::of::<T>(), layout.storage(), layout.shape());
    let total = header.len() + layout.len() * std::mem::size_of::<T>();
    let file = MpiFile::open(comm, path, Access::Create);
    let mut file = super::read::agreed(comm, file)?;
    let mut done = file.set_size(total as u64);
    if comm.rank() == 0 {
        done = done.and_then(|()| file.write_at(0, &header));
    }
    let data: &[u8] = bytemuck::cast_slice(array.local_slice());
    let written = match array.rank() {
        Some(rank) => {
            let elem = std::mem::size_of::<T>();
            super::darray::darray(layout, rank, elem)
                .and_then(|d| Ok(file.write_darray_all(header.len() as u64, &d, data)?))
        }
        None => file.write_box_all(None, &[]).map_err(RedistError::from),
    };
    let mut done = done.map_err(RedistError::from).and(written);
    if sync {
        done = done.and(file.sync().map_err(RedistError::from));
    }
    done = done.and(file.close().map_err(RedistError::from));
    super::read::agreed(comm, done)
}

/// Removes the file at `path` on rank 0, so that every timed write makes a
/// new file, as a save always does (untimed; every rank waits for it in
/// the barrier that starts the repetition).
fn remove_file(comm: &SimpleCommunicator, path: &Path) {
    if comm.rank() == 0 {
        let _ = std::fs::remove_file(path);
    }
}
