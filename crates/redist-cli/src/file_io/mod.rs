//! `redist io`: saving and loading distributed arrays, timed and checked,
//! next to plain MPI-IO writing and reading the same file.
//!
//! - `args.rs`: the subcommands and their arguments;
//! - `write.rs`: `redist io write`, and the MPI-IO write baseline;
//! - `read.rs`: `redist io read`, its check, and the MPI-IO read baseline;
//! - `hdf5_baseline.rs`: the parallel HDF5 baselines (`--baseline hdf5`,
//!   feature `hdf5`);
//! - `report.rs`: the JSON object and the readable summary;
//! - `timing.rs`: the timed runs, the slowest rank's seconds;
//! - `info`: `redist io info`, below.

pub mod args;
mod darray;
mod hdf5_baseline;
mod read;
mod report;
mod timing;
mod write;

use crate::error::CliError;
use crate::measure::values::IndexValue;
use args::{Common, FormatArg, InfoArgs, TypeArg};
use dist_array::{Complex, Layout};
use dist_io::{Aggregators, Format, IoOptions};
use mpi::topology::{Communicator, SimpleCommunicator};
use procgrid::ProcGrid;
use std::io::Write;

pub use args::IoCommand;

/// Runs `redist io write` or `read` on `world` (every rank takes part;
/// rank 0 writes to `out`); `info` needs no MPI (see [`info`]).
pub fn run(
    command: &IoCommand,
    world: &SimpleCommunicator,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    match command {
        IoCommand::Write(args) => with_type(args.element, |t| t.write(args, world, out)),
        IoCommand::Read(args) => {
            let element = read::element_of(args, world)?;
            with_type(element, |t| t.read(args, world, out))
        }
        IoCommand::Info(args) => info(args, out),
    }
}

/// What one element type does: [`with_type`] picks the implementation.
trait Typed {
    fn write(
        &self,
        args: &args::WriteArgs,
        world: &SimpleCommunicator,
        out: &mut dyn Write,
    ) -> Result<(), CliError>;
    fn read(
        &self,
        args: &args::ReadArgs,
        world: &SimpleCommunicator,
        out: &mut dyn Write,
    ) -> Result<(), CliError>;
}

/// The implementation for `T`.
struct Of<T>(std::marker::PhantomData<T>);

impl<T: IndexValue> Typed for Of<T> {
    fn write(
        &self,
        args: &args::WriteArgs,
        world: &SimpleCommunicator,
        out: &mut dyn Write,
    ) -> Result<(), CliError> {
        write::run::<T>(args, world, out)
    }
    fn read(
        &self,
        args: &args::ReadArgs,
        world: &SimpleCommunicator,
        out: &mut dyn Write,
    ) -> Result<(), CliError> {
        read::run::<T>(args, world, out)
    }
}

/// Calls `f` with the implementation for `element`.
fn with_type<R>(element: TypeArg, f: impl FnOnce(&dyn Typed) -> R) -> R {
    use std::marker::PhantomData as P;
    match element {
        TypeArg::F32 => f(&Of::<f32>(P)),
        TypeArg::F64 => f(&Of::<f64>(P)),
        TypeArg::I32 => f(&Of::<i32>(P)),
        TypeArg::I64 => f(&Of::<i64>(P)),
        TypeArg::U8 => f(&Of::<u8>(P)),
        TypeArg::U32 => f(&Of::<u32>(P)),
        TypeArg::U64 => f(&Of::<u64>(P)),
        TypeArg::C32 => f(&Of::<Complex<f32>>(P)),
        TypeArg::C64 => f(&Of::<Complex<f64>>(P)),
    }
}

/// The tool's name of a file's element type.
fn type_arg(element: dist_io::ElementType) -> TypeArg {
    use dist_io::ElementType as E;
    match element {
        E::F32 => TypeArg::F32,
        E::F64 => TypeArg::F64,
        E::I32 => TypeArg::I32,
        E::I64 => TypeArg::I64,
        E::U8 => TypeArg::U8,
        E::U32 => TypeArg::U32,
        E::U64 => TypeArg::U64,
        E::C32 => TypeArg::C32,
        E::C64 => TypeArg::C64,
    }
}

/// The format `--format` and `--dataset` name, if any: `--dataset` alone
/// means HDF5.
fn format_of(format: Option<FormatArg>, dataset: Option<&String>) -> Option<Format> {
    let hdf5 = |d: Option<&String>| Format::Hdf5 {
        dataset: d
            .cloned()
            .unwrap_or_else(|| dist_io::DEFAULT_DATASET.into()),
    };
    match (format, dataset) {
        (Some(FormatArg::Npy), _) => Some(Format::Npy),
        (Some(FormatArg::H5), d) => Some(hdf5(d)),
        (None, Some(d)) => Some(hdf5(Some(d))),
        (None, None) => None,
    }
}

/// The library's options as the command line sets them.
fn options_of(common: &Common, path_format: Option<Format>) -> IoOptions {
    let mut options = IoOptions {
        format: format_of(common.format, common.dataset.as_ref()).or(path_format),
        ..IoOptions::default()
    };
    if let Some(k) = common.aggregators {
        options.aggregators = Aggregators::Count(k);
    }
    if let Some(bytes) = common.staging {
        options.staging_bytes = bytes;
    }
    options
}

/// A grid for `layout` over the first ranks of `world`. Collective.
fn grid_for(layout: &Layout, world: &SimpleCommunicator) -> Result<ProcGrid, CliError> {
    let ranks = usize::try_from(world.size()).unwrap_or(0);
    if layout.ranks() > ranks {
        return Err(CliError::TooFewRanks {
            grids: layout.spec().to_string(),
            ranks,
        });
    }
    Ok(ProcGrid::builder(layout.grid_extents())
        .subset(true)
        .build(world)?)
}

/// `redist io info`: the header of one file, read by this process alone.
pub fn info(args: &InfoArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let options = IoOptions {
        format: format_of(args.format, args.dataset.as_ref()),
        ..IoOptions::default()
    };
    let info = dist_io::info(&args.file, &options)?;
    if args.json {
        let order = match info.order {
            procgrid::Order::RowMajor => "C",
            procgrid::Order::ColumnMajor => "F",
        };
        let dataset = match &info.format {
            Format::Hdf5 { dataset } => Some(dataset.clone()),
            Format::Npy => None,
        };
        let value = serde_json::json!({
            "file": args.file.display().to_string(),
            "format": info.format.name(),
            "dataset": dataset,
            "type": info.element.name(),
            "dtype": info.element.numpy_name(),
            "shape": info.shape,
            "order": order,
            "data_offset": info.data_offset,
            "version": info.version.map(|(a, b)| format!("{a}.{b}")),
            "file_bytes": info.file_bytes,
            "data_bytes": info.data_bytes(),
            "layout": info.layout,
        });
        writeln!(out, "{value}")?;
    } else {
        writeln!(out, "{}: {info}", args.file.display())?;
    }
    Ok(())
}
