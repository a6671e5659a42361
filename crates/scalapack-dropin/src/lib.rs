//! ScaLAPACK's redistribution routines for C and Fortran programs, run by
//! ndcyclic: `p?gemr2d` (copy a sub-matrix between two block-cyclic
//! distributions), `p?tran`, `p?tranu`, `p?tranc` (transpose) and
//! `p?geadd` (scale and accumulate), with ScaLAPACK's signatures and
//! semantics. Built as `libndcyclic_scalapack.so` (and `.a`): linked before
//! ScaLAPACK, or preloaded with `LD_PRELOAD`, it takes those calls over;
//! every routine is also exported as `ndcyclic_<name>`, so that one
//! program can call both libraries. The C declarations are in
//! `include/ndcyclic_scalapack.h`.
//!
//! How a call runs:
//!
//! 1. the BLACS context gives the communicator of its processes
//!    ([`blacs`], [`context`]); the ranks exchange their descriptors and
//!    grid coordinates in one all-gather, so that processes outside a grid
//!    know its layout, and every rank checks the arguments alike
//!    ([`args`]) — a bad argument to `p?gemr2d` is reported as ScaLAPACK
//!    reports it (`pxerbla`, with the argument's position) and nothing is
//!    written; a PBLAS call (`p?tran*`, `p?geadd`) with a bad argument goes
//!    to ScaLAPACK's own routine, which reports it through `PB_Cabort` as
//!    PBLAS does;
//! 2. the redistribution for those arguments is taken from the plan cache
//!    ([`cache`]), or built (ndcyclic's plan of the window, transposed for
//!    `p?tran`) and kept;
//! 3. the local parts are copied into the plan's arrays (ScaLAPACK's
//!    leading dimension may exceed the local rows, [`local`]), the
//!    redistribution executes, and the target's local part is copied back.
//!
//! ```
//! // Without MPI, the pieces that need none: the plan cache's order.
//! use ndcyclic_scalapack::cache::Lru;
//! let mut lru = Lru::new(2);
//! lru.insert(1, "a");
//! lru.insert(2, "b");
//! assert_eq!(lru.get(&1), Some(&mut "a")); // 1 is now the most recent
//! lru.insert(3, "c"); // 2 goes
//! assert!(lru.get(&2).is_none());
//! ```
#![deny(missing_docs)]

pub mod args;
pub mod blacs;
pub mod cache;
pub mod context;
pub mod error;
mod exports;
pub mod local;
pub mod routines;
mod trace;

pub use error::DropinError;
