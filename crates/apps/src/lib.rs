//! Applications written against ndcyclic's crates, shared by the examples
//! and tests of the workspace (not published):
//!
//! - [`adi`]: the ADI heat solver of `examples/adi.rs` — the distributed
//!   solver, its serial reference, and a heat-map of its field as RGB pixels.
#![deny(missing_docs)]

pub mod adi;
