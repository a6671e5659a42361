//! The command line of `redist io`: its three subcommands and their
//! arguments.

use crate::shape::{Origin, Shape};
use clap::{Args, Subcommand, ValueEnum};
use dist_array::LayoutSpec;
use std::path::PathBuf;

/// `redist io`'s subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum IoCommand {
    /// Fill an array with the value of each element's global index and save
    /// it, timed (under `mpirun -n P`).
    Write(WriteArgs),
    /// Load a file into a layout, timed, and check it (under `mpirun -n P`).
    Read(ReadArgs),
    /// Print a file's header: format, element type, shape, order (no MPI needed).
    Info(InfoArgs),
}

/// Element types of `redist io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TypeArg {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `i32`.
    I32,
    /// `i64`.
    I64,
    /// `u8`.
    U8,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// `Complex<f32>`.
    C32,
    /// `Complex<f64>`.
    C64,
}

/// File formats of `redist io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// NumPy's `.npy`.
    Npy,
    /// An HDF5 dataset (the tool built with the `hdf5` feature).
    H5,
}

/// Storage orders of `redist io write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OrderArg {
    /// Row-major local parts: a C order file.
    C,
    /// Column-major local parts: a Fortran order file.
    F,
}

/// Baselines of `redist io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IoBaseline {
    /// The same file written or read by MPI-IO as a C programmer would:
    /// `MPI_Type_create_darray` of the array's layout, a file view,
    /// `MPI_File_write_all` / `read_all` (ROMIO's two-phase I/O).
    Mpiio,
    /// The same HDF5 dataset written or read by parallel HDF5 as a C
    /// programmer would: each rank's blocks selected as a union of
    /// hyperslabs, one collective `H5Dwrite` / `H5Dread` of its local part
    /// (the tool built with the `hdf5` feature).
    Hdf5,
}

/// What `write` and `read` share.
#[derive(Debug, Clone, Args)]
pub struct Common {
    /// The file.
    #[arg(long)]
    pub file: PathBuf,
    /// The array's layout, a spec string such as `cyclic(64),cyclic(64)@1x2`.
    #[arg(long)]
    pub layout: LayoutSpec,
    /// The file's format (default: from the name when writing, from the
    /// first bytes when reading).
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// The HDF5 dataset (default `data`).
    #[arg(long)]
    pub dataset: Option<String>,
    /// Aggregators: this many ranks write and read, spread over the nodes
    /// (default: one per node, every rank when all share one node).
    #[arg(long, value_name = "K")]
    pub aggregators: Option<usize>,
    /// The memory a rank may spare beyond its local part, e.g. `64M`
    /// (default 64 MiB; half holds the file's bytes an aggregator stages).
    #[arg(long, value_name = "BYTES", value_parser = bytes)]
    pub staging: Option<usize>,
    /// Timed repetitions (after one untimed warm-up).
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub reps: u64,
    /// Time the same transfer by plain MPI-IO (`.npy`) or parallel HDF5
    /// (`.h5`) too.
    #[arg(long, value_enum)]
    pub baseline: Option<IoBaseline>,
    /// One JSON object on the last line of stdout (rank 0).
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `redist io write`.
#[derive(Debug, Clone, Args)]
pub struct WriteArgs {
    /// Global array shape, e.g. `4096x4096`.
    #[arg(long, value_name = "AxBx..")]
    pub shape: Shape,
    /// Element type.
    #[arg(long = "type", value_enum, default_value = "f64")]
    pub element: TypeArg,
    /// Local storage order, and so the file's.
    #[arg(long, value_enum, default_value = "c")]
    pub order: OrderArg,
    /// Flush the file to storage before it is renamed.
    #[arg(long)]
    pub sync: bool,
    #[command(flatten)]
    pub common: Common,
}

/// Arguments of `redist io read`.
#[derive(Debug, Clone, Args)]
pub struct ReadArgs {
    /// The element type expected (default: the file's).
    #[arg(long = "type", value_enum)]
    pub element: Option<TypeArg>,
    /// Read only this window of the file's array: its extents, e.g. `1x512x512`.
    #[arg(long, value_name = "AxBx..")]
    pub window: Option<Shape>,
    /// The window's first index in the file's array (default: the origin).
    #[arg(long, value_name = "I,J,..")]
    pub from_window: Option<Origin>,
    /// Check every element against the value of its global index.
    #[arg(long)]
    pub verify: bool,
    #[command(flatten)]
    pub common: Common,
}

/// Arguments of `redist io info`.
#[derive(Debug, Clone, Args)]
pub struct InfoArgs {
    /// The file.
    pub file: PathBuf,
    /// The file's format (default: from its first bytes).
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// The HDF5 dataset (default `data`).
    #[arg(long)]
    pub dataset: Option<String>,
    /// One JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// A byte count with an optional unit: `65536`, `64K`, `64M`, `1G`.
pub fn bytes(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 10),
        Some((i, 'm' | 'M')) => (&t[..i], 20),
        Some((i, 'g' | 'G')) => (&t[..i], 30),
        _ => (t, 0),
    };
    digits
        .trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("{s:?} is not a byte count; expected e.g. 65536, 64K, 64M or 1G"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_take_units() {
        assert_eq!(bytes("65536"), Ok(65536));
        assert_eq!(bytes("64K"), Ok(64 << 10));
        assert_eq!(bytes("64m"), Ok(64 << 20));
        assert_eq!(bytes(" 1G "), Ok(1 << 30));
        assert!(bytes("1T").is_err());
        assert!(bytes("").is_err());
        assert!(bytes("M").is_err());
    }
}
