//! Batches: several arrays with the same layouts moved in one exchange.
//!
//! Solvers move several fields from one layout to another at once (the
//! velocity components of a flow, the right-hand sides of a solve). Moving
//! them one by one pays each message's latency, and each execution's
//! agreement, once per array. A batch agrees once on all K pairs of arrays,
//! and where latency costs, pays it once too: every message between two
//! ranks carries the K arrays' parts one after the other (array `j`'s part
//! of message `m` at `j · len(m)` of its slot).
//!
//! How a batch moves is chosen from figures every rank learns in the one
//! all-reduce that agrees on the arrays, so that all choose alike:
//!
//! - when the exchange copies between ranks of one node straight from the
//!   sender's storage (`async` with node-direct copies) and every rank's
//!   sources are shared, a batch does the same (`asynchronous/batch.rs`):
//!   one note per pair of ranks of a node names all K sources, and only
//!   messages to other nodes, or from senders whose storage cannot be
//!   mapped, travel — one per pair of ranks carrying all K parts, in pieces
//!   of about [`BATCH_GROUP_BYTES`] when they are long;
//! - when some rank moves [`BATCH_ALONE_BYTES`] or more per array, latency
//!   no longer decides: the arrays move one by one through the
//!   redistribution's own exchange, without agreeing again on each;
//! - otherwise through `MPI_Alltoallv`, in groups of arrays whose buffers
//!   hold about [`BATCH_GROUP_BYTES`] (the largest rank's, so that every
//!   rank makes the same number of calls), the part that stays on a rank
//!   copied straight, array by array.

use super::messages::grow;
use super::{agree, mpi_raw, Exchange, Redistribution, EXECUTING};
use crate::tuning::{BATCH_ALONE_BYTES, BATCH_GROUP_BYTES};
use crate::RedistError;
use dist_array::{DistArray, Element};
use mpi::topology::Communicator;
use mpi::Count;
use redist_plan::kernel::Plain;

/// What a redistribution keeps for its batches: the buffers and the counts
/// and displacements of the last batch size, reused while it stays the same.
pub(crate) struct BatchBuffers<T> {
    send: Vec<T>,
    recv: Vec<T>,
    /// The batch size the counts are for (0: none yet).
    k: usize,
    counts: [Vec<Count>; 4],
}

impl<T> Default for BatchBuffers<T> {
    fn default() -> Self {
        BatchBuffers {
            send: Vec::new(),
            recv: Vec::new(),
            k: 0,
            counts: Default::default(),
        }
    }
}

impl<T> BatchBuffers<T> {
    /// Bytes of the counts held (buffers aside).
    pub fn heap_bytes(&self) -> usize {
        self.counts
            .iter()
            .map(|c| c.capacity() * std::mem::size_of::<Count>())
            .sum()
    }
}

impl<T: Element> Redistribution<T> {
    /// Redistributes the arrays `srcs` into `dsts` (the `k`-th source into
    /// the `k`-th target), all laid out as this redistribution's source and
    /// target, agreeing once on every array. Where latency costs (small
    /// parts, or node-direct copies of shared sources), one exchange moves
    /// them all, each message between two ranks carrying every array's
    /// part; where each array's messages are long (from
    /// [`BATCH_ALONE_BYTES`] per array),
    /// the arrays go one by one through this redistribution's exchange.
    /// Collective: every rank passes the same number of arrays.
    ///
    /// ```
    /// use dist_array::{DistArray, Layout};
    /// use procgrid::ProcGrid;
    /// use redist::{Options, Redistribution};
    /// use mpi::topology::Communicator;
    ///
    /// let universe = procgrid::init().unwrap();
    /// let world = universe.world();
    /// let p = world.size() as usize;
    /// let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
    /// let from = Layout::parse(&[8, 6], &format!("block,*@{p}x1")).unwrap();
    /// let to = Layout::parse(&[8, 6], &format!("cyclic(2),cyclic(3)@{p}x1")).unwrap();
    /// let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, Options::default()).unwrap();
    /// let u = DistArray::from_fn(&grid, from.clone(), |g| g[0] as f64).unwrap();
    /// let v = DistArray::from_fn(&grid, from.clone(), |g| g[1] as f64).unwrap();
    /// let mut bu = DistArray::zeros(&grid, to.clone()).unwrap();
    /// let mut bv = DistArray::zeros(&grid, to.clone()).unwrap();
    /// r.execute_batch_into(&[&u, &v], &mut [&mut bu, &mut bv]).unwrap();
    /// assert_eq!(bu.gather(0).unwrap(), u.gather(0).unwrap());
    /// assert_eq!(bv.gather(0).unwrap(), v.gather(0).unwrap());
    /// ```
    ///
    /// # Errors
    ///
    /// As [`execute_into`](Self::execute_into) for each pair of arrays, and
    /// [`RedistError::InvalidArgument`] when `srcs` and `dsts` differ in
    /// length, or a rank would exchange more than 2^31-1 elements in one
    /// `MPI_Alltoallv`; [`RedistError::Disagreement`] when ranks pass
    /// different numbers of arrays.
    pub fn execute_batch_into(
        &mut self,
        srcs: &[&DistArray<T>],
        dsts: &mut [&mut DistArray<T>],
    ) -> Result<(), RedistError> {
        self.executing();
        let k = srcs.len();
        // With the verdict, the largest bytes a rank moves per array and
        // whether some rank's source is private: the ranks choose the same
        // way of moving the batch from them.
        let verdict = self
            .check_batch(srcs, dsts)
            .map(|()| ((), self.batch_figures(srcs)));
        let comm = self.source_grid.communicator();
        let ((), [per_array, private]) = agree::agree_with(comm, verdict, k as u64 + 1, EXECUTING)?;
        if k == 0 {
            return Ok(());
        }
        if !self.figures.messages {
            for (src, dst) in srcs.iter().zip(dsts.iter_mut()) {
                let out = dst.local_slice_mut();
                self.messages.copy_local(src.local_slice(), out, Plain);
            }
            return Ok(());
        }
        let _guard = mpi_raw::AbortOnUnwind::new(comm);
        if let Exchange::Async(x) = &mut self.exchange {
            if x.node_direct() && private == 0 {
                return x.run_batch(&self.messages, comm, srcs, dsts);
            }
        }
        let per_array = usize::try_from(per_array).unwrap_or(usize::MAX).max(1);
        if per_array >= BATCH_ALONE_BYTES && !self.agrees_in_exchange() {
            // Each array's messages are long enough on their own: latency
            // is no longer what costs, and the redistribution's own
            // exchange, pipelined in cache, moves them best, array by array.
            for (src, dst) in srcs.iter().zip(dsts.iter_mut()) {
                self.exchange(src, dst, Plain)?;
            }
            return Ok(());
        }
        // Arrays in groups whose buffers stay about BATCH_GROUP_BYTES: the
        // copies in and out of them then work in cache.
        let group = (BATCH_GROUP_BYTES / per_array).clamp(1, k);
        for (s, d) in srcs.chunks(group).zip(dsts.chunks_mut(group)) {
            self.exchange_group(s, d)?;
        }
        Ok(())
    }

