//! Exchanges between neighbours, each message one derived datatype laid
//! over a buffer at a byte offset: a communicator that knows every rank's
//! neighbours ([`DistGraph`], `MPI_Dist_graph_create_adjacent`), one
//! `MPI_Neighbor_alltoallw` over it ([`NeighborAlltoallw`]), and the same
//! messages sent point to point ([`NeighborMessages`]: non-blocking
//! receives and sends posted together, then waited for together).
//!
//! Both exchanges may read and write one buffer (a ghosted array: faces
//! sent from its interior, ghosts received into its padding), which MPI
//! allows as long as what is read and what is written do not overlap; they
//! check only that every datatype stays inside the buffer.
//!
//! A neighbour may be listed several times (a periodic axis of 1 or 2
//! processes: the same rank on both sides). On a distributed graph, the
//! `k`-th message a rank sends to a neighbour is the `k`-th that neighbour
//! receives from it, in the order of the two lists. Measured here on a
//! ring of 1, 2 and 3 ranks (MPICH 4.0.2, Open MPI 4.1.4):
//! `MPI_Neighbor_alltoallw` and `MPI_Ineighbor_alltoallw` on a distributed
//! graph keep that order in both MPIs; MPICH's `MPI_Neighbor_alltoall` (and
//! `MPI_Ineighbor_alltoall`) on a graph does not, swapping the two messages
//! of a pair listed twice. On a Cartesian communicator with a periodic
//! dimension of 1 or 2 processes, where the standard wants the block sent
//! in the negative direction received as the positive one
//! (pmodels/mpich#2194, mpi-forum/mpi-issues#153), MPICH's `w` forms and
//! Open MPI's non-blocking one deliver the blocks into each other's slots.
//! Hence a graph, and only the `w` form.

use crate::buffers::{addr, addr_mut};
use crate::collective::test_until_complete;
use crate::datatype::Datatype;
use crate::error::{check, count, MpiError};
use crate::launcher::oversubscribed;
use bytemuck::Pod;
use mpi::ffi;
use mpi::raw::{AsRaw, FromRaw};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Tag;
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::os::raw::c_int;

/// The largest tag [`NeighborMessages`] takes: the least `MPI_TAG_UB` the
/// standard guarantees.
pub const MAX_TAG: Tag = 32767;

/// A communicator whose ranks know their neighbours: per rank, the ranks it
/// receives from (sources) and sends to (destinations), in order, each as
/// often as it is listed (`MPI_Dist_graph_create_adjacent`, ranks kept,
/// no weights). Freed on drop while MPI is running.
///
/// ```
/// use mpi::topology::Communicator;
/// use mpi_extras::neighbors::DistGraph;
///
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let (me, n) = (world.rank() as usize, world.size() as usize);
/// // A ring, each rank listing its two neighbours (one and the same on 1 or 2 ranks).
/// let ring = [(me + n - 1) % n, (me + 1) % n];
/// let graph = DistGraph::adjacent(&world, &ring, &ring).unwrap();
/// assert_eq!(graph.sources(), &ring);
/// assert_eq!(graph.communicator().size(), world.size());
/// ```
pub struct DistGraph {
    comm: ManuallyDrop<SimpleCommunicator>,
    sources: Vec<usize>,
    destinations: Vec<usize>,
}

