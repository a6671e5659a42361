//! The ADI heat solver of `examples/adi.rs`: u_t = u_xx + u_yy on the unit
//! square, zero Dirichlet boundary, Peaceman–Rachford alternating-direction
//! implicit steps, with the field redistributed between whole x-lines and
//! whole y-lines twice per step.
//!
//! The field is `u[i][j]` with `i` along x (array dimension 0) and `j` along
//! y (dimension 1) on an `n × n` interior grid, `h = 1/(n+1)`,
//! `r = dt / (2h²)`. One step:
//!
//! ```text
//! (I − r δx²) u* = (I + r δy²) uⁿ        y-term explicit where y-lines are whole,
//!                                         then x-systems where x-lines are whole
//! (I − r δy²) uⁿ⁺¹ = (I + r δx²) u*      x-term explicit where x-lines are whole,
//!                                         then y-systems where y-lines are whole
//! ```
//!
//! Every element sees the same floating-point operations in the same order
//! whatever the number of ranks or the layouts ([`kernels`]), so results are
//! bitwise identical for any rank count and layout pair, and equal to
//! [`solve_serial`].
//!
//! # Checkpoint and restart
//!
//! With [`AdiConfig::checkpoint`] a run saves `u` after every step whose
//! number is a multiple of [`Checkpoints::every`] — the last step included
//! when it is one — to a `.npy` file and a JSON sidecar beside it
//! ([`checkpoint`] describes the two files and why a crash never leaves a
//! pair that resumes from the wrong step). With [`AdiConfig::restart`] a
//! run loads such a checkpoint instead of the initial field, onto its own
//! layouts on its own rank count, and runs the steps after the
//! checkpoint's up to [`AdiConfig::steps`], which stays the total step
//! count. The state is `u` alone and the steps are bitwise reproducible,
//! so an interrupted run resumed on any rank count ends with the
//! uninterrupted run's field, bit for bit.
//!
//! # Where things are
//!
//! - [`kernels`]: the point-wise kernels both solvers share;
//! - `explicit.rs`, `tridiagonal.rs`: the two halves of a step on whole
//!   lines — the explicit term, the tridiagonal solves;
//! - `exact.rs`, `mesh.rs`: the initial field and the exact solution; the
//!   discretisation and the checks of its numbers;
//! - `serial.rs`: [`solve_serial`], the reference on one process;
//! - `plans.rs`, `fields.rs`: the distributed run's layouts, grids and
//!   redistributions; its field and work arrays;
//! - `views.rs`: a 2-D array's local part as an ndarray view;
//! - `step.rs`, `time_loop.rs`: one step; the steps of a run, timed, with
//!   checkpoints and progress;
//! - `report.rs`: the final field's errors and checksum ([`fnv1a64`]);
//! - `run.rs`: [`solve`], the distributed run from its checks to its
//!   [`AdiResult`];
//! - [`checkpoint`]: saving and resuming the state;
//! - `heat_map.rs`: [`heat_map_rgb`], the field as a picture;
//! - `tuned.rs`: [`choose_lines`], the line phases' rank count chosen by
//!   timing whole steps (`--grid auto`).

use dist_array::LayoutSpec;
use ndarray::Array2;
use redist::{Remap, Strategy};
use std::path::PathBuf;
use thiserror::Error;

pub mod checkpoint;
mod exact;
mod explicit;
mod fields;
mod heat_map;
pub mod kernels;
mod mesh;
mod plans;
mod report;
mod run;
mod serial;
mod step;
mod time_loop;
mod tridiagonal;
mod tuned;
mod views;

pub use checkpoint::Checkpoints;
pub use heat_map::heat_map_rgb;
pub use report::fnv1a64;
pub use run::solve;
pub use serial::solve_serial;
pub use tuned::{choose_lines, line_layouts};

