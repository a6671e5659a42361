//! The library half of the `redist` tool: what its measurements compare
//! ndcyclic with, as a library, so that the tool and its tests share it.
//!
//! - `scalapack` (feature `scalapack`, linking Debian's
//!   `libscalapack-mpich`): BLACS contexts on ndcyclic's grids, ScaLAPACK
//!   descriptors of 2-D layouts and layouts of descriptors, `pdgemr2d`,
//!   PBLAS's `pdtran` and `pdgeadd` on ndcyclic arrays, and ndcyclic's own
//!   redistribution with `pdtran`'s semantics. `redist run --baseline
//!   pdgemr2d,pdtran,pdgeadd` times them; `tests/mpi_scalapack.rs` checks
//!   them against ndcyclic element by element.
//!
//! - [`halo_baseline`]: the ghost-cell updates a C programmer writes by
//!   hand, which `redist halo --baseline sendrecv,neighbor` measures
//!   ndcyclic's own against — faces exchanged axis by axis with
//!   `MPI_Irecv`/`MPI_Isend` of subarrays, and one `MPI_Neighbor_alltoallw`
//!   over a distributed graph — and the check of a ghosted array after any
//!   update; `tests/mpi_halo_baselines.rs` runs them at 1–5 ranks.
//!
//! The subcommands themselves are the binary's modules (`src/main.rs`).
#![deny(missing_docs)]

pub mod halo_baseline;
#[cfg(feature = "scalapack")]
pub mod scalapack;