impl DistGraph {
    /// The graph over `comm`'s ranks in which this rank receives from
    /// `sources` and sends to `destinations` (either list may repeat a
    /// rank, or be empty). Collective over `comm`; every rank's lists must
    /// agree with the others' (an edge from a to b listed by both).
    ///
    /// # Errors
    ///
    /// - [`MpiError::InvalidArgument`] when a rank is not below `comm`'s
    ///   size;
    /// - [`MpiError::Limit`] when a list holds more than `i32::MAX` ranks;
    /// - [`MpiError::Mpi`] when MPI returns an error code (only under an
    ///   error handler that returns errors).
    pub fn adjacent(
        comm: &SimpleCommunicator,
        sources: &[usize],
        destinations: &[usize],
    ) -> Result<DistGraph, MpiError> {
        let size = usize::try_from(comm.size()).unwrap_or(0);
        let ranks = |list: &[usize]| -> Result<Vec<c_int>, MpiError> {
            list.iter()
                .map(|&r| {
                    if r < size {
                        count(r, "a neighbour's rank")
                    } else {
                        Err(MpiError::InvalidArgument {
                            what: "neighbour",
                            value: r.to_string(),
                            expected: format!("a rank below the communicator's size {size}"),
                        })
                    }
                })
                .collect()
        };
        let (c_sources, c_destinations) = (ranks(sources)?, ranks(destinations)?);
        let (indegree, outdegree) = (
            count(sources.len(), "sources")?,
            count(destinations.len(), "destinations")?,
        );
        // SAFETY: reads a constant handle MPI defines.
        let mut raw = unsafe { ffi::RSMPI_COMM_NULL };
        // SAFETY: the lists hold `indegree` and `outdegree` ranks of `comm`
        // and outlive the call; MPI_UNWEIGHTED and MPI_INFO_NULL are MPI's
        // constants; `raw` receives the new communicator.
        let code = unsafe {
            ffi::MPI_Dist_graph_create_adjacent(
                comm.as_raw(),
                indegree,
                c_sources.as_ptr(),
                ffi::RSMPI_UNWEIGHTED(),
                outdegree,
                c_destinations.as_ptr(),
                ffi::RSMPI_UNWEIGHTED(),
                ffi::RSMPI_INFO_NULL,
                0,
                &mut raw,
            )
        };
        check(code, "MPI_Dist_graph_create_adjacent")?;
        // SAFETY: a new intra-communicator this function owns alone (not
        // world, self or null: the call succeeded), handed over to rsmpi,
        // which frees it when dropped.
        let comm = unsafe { SimpleCommunicator::from_raw(raw) };
        Ok(DistGraph {
            comm: ManuallyDrop::new(comm),
            sources: sources.to_vec(),
            destinations: destinations.to_vec(),
        })
    }

    /// The ranks this rank receives from, in order (ranks of the
    /// communicator the graph was made over, which keeps them).
    pub fn sources(&self) -> &[usize] {
        &self.sources
    }

    /// The ranks this rank sends to, in order.
    pub fn destinations(&self) -> &[usize] {
        &self.destinations
    }

    /// The graph's communicator (for point-to-point messages and
    /// collectives besides the neighbours' own).
    pub fn communicator(&self) -> &SimpleCommunicator {
        &self.comm
    }
}

impl Drop for DistGraph {
    fn drop(&mut self) {
        if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
            // SAFETY: dropped once, here; MPI is running.
            unsafe { ManuallyDrop::drop(&mut self.comm) }
        }
        // After MPI_Finalize the communicator is gone with the library.
    }
}

/// What one neighbour's edge carries on one side of an exchange: `count`
/// instances of `datatype` laid at byte `at` of the buffer.
pub struct NeighborBlock {
    /// Instances of the datatype (0: nothing travels on this edge).
    pub count: usize,
    /// Byte offset from the buffer's first byte.
    pub at: usize,
    /// What one instance picks out of the buffer.
    pub datatype: Datatype,
}

impl NeighborBlock {
    /// One instance of `datatype` at the buffer's first byte (a subarray
    /// type of the whole buffer, say).
    pub fn one(datatype: Datatype) -> NeighborBlock {
        NeighborBlock {
            count: 1,
            at: 0,
            datatype,
        }
    }

    /// Nothing: an edge on which no byte travels.
    ///
    /// # Errors
    ///
    /// None in practice ([`Datatype::element`] of one byte).
    pub fn nothing() -> Result<NeighborBlock, MpiError> {
        Ok(NeighborBlock {
            count: 0,
            at: 0,
            datatype: Datatype::element(1)?,
        })
    }
}

/// One side's arguments of `MPI_Neighbor_alltoallw`, one entry per edge.
struct Side {
    counts: Vec<c_int>,
    displacements: Vec<ffi::MPI_Aint>,
    raw: Vec<ffi::MPI_Datatype>,
    /// The bytes of the buffer the side reads or writes, as one range.
    reach: Range<usize>,
    /// The datatypes the raw handles name, kept alive.
    _types: Vec<Datatype>,
}