/// What can go wrong in the ADI solver.
#[derive(Debug, Error)]
pub enum AdiError {
    /// A layout that does not keep the needed dimension whole.
    #[error("{which} layout {spec} must keep dimension {dim} whole (grid extent 1 there, e.g. {example})")]
    LineLayout {
        /// `x-line` or `y-line`.
        which: &'static str,
        /// The spec as given.
        spec: String,
        /// The dimension that must be whole.
        dim: usize,
        /// A valid example.
        example: String,
    },
    /// Invalid numerical parameters.
    #[error("invalid parameter: {0}")]
    Parameter(String),
    /// A layout or array error.
    #[error(transparent)]
    Dist(#[from] dist_array::DistError),

    /// A layout's error.
    #[error(transparent)]
    Layout(#[from] dist_array::PlanError),
    /// A redistribution error.
    #[error(transparent)]
    Redist(#[from] redist::RedistError),
    /// A process-grid error.
    #[error(transparent)]
    Grid(#[from] procgrid::GridError),
    /// Saving or loading a checkpoint's array failed.
    #[error(transparent)]
    Io(#[from] dist_io::IoError),
    /// A checkpoint that cannot be written, read or resumed from.
    #[error("checkpoint {path}: {reason}")]
    Checkpoint {
        /// The checkpoint's array or sidecar.
        path: String,
        /// What is wrong and what was expected.
        reason: String,
    },
}

/// Parameters of a run.
#[derive(Debug, Clone)]
pub struct AdiConfig {
    /// Interior points per dimension.
    pub n: usize,
    /// Time steps, in all: a restarted run ends after the same step as an
    /// uninterrupted one.
    pub steps: usize,
    /// Time step.
    pub dt: f64,
    /// Layout with whole x-lines (dimension 0 whole); `None`: `*,block@1xP`.
    pub x_layout: Option<LayoutSpec>,
    /// Layout with whole y-lines (dimension 1 whole); `None`: `block,*@Px1`.
    pub y_layout: Option<LayoutSpec>,
    /// Exchange strategy of both redistributions.
    pub strategy: Strategy,
    /// Remapping of the y → x redistribution (x → y returns to the y layout).
    pub remap: Remap,
    /// Add the mode 0.5·sin(2πx)·sin(3πy) to the initial field.
    pub two_modes: bool,
    /// Print progress on rank 0 for runs longer than a few seconds.
    pub progress: bool,
    /// Save the state every so many steps; `None`: never.
    pub checkpoint: Option<Checkpoints>,
    /// Resume from the checkpoint at this path (its array's file) instead
    /// of starting from the initial field; `None`: start at step 0.
    pub restart: Option<PathBuf>,
}

/// What a run produced. Field, checksum and errors are the same on every rank.
#[derive(Debug, Clone)]
pub struct AdiResult {
    /// Ranks in the run.
    pub ranks: usize,
    /// Final time.
    pub time: f64,
    /// Max-norm error against the exact solution.
    pub max_error: f64,
    /// Discrete L2 error, sqrt(h² Σ e²).
    pub l2_error: f64,
    /// FNV-1a 64 of the final field, global row-major order, little-endian bytes.
    pub checksum: u64,
    /// The final field on rank 0, `None` elsewhere.
    pub field: Option<Array2<f64>>,
    /// Wall time of the time loop, seconds.
    pub time_s: f64,
    /// Of which redistribution (rank 0's view).
    pub redist_s: f64,
    /// Of which computation (rank 0's view).
    pub compute_s: f64,
    /// Bytes moved between ranks per step (both redistributions).
    pub bytes_moved_per_step: usize,
    /// Strategies used (y → x, x → y).
    pub strategies: (Strategy, Strategy),
    /// The step of the checkpoint the run resumed from (`None`: it started
    /// from the initial field); it ran the steps after it.
    pub restarted_from: Option<usize>,
    /// Checkpoints the run saved.
    pub checkpoints_written: usize,
    /// Of the time loop's wall time, seconds spent saving checkpoints
    /// (rank 0's view).
    pub checkpoint_s: f64,
    /// Seconds spent reading the checkpoint resumed from, before the time
    /// loop: its sidecar, its array, its digest (rank 0's view; 0 without
    /// a restart).
    pub restart_s: f64,
}
