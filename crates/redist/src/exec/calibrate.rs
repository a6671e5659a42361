//! Whether derived datatypes pay on a communicator: measured once per
//! communicator, not assumed.
//!
//! A side of a message can be described to MPI by a derived datatype (MPI
//! walks the runs) or packed by us into a contiguous buffer. Which is faster
//! depends on the MPI library, how it was built and the path between the
//! ranks: measured here (`docs/TUNING.md`), MPICH 4.0.2 (built without
//! yaksa) sends 256 KiB in 512-byte runs typed 1.8–2.2× slower than we pack,
//! unpack and send it contiguous, on one node and across nodes over TCP; on
//! one node Open MPI 4.1 was 0.9× for half a megabyte and 2.1× for 8 MB.
//!
//! So the first redistribution on a communicator that would describe
//! messages by datatypes under [`MinRun::Auto`](crate::MinRun::Auto) times
//! both on a probe message, every rank sending to the rank half the
//! communicator away (on a cluster whose launcher places ranks node by node,
//! across nodes), and the ranks agree on the slowest ratio: datatypes are
//! used only where no rank found them slower than packing by more than
//! [`TYPED_MAX_RATIO`](crate::tuning::TYPED_MAX_RATIO). The verdict is kept
//! with the communicator ([`ProcGrid::memo`]); a few milliseconds, once.

use crate::tuning::{TYPED_DECISIVE_RATIO, TYPED_MAX_RATIO};
use mpi::datatype::{MutView, UserDatatype, View};
use mpi::point_to_point as p2p;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::Equivalence;
use procgrid::ProcGrid;
use std::time::Instant;

/// Runs in the probe message.
const PROBE_RUNS: usize = 512;
/// Elements (`f64`) per run of the probe: 512 bytes, with a gap as long.
const PROBE_RUN: usize = 64;
/// Timed exchanges of each kind (after one that warms up); the fastest counts.
const PROBE_REPS: usize = 3;

/// The verdict kept with a communicator.
#[derive(Clone, Copy, Debug, PartialEq)]
struct DatatypesPay(bool);

/// Whether messages on `grid`'s communicator are worth describing to MPI by
/// derived datatypes rather than packing them (what
/// [`MinRun::Auto`](crate::MinRun::Auto) decides by): measured on the first
/// call for the communicator — by this function or by the first
/// redistribution with messages on it — then kept, the same on every rank.
///
/// The first call is collective over the communicator: every rank makes it
/// at the same point; later calls cost nothing.
///
/// ```
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let grid = procgrid::ProcGrid::balanced(&world, 1).unwrap();
/// let verdict = redist::exec::datatypes_pay(&grid);
/// assert_eq!(redist::exec::datatypes_pay(&grid), verdict); // kept
/// ```
pub fn datatypes_pay(grid: &ProcGrid) -> bool {
    grid.memo(|comm| DatatypesPay(measure(comm))).0
}

/// The verdict [`datatypes_pay`] found on `grid`'s communicator, if it
/// was measured already. Local.
pub(super) fn known(grid: &ProcGrid) -> Option<bool> {
    grid.memoized::<DatatypesPay>().map(|v| v.0)
}

/// Times the probe typed and packed between each rank and the rank half the
/// communicator away; whether the slowest ratio over the ranks is within
/// [`TYPED_MAX_RATIO`]. Where the first timed exchange's slowest ratio is
/// past [`TYPED_DECISIVE_RATIO`] already, that is the verdict.
/// Collective.
fn measure(comm: &SimpleCommunicator) -> bool {
    let n = comm.size();
    if n < 2 {
        return true;
    }
    let me = comm.rank();
    let shift = (n / 2).max(1);
    let to = comm.process_at_rank((me + shift) % n);
    let from = comm.process_at_rank((me - shift + n) % n);
    let len = PROBE_RUNS * PROBE_RUN;
    let source: Vec<f64> = (0..2 * len).map(|i| i as f64).collect();
    let mut target = vec![0.0f64; 2 * len];
    let mut packed = vec![0.0f64; len];
    let mut received = vec![0.0f64; len];
    let count = |x: usize| mpi::Count::try_from(x).unwrap_or(mpi::Count::MAX);
    let runs = UserDatatype::vector(
        count(PROBE_RUNS),
        count(PROBE_RUN),
        count(2 * PROBE_RUN),
        &f64::equivalent_datatype(),
    );
    let (mut typed, mut by_packing) = (f64::INFINITY, f64::INFINITY);
    for rep in 0..=PROBE_REPS {
        let start = Instant::now();
        // SAFETY: one instance of `runs` spans 2 * len - PROBE_RUN elements,
        // inside both buffers of 2 * len.
        let (send, mut recv) = unsafe {
            (
                View::with_count_and_datatype(&source[..], 1, &runs),
                MutView::with_count_and_datatype(&mut target[..], 1, &runs),
            )
        };
        p2p::send_receive_into(&send, &to, &mut recv, &from);
        let t = start.elapsed().as_secs_f64();
        let start = Instant::now();
        for (run, out) in source
            .chunks(2 * PROBE_RUN)
            .zip(packed.chunks_mut(PROBE_RUN))
        {
            out.copy_from_slice(&run[..PROBE_RUN]);
        }
        p2p::send_receive_into(&packed[..], &to, &mut received[..], &from);
        for (run, out) in received
            .chunks(PROBE_RUN)
            .zip(target.chunks_mut(2 * PROBE_RUN))
        {
            out[..PROBE_RUN].copy_from_slice(run);
        }
        let p = start.elapsed().as_secs_f64();
        if rep > 0 {
            typed = typed.min(t);
            by_packing = by_packing.min(p);
        }
        if rep == 1 && slowest_over(comm, t / p.max(1e-9)) > TYPED_DECISIVE_RATIO {
            // Far slower typed somewhere already: the other timed
            // exchanges would not change the verdict (every rank learns
            // the same).
            return false;
        }
    }
    slowest_over(comm, typed / by_packing.max(1e-9)) <= TYPED_MAX_RATIO
}

/// The largest of the ranks' `ratio`s. Collective.
fn slowest_over(comm: &SimpleCommunicator, ratio: f64) -> f64 {
    let mut slowest = 0.0f64;
    procgrid::waits::all_reduce_into(
        comm,
        &ratio,
        &mut slowest,
        mpi::collective::SystemOperation::max(),
    );
    slowest
}
