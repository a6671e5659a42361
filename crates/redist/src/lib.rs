//! Redistribution of block-cyclic arrays between layouts.
//!
//! The pipeline reads as a row of small steps: runs → plan → remap →
//! schedule → exchange. The modules so far:
//!
//! - [`axis_plan`]: [`AxisPlan`], the 1-D plan of one dimension — the runs of
//!   one basic period between every source and target process;
//! - [`remap`]: relabelling the target's ranks so data stays put — the exact
//!   optimum by linear assignment, and the papers' closed forms;
//! - [`schedule`]: contention-free steps — minimal edge colouring, a greedy
//!   variant that lowers the total cost, and the closed form for r → Kr;
//! - [`plan`]: [`Plan`], every n-D message (the Cartesian product of the 1-D
//!   runs), its statistics, remapping and schedule;
//! - [`execute`]: [`Redistribution`], a plan executed under MPI with one of
//!   the exchange [`Strategy`]s (`alltoallv`, `scheduled`, `async`, `auto`);
//!   its copy programs (pack, unpack, local copy by whole stretches) live in
//!   the private `transfer` module, the mapping of another rank's shared
//!   storage (one-pass copies between ranks of one node) in the private
//!   `node_memory` module, the `auto` cost model in [`cost`];
//! - [`error`]: [`RedistError`], the one error type.
//!
//! The `redist` command-line tool (`show`, `plan`, `run`) lives in the
//! `redist-cli` package, so this library builds neither clap nor serde_json.
//!
//! A plan needs only the two layouts — no MPI:
//!
//! ```
//! use dist_array::Layout;
//! use redist::{Plan, Remap};
//!
//! let from = Layout::parse(&[100], "cyclic(10)@5").unwrap();
//! let to = Layout::parse(&[100], "cyclic(5)@5").unwrap();
//! let plan = Plan::new(&from, &to, Remap::Optimal).unwrap();
//! let stats = plan.stats();
//! assert_eq!(stats.elements, 100);
//! assert_eq!(stats.kept_local, 50);
//! assert_eq!(stats.kept_local + stats.moved, stats.elements);
//! ```
#![deny(missing_docs)]

pub mod axis_plan;
pub mod cost;
pub mod error;
pub mod execute;
mod node_memory;
pub mod plan;
pub mod remap;
pub mod schedule;
mod transfer;

pub use axis_plan::{AxisPlan, Run, Segments};
pub use dist_array;
pub use error::RedistError;
pub use execute::{Options, Redistribution, Strategy};
pub use plan::{Piece, Plan, PlanStats, Remap};
pub use schedule::{ExpansionSchedule, Message, Schedule};
