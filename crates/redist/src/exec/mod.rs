//! Executing a plan under MPI: the [`Redistribution`] object, built once and
//! run many times.
//!
//! The object and what it tells of itself are in `redistribution`; building
//! it, step by step, in `build`; executing it — check, agree, run — in
//! `execute`. Building turns the plan into this rank's copy programs (the
//! planning crate's `program`, shaped by the facts of this rank's machine,
//! `machine`), gathered with their buffer slots in `messages` (what every
//! exchange shares); makes every choice in one pure function of what the
//! ranks agreed on (`decide`, with the figures of `figures` and the
//! agreement of `agree`); decides how each message travels (`route`;
//! whether derived datatypes pay on the communicator is measured once,
//! `calibrate`: [`datatypes_pay`]); and sets up one exchange, each behind
//! one interface (`exchange`) in its own file:
//!
//! - `alltoallv`: pack every outgoing message, one `MPI_Alltoallv`, unpack;
//! - `scheduled`: one `MPI_Sendrecv` per step of the plan's
//!   contention-free schedule, with buffers no larger than the largest
//!   message;
//! - `asynchronous`: post every receive, pack and send each message,
//!   unpack each message as it arrives; between ranks of one node whose
//!   source storage is shared, the receiver copies straight from the
//!   sender's storage (`node_direct`);
//! - `combined`: where ranks span several nodes, the messages between two
//!   nodes travel as one, gathered and scattered through the node's shared
//!   memory by its leader;
//! - `auto`: `combined` for small messages across nodes, else `async`
//!   (never predicted slower than `alltoallv`: see [`Strategy::Auto`](crate::Strategy::Auto)).
//!
//! Every exchange moves a batch of K arrays with the same layouts (one
//! array is a batch of one): array by array, or stacked, every message
//! carrying the K arrays' slices (`stacked`; arrays of several element
//! types, [`MixedBatch`], in `mixed`).
//!
//! In every exchange the elements a rank keeps are copied straight from
//! source to target storage, with no buffer and no MPI call. Every call into
//! MPI's C interface goes through the `mpi_extras` crate. [`baseline`] holds the bare
//! all-to-all the engine is measured against, [`pattern`] the plain loop
//! over the same runs (the access pattern alone).

pub(crate) mod agree;
mod alltoallv;
mod any_exchange;
mod arrays;
mod asynchronous;
pub mod baseline;
mod build;
mod calibrate;
mod combined;
mod decide;
mod exchange;
mod execute;
mod figures;
pub mod machine;
mod messages;
mod mixed;
mod node_direct;
pub mod pattern;
mod redistribution;
mod route;
mod scheduled;
mod stacked;

pub use calibrate::datatypes_pay;
pub use mixed::MixedBatch;
pub use node_direct::NodeCopies;
pub use redistribution::{rank_part_bytes, Redistribution};
