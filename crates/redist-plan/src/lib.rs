//! The mathematics a redistribution of block-cyclic arrays is made of, with
//! no MPI in it: layouts, the plans between two layouts, remapping,
//! schedules, and the copy programs and kernels that move the data in
//! memory. Everything here takes plain values — layouts, a window, options,
//! a rank number, the facts of a machine — and returns what one rank needs;
//! nothing reads the environment or talks to another rank. The engine
//! (`redist`) adds the communication on top.
//!
//! What one rank of 4 096 builds to turn whole rows into whole columns of a
//! 2^20 × 2^20 array, in a few milliseconds and without the array:
//!
//! ```
//! use redist_plan::{Layout, Machine, PartOptions, RankPart, Window};
//! let rows = Layout::parse(&[1 << 20, 1 << 20], "block,*@4096x1")?;
//! let columns = Layout::parse(&[1 << 20, 1 << 20], "*,block@1x4096")?;
//! let whole = Window::whole(rows.shape());
//! let machine = Machine::single_core();
//! let mut part = RankPart::new(&rows, &columns, &whole, PartOptions::default(), 7, 8, &machine)?;
//! assert_eq!(part.plan().recvs().len(), 4095); // a piece from every other rank
//! assert_eq!(part.schedule()?.steps, 4095); // one per step, never two at once
//! # Ok::<(), redist_plan::PlanError>(())
//! ```
//!
//! The crate reads as the steps of a redistribution, one module each, each
//! using only those above it in this list and the error type:
//!
//! - [`coords`]: grid coordinates and ranks, row- or column-major
//!   ([`Order`]);
//! - [`layout`]: one dimension's block-cyclic map ([`AxisMap`]), layout
//!   specs such as `cyclic(64),block@2x3` ([`LayoutSpec`], [`Dist`]), and
//!   [`Layout`]: shape, distributions, grid and rank map, with every index
//!   map of a block-cyclic array;
//! - [`element`]: the element types arrays hold ([`Element`]);
//! - [`tuning`]: every threshold the copies decide by, with what it trades;
//! - [`options`]: how the target's ranks may be relabelled ([`Remap`]) and
//!   when copies stream ([`Streaming`]);
//! - [`padding`]: ghost layers around the local parts a redistribution
//!   reads and writes ([`Padding`]): strides and offsets of the copy
//!   programs, never other messages;
//! - [`plan`]: the 1-D plan of one dimension ([`AxisPlan`]: the runs of one
//!   basic period between source and target processes), one rank's sends,
//!   receives and local copy ([`RankPlan`]), over a [`Window`] of the
//!   arrays;
//! - [`remap`]: relabelling the target's ranks so data stays where it is —
//!   the exact optimum by linear assignment, dense or sparse, and the
//!   papers' closed forms;
//! - [`schedule`]: contention-free steps, one rank's own
//!   ([`RankSchedule`]) or the whole graph's edge colouring ([`Schedule`]);
//! - [`whole`]: every message of a redistribution ([`Plan`]), for tools and
//!   statistics;
//! - [`kernel`]: the copy loops — contiguous stretches, offset tables,
//!   transposing tiles, streaming stores — storing through a `Store`;
//! - [`update`]: the stores that scale and accumulate in the copy that
//!   writes the target ([`Update`], [`Scalar`]);
//! - [`program`]: copy programs, one per message, that walk one period of
//!   the plan's runs per dimension through the kernels ([`RankProgram`]);
//! - [`stream`]: from what size a rank's copies stream;
//! - [`part`]: what one rank builds for a redistribution, from plain inputs
//!   and the [`Machine`] it runs on ([`RankPart`]);
//! - [`ghost`]: ghost layers for stencil solvers — which boxes of whose
//!   padded storage fill which ghosts of a rank ([`ghost::RankGhosts`]),
//!   and the box copies;
//! - [`error`]: [`PlanError`], the one error type.
#![deny(missing_docs)]

mod arith;
pub mod coords;
pub mod element;
pub mod error;
pub mod ghost;
pub mod kernel;
pub mod layout;
pub mod options;
pub mod padding;
pub mod part;
pub mod plan;
pub mod program;
pub mod remap;
pub mod schedule;
pub mod stream;
#[cfg(test)]
mod testing;
pub mod tuning;
pub mod update;
pub mod whole;

/// The crate's README, whose example runs as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use coords::{check_extents, coords_to_rank, rank_to_coords, shifted, Order};
pub use element::Element;
pub use error::PlanError;
pub use layout::axis::AxisMap;
pub use layout::spec::{Dist, LayoutSpec};
pub use layout::{Layout, LocalBlock, LocalBlocks};
pub use num_complex::Complex;
pub use options::{Remap, Streaming};
pub use padding::Padding;
pub use part::{Machine, PartOptions, RankPart};
pub use plan::{AxisPlan, AxisView, Link, RankPlan, Run, Segments, Window};
pub use program::RankProgram;
pub use schedule::{Message, RankSchedule, Schedule};
pub use update::{Scalar, Update};
pub use whole::{Plan, PlanStats};