impl Side {
    fn new(blocks: Vec<NeighborBlock>) -> Result<Side, MpiError> {
        let mut side = Side {
            counts: Vec::with_capacity(blocks.len()),
            displacements: Vec::with_capacity(blocks.len()),
            raw: Vec::with_capacity(blocks.len()),
            reach: 0..0,
            _types: Vec::with_capacity(blocks.len()),
        };
        for b in blocks {
            let reach = b.datatype.reach(b.count, b.at)?;
            if !reach.is_empty() {
                side.reach = if side.reach.is_empty() {
                    reach
                } else {
                    side.reach.start.min(reach.start)..side.reach.end.max(reach.end)
                };
            }
            side.counts.push(count(b.count, "instances on one edge")?);
            side.displacements.push(displacement(b.at)?);
            side.raw.push(b.datatype.raw());
            side._types.push(b.datatype);
        }
        Ok(side)
    }

    /// Checks that the side stays inside a buffer of `bytes` bytes.
    fn fits(&self, bytes: usize, what: &str) -> Result<(), MpiError> {
        if self.reach.end > bytes {
            return Err(MpiError::Internal(format!(
                "MPI_Neighbor_alltoallw {what} blocks reach byte {} of a buffer of {bytes} bytes",
                self.reach.end
            )));
        }
        Ok(())
    }
}

/// A byte offset as MPI's `MPI_Aint`.
fn displacement(at: usize) -> Result<ffi::MPI_Aint, MpiError> {
    ffi::MPI_Aint::try_from(at).map_err(|_| MpiError::Limit {
        what: "byte displacement",
        value: at as u128,
        limit: ffi::MPI_Aint::MAX as u128,
    })
}

/// The arguments of an `MPI_Neighbor_alltoallw` over a [`DistGraph`],
/// built once: per source one [`NeighborBlock`] received, per destination
/// one sent, in the graph's order.
///
/// ```
/// use mpi::topology::Communicator;
/// use mpi_extras::neighbors::{DistGraph, NeighborAlltoallw, NeighborBlock};
/// use mpi_extras::Datatype;
///
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let (me, n) = (world.rank() as usize, world.size() as usize);
/// let (left, right) = ((me + n - 1) % n, (me + 1) % n);
/// // Edge 0 fills the left ghost from the left neighbour, edge 1 the right
/// // ghost from the right one; so this rank sends edge 0's block (its last
/// // interior value) to its right neighbour and edge 1's (its first) to
/// // its left one. On 1 or 2 ranks both edges join the same two ranks.
/// let graph = DistGraph::adjacent(&world, &[left, right], &[right, left]).unwrap();
/// let f64s = || Datatype::element(8).unwrap();
/// let at = |i: usize| NeighborBlock { count: 1, at: 8 * i, datatype: f64s() };
/// // [left ghost, interior 0, interior 1, right ghost]
/// let exchange = NeighborAlltoallw::new(&graph, vec![at(2), at(1)], vec![at(0), at(3)]).unwrap();
/// let mut row = [-1.0, 10.0 * me as f64, 10.0 * me as f64 + 1.0, -1.0];
/// exchange.run_within(&graph, &mut row).unwrap();
/// assert_eq!(row[0], 10.0 * left as f64 + 1.0);
/// assert_eq!(row[3], 10.0 * right as f64);
/// // The same blocks between two buffers: the ghosts land in `ghosts`.
/// let sent = [-1.0, 20.0 * me as f64, 20.0 * me as f64 + 1.0, -1.0];
/// let mut ghosts = [0.0; 4];
/// exchange.run(&graph, &sent, &mut ghosts).unwrap();
/// assert_eq!(ghosts, [20.0 * left as f64 + 1.0, 0.0, 0.0, 20.0 * right as f64]);
/// ```
pub struct NeighborAlltoallw {
    send: Side,
    recv: Side,
}

