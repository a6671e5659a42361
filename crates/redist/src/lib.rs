//! Redistribution of block-cyclic arrays between layouts, and the `redist`
//! command-line tool.
//!
//! The pipeline reads as a row of small steps: runs → plan → remap →
//! schedule → exchange. The modules so far:
//!
//! - [`plan`]: [`Plan`], every n-D message (the Cartesian product of the 1-D
//!   runs), its statistics, remapping and schedule; its `axis.rs` holds
//!   [`AxisPlan`], the 1-D plan of one dimension — the runs of one basic
//!   period between every source and target process;
//! - [`remap`]: relabelling the target's ranks so data stays put — the exact
//!   optimum by linear assignment (`assignment.rs`), the papers' closed forms
//!   (`closed_form.rs`), 1-D relabellings (`axis.rs`), the n-D choice
//!   (`mod.rs`);
//! - [`schedule`]: contention-free steps — minimal edge colouring and a greedy
//!   variant that lowers the total cost (`colouring.rs`), the closed form for
//!   r → Kr (`expansion.rs`);
//! - [`execute`]: [`Redistribution`], a plan executed under MPI with one of
//!   the exchange [`Strategy`]s (`alltoallv`, `scheduled`, `async`, `auto`);
//!   its copy programs (pack, unpack, local copy by whole stretches) live in
//!   the private `transfer` module, the mapping of another rank's shared
//!   storage (one-pass copies between ranks of one node) in the private
//!   `node_memory` module, the `auto` cost model in [`cost`];
//! - [`measure`]: `redist run`, timing and verifying an execution next to a
//!   bare `MPI_Alltoallv` of the same bytes;
//! - [`report`]: `redist plan`, the plan's summary, schedule table and JSON;
//! - [`cli_args`]: argument types shared by the `redist` subcommands —
//!   [`Shape`](cli_args::Shape) (`--shape 8x8`);
//! - [`show`]: `redist show`, who owns what in one layout — a character grid
//!   of owning ranks for small arrays, a per-rank summary table, and the JSON
//!   object `{"shape","layout","ranks","local_shapes"}`;
//! - [`error`]: [`RedistError`], the one error type (with the tool's exit codes).
//!
//! The `redist` binary (`src/bin/redist.rs`) only parses the command line and
//! dispatches to one function per subcommand here.
//!
//! ```
//! use dist_array::Layout;
//! let layout = Layout::parse(&[10, 7], "cyclic(3),block+1@2x2").unwrap();
//! let v = redist::show::to_json(&layout);
//! assert_eq!(v["local_shapes"], serde_json::json!([[6, 3], [6, 4], [4, 3], [4, 4]]));
//! ```
#![deny(missing_docs)]

mod arith;
pub mod cli_args;
pub mod cost;
pub mod error;
pub mod execute;
pub mod measure;
mod node_memory;
pub mod plan;
pub mod remap;
pub mod report;
pub mod schedule;
pub mod show;
mod transfer;

pub use dist_array;
pub use error::RedistError;
pub use execute::{Options, Redistribution, Strategy};
pub use plan::{AxisPlan, Piece, Plan, PlanStats, Remap, Run, Segments};
pub use schedule::{ExpansionSchedule, Message, Schedule};
