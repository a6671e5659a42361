//! Redistribution of block-cyclic arrays between layouts.
//!
//! Under construction: plans, processor remapping, schedules and execution
//! arrive with their own issues. The crate exists so the workspace has its
//! final shape.
#![deny(missing_docs)]

pub use dist_array;