impl NeighborAlltoallw {
    /// The exchange over `graph` that sends `sends[k]` to
    /// `graph.destinations()[k]` and receives `recvs[k]` from
    /// `graph.sources()[k]`.
    ///
    /// # Errors
    ///
    /// - [`MpiError::InvalidArgument`] when the lists do not hold one block
    ///   per edge, or a block reaches before its buffer's first byte;
    /// - [`MpiError::Limit`] when a count exceeds `i32::MAX` or an offset
    ///   `MPI_Aint`.
    pub fn new(
        graph: &DistGraph,
        sends: Vec<NeighborBlock>,
        recvs: Vec<NeighborBlock>,
    ) -> Result<NeighborAlltoallw, MpiError> {
        if sends.len() != graph.destinations.len() || recvs.len() != graph.sources.len() {
            return Err(MpiError::InvalidArgument {
                what: "neighbour blocks",
                value: format!("{} sent, {} received", sends.len(), recvs.len()),
                expected: format!(
                    "one per destination ({}) and one per source ({})",
                    graph.destinations.len(),
                    graph.sources.len()
                ),
            });
        }
        Ok(NeighborAlltoallw {
            send: Side::new(sends)?,
            recv: Side::new(recvs)?,
        })
    }

    /// Runs the exchange from `send` into `recv`. Collective over the
    /// graph's communicator.
    ///
    /// # Errors
    ///
    /// - [`MpiError::Internal`] when the graph is not the one the exchange
    ///   was built for (other degrees) or a block reaches outside its
    ///   buffer (checked before the call, on this rank alone);
    /// - [`MpiError::Mpi`] when MPI returns an error code (only under an
    ///   error handler that returns errors).
    pub fn run<T: Pod>(
        &self,
        graph: &DistGraph,
        send: &[T],
        recv: &mut [T],
    ) -> Result<(), MpiError> {
        self.check(
            graph,
            std::mem::size_of_val(send),
            std::mem::size_of_val(recv),
        )?;
        self.call(graph, addr(send).cast(), addr_mut(recv).cast())
    }

    /// Runs the exchange with both sides laid over `buf`: the sent blocks
    /// read it, the received blocks write it. What is read and what is
    /// written must not overlap (else the bytes read are unspecified).
    /// Collective over the graph's communicator.
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run).
    pub fn run_within<T: Pod>(&self, graph: &DistGraph, buf: &mut [T]) -> Result<(), MpiError> {
        let bytes = std::mem::size_of_val(buf);
        self.check(graph, bytes, bytes)?;
        let at = addr_mut(buf);
        self.call(graph, at.cast_const().cast(), at.cast())
    }

    fn check(&self, graph: &DistGraph, send: usize, recv: usize) -> Result<(), MpiError> {
        if self.send.counts.len() != graph.destinations.len()
            || self.recv.counts.len() != graph.sources.len()
        {
            return Err(MpiError::Internal(
                "MPI_Neighbor_alltoallw run on another graph than it was built for".to_string(),
            ));
        }
        self.send.fits(send, "send")?;
        self.recv.fits(recv, "receive")
    }

    /// The call itself, over buffers whose sizes [`check`](Self::check)
    /// found large enough.
    fn call(
        &self,
        graph: &DistGraph,
        send: *const std::os::raw::c_void,
        recv: *mut std::os::raw::c_void,
    ) -> Result<(), MpiError> {
        let (s, r) = (&self.send, &self.recv);
        if oversubscribed() {
            // More ranks than cores: the non-blocking form, tested and
            // yielding the core between tests.
            // SAFETY: reads a constant handle MPI defines.
            let mut request = unsafe { ffi::RSMPI_REQUEST_NULL };
            // SAFETY: as for the blocking call below; the buffers, arrays and
            // datatypes outlive the request, completed before returning.
            let code = unsafe {
                ffi::MPI_Ineighbor_alltoallw(
                    send,
                    s.counts.as_ptr(),
                    s.displacements.as_ptr(),
                    s.raw.as_ptr(),
                    recv,
                    r.counts.as_ptr(),
                    r.displacements.as_ptr(),
                    r.raw.as_ptr(),
                    graph.comm.as_raw(),
                    &mut request,
                )
            };
            check(code, "MPI_Ineighbor_alltoallw")?;
            return test_until_complete(request, "MPI_Test");
        }
        // SAFETY: one entry per edge of the graph in every array (checked);
        // every block stays inside its buffer (checked); the datatypes are
        // committed and live in `self`.
        let code = unsafe {
            ffi::MPI_Neighbor_alltoallw(
                send,
                s.counts.as_ptr(),
                s.displacements.as_ptr(),
                s.raw.as_ptr(),
                recv,
                r.counts.as_ptr(),
                r.displacements.as_ptr(),
                r.raw.as_ptr(),
                graph.comm.as_raw(),
            )
        };
        check(code, "MPI_Neighbor_alltoallw")
    }
}