    /// This rank's figures for choosing how a batch moves: the bytes it
    /// sends or receives per array (the larger), and 1 when one of its
    /// sources is private (node-direct copies cannot read it).
    fn batch_figures(&self, srcs: &[&DistArray<T>]) -> [u64; 2] {
        let per_array = self.messages.send_total.max(self.messages.recv_total);
        let bytes = per_array.saturating_mul(std::mem::size_of::<T>());
        let private = srcs.iter().any(|s| s.shared_storage().is_none());
        [u64::try_from(bytes).unwrap_or(u64::MAX), u64::from(private)]
    }

    /// One exchange of the arrays `srcs` into `dsts` (a group of a batch):
    /// every message carries their parts one after the other.
    fn exchange_group(
        &mut self,
        srcs: &[&DistArray<T>],
        dsts: &mut [&mut DistArray<T>],
    ) -> Result<(), RedistError> {
        let k = srcs.len();
        let comm = self.source_grid.communicator();
        let m = &self.messages;
        let b = &mut self.batch;
        if b.k != k {
            b.counts = batch_counts(m, k, usize::try_from(comm.size()).unwrap_or(0))?;
            b.k = k;
        }
        grow(&mut b.send, k * m.send_total);
        grow(&mut b.recv, k * m.recv_total);
        for (j, (src, dst)) in srcs.iter().zip(dsts.iter_mut()).enumerate() {
            let (src, out) = (src.local_slice(), dst.local_slice_mut());
            let packs =
                (m.sends().iter().zip(&m.send_slots)).map(|(t, &(o, n))| (t, k * o + j * n));
            m.copy_local_and_pack((src, out), &mut b.send, packs, Plain);
        }
        let [sc, sd, rc, rd] = &b.counts;
        mpi_raw::alltoallv(comm, &b.send, sc, sd, &mut b.recv, rc, rd, &m.elem)?;
        for (j, dst) in dsts.iter_mut().enumerate() {
            let out = dst.local_slice_mut();
            for (t, &(o, n)) in m.recvs().iter().zip(&m.recv_slots) {
                let at = k * o + j * n;
                t.unpack_with(t.whole(), &b.recv[at..at + n], out, Plain);
            }
        }
        Ok(())
    }

    /// What is wrong with a batch on this rank: lengths, each pair of
    /// arrays, counts too large for one `MPI_Alltoallv`.
    fn check_batch(
        &self,
        srcs: &[&DistArray<T>],
        dsts: &[&mut DistArray<T>],
    ) -> Result<(), RedistError> {
        if srcs.len() != dsts.len() {
            return Err(RedistError::InvalidArgument {
                what: "batch",
                value: format!("{} sources and {} targets", srcs.len(), dsts.len()),
                expected: "one target per source".to_string(),
            });
        }
        for (src, dst) in srcs.iter().zip(dsts) {
            self.check_arrays(src, dst)?;
        }
        let k = srcs.len();
        let m = &self.messages;
        let fits = |n: usize| n.checked_mul(k).is_some_and(|x| x <= i32::MAX as usize);
        if !fits(m.send_total) || !fits(m.recv_total) {
            return Err(RedistError::InvalidArgument {
                what: "batch",
                value: format!("{k} arrays"),
                expected: "fewer arrays: a rank would exchange more than 2^31-1 elements in one \
                           MPI_Alltoallv"
                    .to_string(),
            });
        }
        Ok(())
    }
}

/// Counts and displacements (send counts, send displacements, receive
/// counts, receive displacements) of a batch of `k` arrays over `size`
/// ranks.
fn batch_counts(
    m: &super::messages::RankMessages,
    k: usize,
    size: usize,
) -> Result<[Vec<Count>; 4], RedistError> {
    let mut c = [vec![0; size], vec![0; size], vec![0; size], vec![0; size]];
    let what = "elements one rank exchanges in one MPI_Alltoallv";
    for (t, &(o, n)) in m.sends().iter().zip(&m.send_slots) {
        c[0][t.peer] = mpi_raw::count(k * n, what)?;
        c[1][t.peer] = mpi_raw::count(k * o, what)?;
    }
    for (t, &(o, n)) in m.recvs().iter().zip(&m.recv_slots) {
        c[2][t.peer] = mpi_raw::count(k * n, what)?;
        c[3][t.peer] = mpi_raw::count(k * o, what)?;
    }
    Ok(c)
}
