//! The yardstick: a bare `MPI_Alltoallv` of pre-packed buffers moving the
//! same byte counts as a redistribution — what a hand-written exchange
//! would cost. `redist run --baseline alltoallv` and the benches time it
//! next to the redistribution, in the same run.

use super::redistribution::Redistribution;
use crate::error::RedistError;
use dist_array::Element;
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::Count;
use mpi_extras::collective::{self, Counts};
use mpi_extras::{count, Datatype};
use procgrid::ProcGrid;
use std::marker::PhantomData;

/// A bare `MPI_Alltoallv` with the element counts of a redistribution, the
/// kept elements of each rank included.
///
/// ```
/// use dist_array::{DistArray, Layout};
/// use procgrid::ProcGrid;
/// use redist::{BareAlltoallv, Options, Redistribution};
/// use mpi::topology::Communicator;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let p = world.size() as usize;
/// let grid = ProcGrid::new(&world, &[p]).unwrap();
/// let from = Layout::parse(&[100], &format!("block@{p}")).unwrap();
/// let to = Layout::parse(&[100], &format!("cyclic@{p}")).unwrap();
/// let r = Redistribution::<f64>::new(&grid, &from, &grid, &to, Options::default()).unwrap();
/// let bare = BareAlltoallv::new(&r).unwrap();
/// let send = vec![1.0; bare.send_len()];
/// let mut recv = vec![0.0; bare.recv_len()];
/// bare.run(&send, &mut recv).unwrap();
/// assert!(recv.iter().all(|&x| x == 1.0));
/// ```
pub struct BareAlltoallv<T> {
    grid: ProcGrid,
    scounts: Vec<Count>,
    sdispls: Vec<Count>,
    rcounts: Vec<Count>,
    rdispls: Vec<Count>,
    send_len: usize,
    recv_len: usize,
    elem: Datatype,
    _elements: PhantomData<T>,
}

impl<T: Element> BareAlltoallv<T> {
    /// The exchange `r` would be as one bare `MPI_Alltoallv`. Collective:
    /// every rank gets the same verdict, and an error
    /// ([`RedistError::Limit`]) when some rank's counts exceed MPI's `i32`,
    /// before anything is allocated.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Limit`] when a count, displacement or total of some rank's
    ///   exchange exceeds `i32::MAX` elements: agreed by one all-reduce, so every rank
    ///   returns it (ranks whose own counts fit report the value `2^31`).
    pub fn new(r: &Redistribution<T>) -> Result<BareAlltoallv<T>, RedistError> {
        let comm = r.source_grid.communicator();
        let size = usize::try_from(mpi::topology::Communicator::size(comm)).unwrap_or(0);
        let mut send = vec![0usize; size];
        let mut recv = vec![0usize; size];
        let plan = r.rank_plan();
        for l in plan.sends() {
            send[l.peer] = l.len;
        }
        for l in plan.recvs() {
            recv[l.peer] = l.len;
        }
        send[plan.rank()] = plan.kept();
        recv[plan.rank()] = plan.kept();
        let local = Self::counts(&send).and_then(|s| Ok((s, Self::counts(&recv)?)));
        let mut fits = 0i32;
        let ok = i32::from(local.is_ok());
        procgrid::waits::all_reduce_into(comm, &ok, &mut fits, SystemOperation::min());
        let ((scounts, sdispls, send_len), (rcounts, rdispls, recv_len)) = match local {
            Ok(c) if fits == 1 => c,
            Err(e) => return Err(e),
            Ok(_) => {
                return Err(RedistError::Limit {
                    what: "elements another rank exchanges in one MPI_Alltoallv",
                    value: i32::MAX as u128 + 1,
                    limit: i32::MAX as u128,
                })
            }
        };
        Ok(BareAlltoallv {
            grid: r.source_grid.clone(),
            scounts,
            sdispls,
            rcounts,
            rdispls,
            send_len,
            recv_len,
            elem: Datatype::element(std::mem::size_of::<T>())?,
            _elements: PhantomData,
        })
    }

    /// Counts, displacements and total, all within MPI's `i32`.
    fn counts(c: &[usize]) -> Result<(Vec<Count>, Vec<Count>, usize), RedistError> {
        let what = "elements one rank exchanges in one MPI_Alltoallv";
        let mut counts = Vec::with_capacity(c.len());
        let mut displs = Vec::with_capacity(c.len());
        let mut total = 0usize;
        for &n in c {
            counts.push(count(n, what)?);
            displs.push(count(total, what)?);
            total += n;
        }
        count(total, what)?;
        Ok((counts, displs, total))
    }

    /// Elements of the send buffer [`run`](Self::run) needs.
    pub fn send_len(&self) -> usize {
        self.send_len
    }

    /// Elements of the receive buffer [`run`](Self::run) needs.
    pub fn recv_len(&self) -> usize {
        self.recv_len
    }

    /// One exchange of `send` into `recv` (at least [`send_len`](Self::send_len)
    /// and [`recv_len`](Self::recv_len) elements). Collective.
    ///
    /// # Errors
    ///
    /// - [`RedistError::InvalidArgument`] when `send` is shorter than
    ///   [`send_len`](Self::send_len) or `recv` than [`recv_len`](Self::recv_len).
    ///
    /// Checked before the collective call and without communication: local to
    /// the rank, whose peers then wait in `MPI_Alltoallv`.
    pub fn run(&self, send: &[T], recv: &mut [T]) -> Result<(), RedistError> {
        let (Some(send), Some(recv)) = (send.get(..self.send_len), recv.get_mut(..self.recv_len))
        else {
            return Err(RedistError::InvalidArgument {
                what: "baseline buffers",
                value: format!("{} and {} elements", send.len(), recv.len()),
                expected: format!("at least {} and {} elements", self.send_len, self.recv_len),
            });
        };
        let comm: &SimpleCommunicator = self.grid.communicator();
        let counts = Counts {
            send: &self.scounts,
            send_at: &self.sdispls,
            recv: &self.rcounts,
            recv_at: &self.rdispls,
        };
        Ok(collective::alltoallv(comm, send, recv, counts, &self.elem)?)
    }
}
