//! Redistribution of block-cyclic arrays between layouts: changing an array
//! from one block-cyclic layout to another, on the same or another process
//! grid, planned once and executed many times.
//!
//! The main operation, on any number of ranks — whole rows on each rank to
//! 2×2 blocks dealt round-robin:
//!
//! ```
//! use dist_array::{DistArray, Layout};
//! use mpi::topology::Communicator;
//! use procgrid::ProcGrid;
//! use redist::{Options, Redistribution};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let universe = procgrid::init()?;
//!     let world = universe.world();
//!     let p = world.size() as usize;
//!     let grid = ProcGrid::new(&world, &[p, 1])?;
//!     let rows = Layout::parse(&[8, 6], &format!("block,*@{p}x1"))?;
//!     let blocks = Layout::parse(&[8, 6], &format!("cyclic(2),cyclic(2)@{p}x1"))?;
//!     // Planned once: the plan, the copy programs, the message buffers.
//!     let mut r = Redistribution::<f64>::new(&grid, &rows, &grid, &blocks, Options::default())?;
//!     let a = DistArray::from_fn(&grid, rows, |g| (10 * g[0] + g[1]) as f64)?;
//!     let mut b = DistArray::zeros(&grid, r.target_layout().clone())?;
//!     for _ in 0..3 {
//!         r.execute_into(&a, &mut b)?; // executed many times
//!     }
//!     assert_eq!(b.gather(0)?, a.gather(0)?); // the same array, laid out anew
//!     Ok(())
//! }
//! ```
//!
//! Run it with `mpirun -n P` (a doc test runs it as one rank).
//!
//! The pipeline reads as a row of small steps, one module each:
//!
//! - [`plan`]: [`RankPlan`], one rank's sends, receives and local part,
//!   built from the 1-D plans at its own coordinates (`rank.rs`) — what a
//!   [`Redistribution`] holds; [`Plan`], every n-D message of every rank,
//!   for tools and statistics; `axis/` holds [`AxisPlan`], the 1-D plan of
//!   one dimension — the runs of one basic period between every source and
//!   target process, or only one process's ([`AxisView`]);
//! - [`remap`]: relabelling the target's ranks so data stays put — the exact
//!   optimum by linear assignment, dense (`assignment.rs`) or on the
//!   non-zeros (`sparse.rs`), at any rank count from the dimensions' volume
//!   matrices (`relabel.rs`), the papers' closed forms (`closed_form.rs`),
//!   1-D relabellings (`axis.rs`), the n-D choice (`mod.rs`);
//! - [`schedule`]: contention-free steps — schedules one rank computes
//!   alone from the dimensions' colourings (`local.rs`: the shift where
//!   everyone talks to everyone, else a product of 1-D colourings), an
//!   edge colouring of the whole graph with the fewest steps for tools
//!   (`colouring.rs`); the tests keep Walker and Otto's closed form for
//!   r → Kr as a referee (`expansion.rs`);
//! - [`exec`]: [`Redistribution`], a rank's plan executed under MPI — its
//!   set-up in named steps (`build.rs`), what a rank builds without MPI
//!   ([`RankPart`]), the figures it needs of the others (`figures.rs`),
//!   copy programs, message routes, one file or folder per exchange strategy
//!   (`alltoallv`, `scheduled`, `async`, `combined`), one-pass copies
//!   between ranks of one node, batches of arrays of one element type
//!   (`batch.rs`) or several ([`MixedBatch`]), the `auto` cost model
//!   ([`cost`]), and the bare all-to-all it is measured against
//!   ([`BareAlltoallv`]);
//! - [`update`]: scale and accumulate in the copies that write the target
//!   ([`Update`], [`Scalar`]);
//! - [`options`]: [`Options`], the exchange [`Strategy`], the [`Remap`]
//!   mode, when copies stream ([`Streaming`]) and thresholds on run lengths
//!   ([`MinRun`]);
//! - [`tuning`]: every threshold the engine decides by, with what it
//!   trades;
//! - [`error`]: [`RedistError`], the one error type;
//! - `scalapack` (feature `scalapack`): BLACS contexts, descriptors and
//!   `pdgemr2d` on ndcyclic's arrays.
//!
//! Everything up to the schedule is pure and rank-local: a rank computes its
//! own part from the two layouts with no communication, in time and memory
//! of its own messages; one all-reduce then gives it the few figures it
//! needs of the others ([`exec`]).
#![deny(missing_docs)]

mod arith;
pub mod error;
pub mod exec;
pub mod options;
pub mod plan;
pub mod remap;
#[cfg(feature = "scalapack")]
pub mod scalapack;
pub mod schedule;
#[cfg(test)]
mod testing;
pub mod tuning;
pub mod update;

pub use dist_array;
pub use error::RedistError;
pub use exec::baseline::BareAlltoallv;
pub use exec::{cost, mpi_io, MixedBatch, RankPart, Redistribution};
pub use options::{MinRun, Options, Remap, Strategy, Streaming};
pub use plan::{AxisPlan, AxisView, Link, Plan, PlanStats, RankPlan, Run, Segments, Window};
pub use schedule::{Message, Schedule};
pub use update::{Scalar, Update};