/// One message of a [`NeighborMessages`]: one instance of `datatype` laid
/// at byte `at` of the buffer, to or from `peer`, tagged `tag`.
pub struct NeighborMessage {
    /// The rank it goes to or comes from.
    pub peer: usize,
    /// Its tag, `0..=`[`MAX_TAG`].
    pub tag: Tag,
    /// Byte offset from the buffer's first byte.
    pub at: usize,
    /// What it picks out of the buffer.
    pub datatype: Datatype,
}

/// Messages to and from neighbours within one buffer, built once: every
/// receive posted (`MPI_Irecv`), then every send (`MPI_Isend`), then all
/// waited for together. A message to this rank itself is allowed.
///
/// ```
/// use mpi::topology::Communicator;
/// use mpi_extras::neighbors::{NeighborMessage, NeighborMessages};
/// use mpi_extras::Datatype;
///
/// let universe = mpi::initialize().unwrap();
/// let world = universe.world();
/// let (me, n) = (world.rank() as usize, world.size() as usize);
/// let (left, right) = ((me + n - 1) % n, (me + 1) % n);
/// let at = |peer, tag, i: usize| NeighborMessage {
///     peer, tag, at: 8 * i, datatype: Datatype::element(8).unwrap(),
/// };
/// // [left ghost, interior 0, interior 1, right ghost]; tag 0 travels rightwards, 1 leftwards.
/// let mut shift = NeighborMessages::new(
///     vec![at(left, 0, 0), at(right, 1, 3)],
///     vec![at(right, 0, 2), at(left, 1, 1)],
/// )
/// .unwrap();
/// let mut row = [-1.0, 10.0 * me as f64, 10.0 * me as f64 + 1.0, -1.0];
/// shift.run(&world, &mut row).unwrap();
/// assert_eq!(row, [10.0 * left as f64 + 1.0, 10.0 * me as f64, 10.0 * me as f64 + 1.0, 10.0 * right as f64]);
/// ```
pub struct NeighborMessages {
    recvs: Vec<NeighborMessage>,
    sends: Vec<NeighborMessage>,
    /// The bytes of the buffer the messages read or write, as one range.
    reach: Range<usize>,
    requests: Vec<ffi::MPI_Request>,
}

impl NeighborMessages {
    /// The messages: `recvs` into the buffer, `sends` out of it.
    ///
    /// # Errors
    ///
    /// - [`MpiError::InvalidArgument`] when a tag is outside
    ///   `0..=`[`MAX_TAG`];
    /// - [`MpiError::Limit`] when an offset exceeds `MPI_Aint` or a peer
    ///   `i32::MAX`.
    pub fn new(
        recvs: Vec<NeighborMessage>,
        sends: Vec<NeighborMessage>,
    ) -> Result<NeighborMessages, MpiError> {
        let mut reach: Range<usize> = 0..0;
        for m in recvs.iter().chain(&sends) {
            if !(0..=MAX_TAG).contains(&m.tag) {
                return Err(MpiError::InvalidArgument {
                    what: "tag",
                    value: m.tag.to_string(),
                    expected: format!("a tag from 0 to {MAX_TAG}"),
                });
            }
            count(m.peer, "a neighbour's rank")?;
            displacement(m.at)?;
            let r = m.datatype.reach(1, m.at)?;
            if !r.is_empty() {
                reach = if reach.is_empty() {
                    r
                } else {
                    reach.start.min(r.start)..reach.end.max(r.end)
                };
            }
        }
        let requests = Vec::with_capacity(recvs.len() + sends.len());
        Ok(NeighborMessages {
            recvs,
            sends,
            reach,
            requests,
        })
    }

    /// Whether there are no messages at all.
    pub fn is_empty(&self) -> bool {
        self.recvs.is_empty() && self.sends.is_empty()
    }

