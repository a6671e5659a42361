//! The command line of `redist halo`: [`HaloArgs`] and the yardsticks it
//! names ([`HaloBaseline`]).

use crate::measure::args::ElementArg;
use crate::shape::Shape;
use clap::{Args, ValueEnum};
use dist_array::LayoutSpec;
use redist::ghost::Corners;

/// The hand-written exchanges `redist halo` can time next to the update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HaloBaseline {
    /// Per axis, `MPI_Irecv`/`MPI_Isend` of `MPI_Type_create_subarray`
    /// faces to both neighbours, corners carried axis by axis
    /// (2DECOMP&FFT's recipe).
    Sendrecv,
    /// One `MPI_Neighbor_alltoallw` of subarray types per update.
    Neighbor,
}

/// Which ghost cells to fill, as the command line names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CornersArg {
    /// Faces, edges and corners.
    Box,
    /// Faces only.
    Star,
}

impl From<CornersArg> for Corners {
    fn from(c: CornersArg) -> Corners {
        match c {
            CornersArg::Box => Corners::Box,
            CornersArg::Star => Corners::Star,
        }
    }
}

/// Arguments of `redist halo`.
#[derive(Debug, Clone, Args)]
pub struct HaloArgs {
    /// Global array shape, e.g. `4096x4096`.
    #[arg(long, value_name = "AxBx..")]
    pub shape: Shape,
    /// The layout, e.g. `block,block@2x1` (at most one block per rank on
    /// every axis with ghosts).
    #[arg(long, value_name = "SPEC")]
    pub layout: LayoutSpec,
    /// Ghost widths: one for every axis, or one per axis, e.g. `1` or `2,1`.
    #[arg(
        long,
        value_name = "W[,W..]",
        value_delimiter = ',',
        default_value = "1"
    )]
    pub width: Vec<usize>,
    /// Periodic axes: one flag for every axis or one per axis (`1` or `0`),
    /// e.g. `1,0`.
    #[arg(
        long,
        value_name = "P[,P..]",
        value_delimiter = ',',
        default_value = "1"
    )]
    pub periodic: Vec<u8>,
    /// Which ghost cells to fill.
    #[arg(long, value_enum, default_value = "box")]
    pub corners: CornersArg,
    /// Element type.
    #[arg(long = "type", value_enum, default_value = "f64")]
    pub element: ElementArg,
    /// Timed repetitions (the median is reported).
    #[arg(long, default_value_t = 21, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub reps: usize,
    /// Check every ghost against the value of its global index, and the
    /// ghosts no update writes against the value they were given.
    #[arg(long)]
    pub verify: bool,
    /// Also time the update split around a sweep of the interior (a
    /// 2·d+1-point average into a second array; `--type f64`): the sweep
    /// alone, and begin, sweep, finish.
    #[arg(long)]
    pub overlap: bool,
    /// Move every ghost as a message, also between ranks of one node.
    #[arg(long)]
    pub no_node_direct: bool,
    /// A wisdom file: `redist halo` reads the way measured for this update
    /// on this machine from it (a file without one is a warning, never an
    /// error; default: `NDCYCLIC_WISDOM`); `redist tune ghosts` adds what
    /// it measures to it.
    #[arg(long, value_name = "FILE")]
    pub wisdom: Option<std::path::PathBuf>,
    /// Time updates without the ranks agreeing on the array first
    /// (`update_unchecked`: no all-reduce), as a hand-written exchange.
    #[arg(long)]
    pub unchecked: bool,
    /// Yardsticks to time in the same run, e.g. `sendrecv,neighbor`.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub baseline: Vec<HaloBaseline>,
    /// One JSON object on one line (rank 0), instead of text.
    #[arg(long)]
    pub json: bool,
}

impl HaloArgs {
    /// The widths, one per axis of `ndim`.
    pub fn widths(&self, ndim: usize) -> Option<Vec<usize>> {
        per_axis(&self.width, ndim)
    }

    /// The periodic flags, one per axis of `ndim`.
    pub fn periodic(&self, ndim: usize) -> Option<Vec<bool>> {
        per_axis(&self.periodic, ndim).map(|p| p.iter().map(|&x| x != 0).collect())
    }
}

/// `values` for `ndim` axes: as given, or one value for every axis.
fn per_axis<T: Copy>(values: &[T], ndim: usize) -> Option<Vec<T>> {
    match values {
        [one] => Some(vec![*one; ndim]),
        v if v.len() == ndim => Some(v.to_vec()),
        _ => None,
    }
}
