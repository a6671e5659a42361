//! Tuning: choices measured on the real arrays instead of `auto`'s rules,
//! and kept across jobs in a wisdom file — how a redistribution moves
//! ([`tune`]), how a ghost update moves ([`tune_ghosts`]) and which
//! process grid a whole job runs on ([`choose_grid`]).
//!
//! `auto` decides how a redistribution moves by rules measured on the
//! development machine (`tuning.rs`). On another machine, or for a job
//! that runs one redistribution thousands of times, measuring pays: [`tune`]
//! times every admissible choice ([`candidates`]) on the job's own arrays
//! and keeps the fastest; [`Options::measured`](crate::Options::measured)
//! hands such a choice to the decision, which reads it as one more agreed
//! fact (no probe, no trial of routes); a wisdom file keeps it for later
//! jobs, keyed by the case and the machine ([`wisdom`]), and
//! [`Options::wisdom`](crate::Options::wisdom) or `NDCYCLIC_WISDOM` reads
//! it back. A wisdom file is never a reason to fail: missing, unreadable,
//! corrupt or measured elsewhere, it leaves `auto`'s rules to decide, with
//! the same warning on every rank.
//!
//! - `measured.rs`: [`Measured`], a measured choice, and its text;
//! - `wisdom.rs`: the file's text, its entries and keys, merging and
//!   looking up — pure;
//! - `key.rs`: the case and the machine as this job sees them;
//! - `file.rs`: reading (rank 0 reads, every rank learns the outcome) and
//!   writing (merged under a lock, renamed whole);
//! - `measure.rs`: [`tune`] and [`tune_batch`], the measuring;
//! - `ghosts.rs`: [`tune_ghosts`], a ghost update's node-direct reads
//!   against messages, measured and kept;
//! - `grids.rs`: [`grids`], the process grids worth trying for a job —
//!   pure;
//! - `job.rs`: [`choose_grid`], a job's grid chosen by timing its whole
//!   steps on each candidate (and kept in the wisdom file).

pub(crate) mod file;
mod ghosts;
pub mod grids;
mod job;
pub(crate) mod key;
mod measure;
mod measured;
pub mod wisdom;

pub use file::WISDOM_VARIABLE;
pub(crate) use ghosts::recall_ghosts;
pub use ghosts::{tune_ghosts, GhostTried, GhostTuned};
pub use grids::grids;
pub use job::{choose_grid, GridChoice, GridSettings, GridTried, Outcome};
pub use measure::{candidates, tune, tune_batch, Tried, TuneSettings, Tuned};
pub use measured::Measured;
