//! The MPI that rsmpi 0.8 does not wrap, behind safe calls: the only crate
//! of ndcyclic that calls MPI's C interface (`mpi::ffi`; a unit test of the
//! facade keeps it so).
//!
//! Each call checks its arguments against the buffers it is handed and
//! turns MPI's return codes into [`MpiError`]. It knows nothing of any
//! exchange's protocol: an exchange names its own kinds of control message
//! ([`requests::ControlKind`]). What it holds:
//!
//! - [`datatype`]: [`Datatype`], elements of any size moved as bytes, one
//!   side of a message (a `TypeTree` of the planning crate) as one derived
//!   datatype, and a box of an array (`MPI_Type_create_subarray`);
//! - [`buffers`]: a message's send and receive buffers, elements or a
//!   datatype over a slice;
//! - [`collective`]: `MPI_Alltoallv` of any element size, `MPI_Alltoallw`
//!   (one datatype per peer), one step of a schedule (`MPI_Sendrecv`);
//! - [`requests`]: non-blocking sends and receives tied to the lifetime of
//!   their buffers, pieces of messages, small control messages, and a
//!   `wait_any` that is linear over the list and never panics;
//! - [`persistent`]: persistent sends and receives over buffers the set
//!   owns, set up once and started every step;
//! - [`neighbors`]: exchanges between neighbours, each message a derived
//!   datatype over one buffer: distributed graphs with explicit adjacency
//!   (`MPI_Dist_graph_create_adjacent`), `MPI_Neighbor_alltoallw` over
//!   them, and the same messages point to point (`MPI_Irecv`/`MPI_Isend`,
//!   then all waited for);
//! - [`file`]: MPI-IO (rsmpi wraps none of it), boxes of an array through
//!   file views and `MPI_Type_create_darray`;
//! - [`communicator`]: error handlers, comparing and taking over raw
//!   handles, Rust values kept in a communicator's attributes,
//!   `MPI_Dims_create`;
//! - [`process`]: the world rank, `MPI_Finalized`, work at `MPI_Finalize`,
//!   aborting the job on a panic;
//! - [`library`]: which MPI library the calls go to (its version text and
//!   file), to check that parts built apart call the same one;
//! - [`launcher`]: what the launcher says of this node (ranks on it, whether
//!   they outnumber the cores, which decides whether waits yield);
//! - [`error`]: [`MpiError`], the one error type.
//!
//! ```
//! use mpi::topology::Communicator;
//! use mpi_extras::collective::{alltoallv, Counts};
//! use mpi_extras::Datatype;
//!
//! let universe = mpi::initialize().unwrap();
//! let world = universe.world();
//! let n = world.size() as usize;
//! let me = world.rank() as u64;
//! let send = vec![me; n];
//! let mut recv = vec![0u64; n];
//! let ones = vec![1; n];
//! let at: Vec<i32> = (0..n as i32).collect();
//! let counts = Counts { send: &ones, send_at: &at, recv: &ones, recv_at: &at };
//! let elem = Datatype::element(8).unwrap();
//! alltoallv(&world, &send, &mut recv, counts, &elem).unwrap();
//! assert_eq!(recv, (0..n as u64).collect::<Vec<_>>());
//! ```
#![deny(missing_docs)]
#![warn(clippy::all)]

pub mod buffers;
pub mod collective;
pub mod communicator;
pub mod datatype;
pub mod error;
pub mod file;
pub mod launcher;
pub mod library;
pub mod neighbors;
pub mod persistent;
pub mod process;
pub mod requests;

pub use datatype::Datatype;
pub use error::{count, MpiError};

/// The crate's README, whose example runs as a doc test (one rank).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
