//! n-dimensional block-cyclic layouts and the distributed array type.
//!
//! Under construction: the layouts, index maps and `DistArray` arrive with
//! their own issue. The crate exists so the workspace has its final shape.
#![deny(missing_docs)]

pub use procgrid;
