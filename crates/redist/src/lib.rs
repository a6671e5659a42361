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
//! The mathematics comes from the planning crate, `redist_plan`, which
//! holds no MPI: layouts, 1-D and n-D plans, remapping, schedules, copy
//! programs and kernels, and what one rank builds from them
//! ([`RankPart`]). This crate adds what needs the other ranks:
//!
//! - [`exec`]: [`Redistribution`], a rank's part executed under MPI —
//!   built in named steps (`build.rs`) from the facts of the machine it
//!   runs on (`machine.rs`) and the figures it needs of the others
//!   (`figures.rs`), every choice made by one pure function of them
//!   (`decide.rs`); executed as check, agree, run (`execute.rs`) through
//!   one interface every exchange implements (`exchange.rs`: `alltoallv`,
//!   `scheduled`, `async`, `combined`), on a batch of K arrays of one
//!   element type or several ([`MixedBatch`]; one array is a batch of
//!   one); and the yardsticks it is measured against: the bare
//!   all-to-all ([`BareAlltoallv`]) and the access pattern copied by a
//!   plain loop ([`PatternBaseline`]);
//! - [`ghost`]: ghost-cell updates for stencil solvers ([`GhostUpdate`]:
//!   planned once, executed every step, `begin`/`finish` to overlap the
//!   interior's sweep), node-direct reads within a node and persistent
//!   messages across nodes;
//! - [`options`]: [`Options`], the exchange [`Strategy`] and thresholds on
//!   run lengths ([`MinRun`]), beside the plan's [`Remap`] and
//!   [`Streaming`];
//! - [`tune`]: choices measured on the real arrays ([`tune::tune`]) and
//!   kept across jobs in wisdom files ([`Options::wisdom`]);
//! - [`tuning`]: every threshold the exchange decides by, with what it
//!   trades;
//! - [`faults`]: the faults tests inject (`NDCYCLIC_FAULTS`, read once);
//! - [`error`]: [`RedistError`], the one error type.
//!
//! ScaLAPACK's side (BLACS contexts, descriptors, `pdgemr2d` and PBLAS on
//! ndcyclic's arrays), which the `redist` tool measures against, lives in
//! that tool's crate: `redist_cli::scalapack` (crate `redist-cli`, feature
//! `scalapack`).
//!
//! Everything up to the schedule is pure and rank-local: a rank computes its
//! own part from the two layouts with no communication, in time and memory
//! of its own messages; one all-reduce then gives it the few figures it
//! needs of the others ([`exec`]).
#![deny(missing_docs)]

pub mod error;
pub mod exec;
pub mod faults;
pub mod ghost;
pub mod options;
pub mod tune;
pub mod tuning;

pub use dist_array;
pub use error::RedistError;
pub use exec::baseline::BareAlltoallv;
pub use exec::machine::this_machine;
pub use exec::pattern::PatternBaseline;
pub use exec::{rank_part_bytes, MixedBatch, NodeCopies, Redistribution};
pub use ghost::{Corners, GhostSpec, GhostUpdate};
pub use options::{MinRun, Options, Padding, Remap, Strategy, Streaming};
pub use redist_plan;
pub use redist_plan::{
    AxisPlan, AxisView, Link, Machine, Message, PartOptions, Plan, PlanError, PlanStats, RankPart,
    RankPlan, Run, Scalar, Schedule, Segments, Update, Window,
};
pub use tune::Measured;

/// The crate's README, whose example runs as a doc test (one rank).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
