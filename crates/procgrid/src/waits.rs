//! Waiting without taking the core from the ranks waited for.
//!
//! MPICH waits by spinning. Where a node runs more of the job's ranks than
//! it has cores, a rank spinning in a blocking collective holds a core that
//! a rank it waits for needs, and every collective costs what the
//! scheduler's time slices cost: measured on 2 cores with 32 ranks, one
//! blocking all-reduce of a few words took about 200 ms, the same started
//! as `MPI_Iallreduce` and completed by testing and yielding 17–23 ms.
//!
//! The collectives here start the non-blocking form and, on such a node,
//! test it and yield the core between tests ([`complete`]); elsewhere they
//! wait in MPI as usual (the blocking form, which an MPI library may do
//! better than any loop of tests). Each is collective over `comm`, as its
//! blocking form is.
//!
//! ```
//! use mpi::collective::SystemOperation;
//!
//! let universe = procgrid::init().unwrap();
//! let world = universe.world();
//! procgrid::waits::barrier(&world);
//! let mut sum = 0u64;
//! procgrid::waits::all_reduce_into(&world, &1u64, &mut sum, SystemOperation::sum());
//! assert!(sum >= 1);
//! ```

use mpi::collective::{CommunicatorCollectives, Operation};
use mpi::datatype::{Buffer, BufferMut};
use mpi::request::{Request, Scope};
use mpi::topology::Communicator;

pub use mpi_extras::launcher::oversubscribed;

/// Completes `request`: on an oversubscribed node by testing it and
/// yielding the core between tests, elsewhere by `MPI_Wait`.
pub fn complete<'a, D: ?Sized, S: Scope<'a>>(request: Request<'a, D, S>) {
    if !oversubscribed() {
        request.wait_without_status();
        return;
    }
    let mut request = request;
    loop {
        match request.test() {
            Ok(_) => return,
            Err(pending) => {
                request = pending;
                std::thread::yield_now();
            }
        }
    }
}

/// `MPI_Barrier` over `comm`, waiting as [`complete`] does.
pub fn barrier<C: Communicator>(comm: &C) {
    if oversubscribed() {
        complete(comm.immediate_barrier());
    } else {
        comm.barrier();
    }
}

/// `MPI_Allreduce` of `send` into `recv` over `comm` with `op`, waiting as
/// [`complete`] does.
pub fn all_reduce_into<C, S, R, O>(comm: &C, send: &S, recv: &mut R, op: O)
where
    C: Communicator,
    S: Buffer + ?Sized,
    R: BufferMut + ?Sized,
    O: Operation,
{
    if !oversubscribed() {
        comm.all_reduce_into(send, recv, op);
        return;
    }
    mpi::request::scope(|scope| {
        complete(comm.immediate_all_reduce_into(scope, send, recv, op));
    });
}

/// `MPI_Allgather` of `send` into `recv` over `comm` (`recv` holds one
/// `send` per rank, in rank order), waiting as [`complete`] does.
pub fn all_gather_into<C, S, R>(comm: &C, send: &S, recv: &mut R)
where
    C: Communicator,
    S: Buffer + ?Sized,
    R: BufferMut + ?Sized,
{
    if !oversubscribed() {
        comm.all_gather_into(send, recv);
        return;
    }
    mpi::request::scope(|scope| {
        complete(comm.immediate_all_gather_into(scope, send, recv));
    });
}

/// `MPI_Bcast` of `buf` from rank `root` of `comm` to every rank, waiting
/// as [`complete`] does.
///
/// ```
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let mut word = [7u64];
/// procgrid::waits::broadcast_into(&world, 0, &mut word[..]);
/// assert_eq!(word, [7]);
/// ```
pub fn broadcast_into<C, B>(comm: &C, root: i32, buf: &mut B)
where
    C: Communicator,
    B: BufferMut + ?Sized,
{
    use mpi::collective::Root;
    let root = comm.process_at_rank(root);
    if !oversubscribed() {
        root.broadcast_into(buf);
        return;
    }
    mpi::request::scope(|scope| {
        complete(root.immediate_broadcast_into(scope, buf));
    });
}