    /// Posts every receive into `buf`, then every send out of it, and
    /// waits for all of them (testing and yielding the core where ranks
    /// outnumber cores). What is read and what is written must not overlap.
    ///
    /// # Errors
    ///
    /// - [`MpiError::Internal`] when a message reaches outside `buf` or a
    ///   peer is not a rank of `comm` (checked before anything is posted);
    /// - [`MpiError::Mpi`] when MPI returns an error code (only under an
    ///   error handler that returns errors); the receives posted before are
    ///   cancelled and everything posted is waited for first.
    pub fn run<T: Pod>(
        &mut self,
        comm: &SimpleCommunicator,
        buf: &mut [T],
    ) -> Result<(), MpiError> {
        let bytes = std::mem::size_of_val(buf);
        if self.reach.end > bytes {
            return Err(MpiError::Internal(format!(
                "neighbour messages reach byte {} of a buffer of {bytes} bytes",
                self.reach.end
            )));
        }
        let size = usize::try_from(comm.size()).unwrap_or(0);
        if let Some(m) = self
            .recvs
            .iter()
            .chain(&self.sends)
            .find(|m| m.peer >= size)
        {
            return Err(MpiError::Internal(format!(
                "neighbour {} outside a communicator of {size} ranks",
                m.peer
            )));
        }
        let base: *mut u8 = addr_mut(buf).cast();
        self.requests.clear();
        let posted = self.post(comm, base);
        if posted.is_err() {
            self.cancel_receives();
        }
        let waited = self.wait_all();
        posted.and(waited)
    }

    /// Cancels the receives posted so far (after a failed post, whose
    /// peers may never send): each then completes, cancelled or matched.
    fn cancel_receives(&mut self) {
        let receives = self.recvs.len().min(self.requests.len());
        for request in &mut self.requests[..receives] {
            // SAFETY: an active receive request this rank posted.
            unsafe { ffi::MPI_Cancel(request) };
        }
    }

    /// Posts the receives, then the sends, until one fails.
    fn post(&mut self, comm: &SimpleCommunicator, base: *mut u8) -> Result<(), MpiError> {
        for m in &self.recvs {
            let peer = count(m.peer, "a neighbour's rank")?;
            // SAFETY: reads a constant handle MPI defines.
            let mut request = unsafe { ffi::RSMPI_REQUEST_NULL };
            // SAFETY: the message stays inside the buffer (checked in
            // `run`), so its offset is inside it too; the peer is a rank of
            // `comm` and the tag within MPI's bound (checked); the datatype
            // lives in `self` and the buffer is borrowed until every request
            // completes in `run`.
            let code = unsafe {
                ffi::MPI_Irecv(
                    base.add(m.at).cast(),
                    1,
                    m.datatype.raw(),
                    peer,
                    m.tag,
                    comm.as_raw(),
                    &mut request,
                )
            };
            check(code, "MPI_Irecv")?;
            self.requests.push(request);
        }
        for m in &self.sends {
            let peer = count(m.peer, "a neighbour's rank")?;
            // SAFETY: reads a constant handle MPI defines.
            let mut request = unsafe { ffi::RSMPI_REQUEST_NULL };
            // SAFETY: as for the receives.
            let code = unsafe {
                ffi::MPI_Isend(
                    base.add(m.at).cast_const().cast(),
                    1,
                    m.datatype.raw(),
                    peer,
                    m.tag,
                    comm.as_raw(),
                    &mut request,
                )
            };
            check(code, "MPI_Isend")?;
            self.requests.push(request);
        }
        Ok(())
    }

    /// Waits for every posted request.
    fn wait_all(&mut self) -> Result<(), MpiError> {
        let n = count(self.requests.len(), "requests")?;
        if n == 0 {
            return Ok(());
        }
        if oversubscribed() {
            loop {
                let mut flag: c_int = 0;
                // SAFETY: `n` requests this rank posted (completed ones
                // become MPI_REQUEST_NULL, which MPI_Testall skips).
                let code = unsafe {
                    ffi::MPI_Testall(
                        n,
                        self.requests.as_mut_ptr(),
                        &mut flag,
                        ffi::RSMPI_STATUSES_IGNORE,
                    )
                };
                check(code, "MPI_Testall")?;
                if flag != 0 {
                    return Ok(());
                }
                std::thread::yield_now();
            }
        }
        // SAFETY: as above.
        let code =
            unsafe { ffi::MPI_Waitall(n, self.requests.as_mut_ptr(), ffi::RSMPI_STATUSES_IGNORE) };
        check(code, "MPI_Waitall")
    }
}
