//! Stacked messages: K arrays with the same layouts moved in one
//! `MPI_Alltoallv`, every message between two ranks carrying the K
//! arrays' shares one after the other — array `j`'s share of message `m`
//! at `j · len(m)` of its slot — and the elements a rank keeps copied
//! straight, array by array.
//!
//! Solvers move several fields from one layout to another at once (the
//! velocity components of a flow, the right-hand sides of a solve). Moving
//! them one by one pays each message's latency once per array; stacked,
//! once. Arrays go in groups whose buffers hold about
//! [`BATCH_GROUP_BYTES`](crate::tuning::BATCH_GROUP_BYTES) (the group size
//! is decided from the largest rank's bytes, so every rank makes the same
//! number of calls: `decide.rs`), so that the copies in and out of the
//! buffers work in cache.
//!
//! Arrays of several element types ([`MixedBatch`](super::MixedBatch))
//! stack in 8-byte words: array `j`'s share of a message starts after
//! those of arrays `0..j`, each rounded up to whole words, so every share
//! starts aligned for its type (`mixed.rs`).

use super::arrays::Arrays;
use super::messages::{grow, RankMessages};
use super::mixed::{words, Pair, WORD};
use crate::error::RedistError;
use crate::tuning::BATCH_GROUP_BYTES;
use dist_array::Element;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::Count;
use mpi_extras::collective::{self, Counts};
use mpi_extras::{count, Datatype};
use redist_plan::kernel::Store;
use redist_plan::program::MessageProgram;

/// The buffers of an exchange's stacked messages, and the counts and
/// displacements of the last batch size, reused while it stays the same.
pub(crate) struct Stacked<T> {
    send: Vec<T>,
    recv: Vec<T>,
    /// The batch size the counts are for (0: none yet).
    k: usize,
    counts: [Vec<Count>; 4],
    /// Word buffers of batches of several element types.
    send_words: Vec<u64>,
    recv_words: Vec<u64>,
}

impl<T> Default for Stacked<T> {
    fn default() -> Self {
        Stacked {
            send: Vec::new(),
            recv: Vec::new(),
            k: 0,
            counts: Default::default(),
            send_words: Vec::new(),
            recv_words: Vec::new(),
        }
    }
}

impl<T> Stacked<T> {
    /// Bytes of the counts held (buffers aside).
    pub fn heap_bytes(&self) -> usize {
        self.counts
            .iter()
            .map(|c| c.capacity() * std::mem::size_of::<Count>())
            .sum()
    }
}

impl<T: Element> Stacked<T> {
    /// Moves `arrays` in groups of `group` arrays, one `MPI_Alltoallv` of
    /// stacked messages per group, storing through `store`. Collective: every rank makes the same
    /// number of calls (the ranks agreed on K and on the group size).
    ///
    /// # Errors
    ///
    /// [`RedistError::InvalidArgument`] where a rank's counts do not fit
    /// one `MPI_Alltoallv`; MPI's errors.
    pub fn run<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        mut arrays: Arrays<'_, '_, T>,
        group: usize,
        store: S,
    ) -> Result<(), RedistError> {
        for g in arrays.groups(group) {
            self.run_group(messages, comm, g, store)?;
        }
        Ok(())
    }

    /// One `MPI_Alltoallv` of the stacked messages of `arrays`.
    fn run_group<S: Store<T>>(
        &mut self,
        m: &RankMessages,
        comm: &SimpleCommunicator,
        mut arrays: Arrays<'_, '_, T>,
        store: S,
    ) -> Result<(), RedistError> {
        let k = arrays.len();
        if self.k != k {
            self.counts = counts(m, k, usize::try_from(comm.size()).unwrap_or(0))?;
            self.k = k;
        }
        grow(&mut self.send, k * m.send_total);
        grow(&mut self.recv, k * m.recv_total);
        for (j, (src, dst)) in arrays.pairs().enumerate() {
            let (src, out) = (src.local_slice(), dst.local_slice_mut());
            let packs =
                (m.sends().iter().zip(&m.send_slots)).map(|(t, &(o, n))| (t, k * o + j * n));
            m.copy_local_and_pack(src, out, &mut self.send, packs, store);
        }
        let counts = Counts::of(&self.counts);
        collective::alltoallv(comm, &self.send, &mut self.recv, counts, &m.elem)?;
        for (j, (_, dst)) in arrays.pairs().enumerate() {
            let out = dst.local_slice_mut();
            for (t, &(o, n)) in m.recvs().iter().zip(&m.recv_slots) {
                let at = k * o + j * n;
                t.unpack_with(t.whole(), &self.recv[at..at + n], out, store);
            }
        }
        Ok(())
    }

    /// Moves a batch of arrays of several element types, in groups whose
    /// largest share on any rank stays about [`BATCH_GROUP_BYTES`] (at
    /// least one array each; `per_array` is the most elements any rank
    /// sends or receives, agreed, so every rank cuts the same groups).
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run); [`RedistError::Internal`] where a share is
    /// not aligned for its type (a bug).
    pub fn run_mixed(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        pairs: &mut [Box<dyn Pair + '_>],
        per_array: usize,
    ) -> Result<(), RedistError> {
        let mut start = 0;
        while start < pairs.len() {
            let mut end = start + 1;
            let mut bytes = per_array.saturating_mul(pairs[start].size());
            while end < pairs.len() {
                let more = per_array.saturating_mul(pairs[end].size());
                if bytes.saturating_add(more) > BATCH_GROUP_BYTES {
                    break;
                }
                bytes += more;
                end += 1;
            }
            self.run_mixed_group(messages, comm, &mut pairs[start..end])?;
            start = end;
        }
        Ok(())
    }

    /// One `MPI_Alltoallv` of words carrying a group of a mixed batch.
    fn run_mixed_group(
        &mut self,
        m: &RankMessages,
        comm: &SimpleCommunicator,
        pairs: &mut [Box<dyn Pair + '_>],
    ) -> Result<(), RedistError> {
        let size = usize::try_from(comm.size()).unwrap_or(0);
        let sizes: Vec<usize> = pairs.iter().map(|p| p.size()).collect();
        let slot = |len: usize| sizes.iter().map(|&s| words(len, s)).sum::<usize>();
        let counts = word_counts(m, &slot, size)?;
        let total = |messages: &[MessageProgram]| messages.iter().map(|t| slot(t.len)).sum();
        grow(&mut self.send_words, total(m.sends()));
        grow(&mut self.recv_words, total(m.recvs()));
        // The word buffers as bytes; every share starts at a whole word.
        let send: &mut [u8] = bytemuck::cast_slice_mut(&mut self.send_words[..]);
        let mut at = 0;
        for t in m.sends() {
            for p in pairs.iter() {
                let n = t.len * p.size();
                p.pack(t, &mut send[at..at + n])?;
                at += words(t.len, p.size()) * WORD;
            }
        }
        for p in pairs.iter_mut() {
            p.copy_kept(m);
        }
        let word = Datatype::element(WORD)?;

        let (send, recv) = (&self.send_words, &mut self.recv_words);
        collective::alltoallv(comm, send, recv, Counts::of(&counts), &word)?;
        let recv: &[u8] = bytemuck::cast_slice(&self.recv_words[..]);
        let mut at = 0;
        for t in m.recvs() {
            for p in pairs.iter_mut() {
                let n = t.len * p.size();
                p.unpack(t, &recv[at..at + n])?;
                at += words(t.len, p.size()) * WORD;
            }
        }
        Ok(())
    }
}

/// Counts and displacements (send counts, send displacements, receive
/// counts, receive displacements) of `k` stacked arrays over `size` ranks.
fn counts(m: &RankMessages, k: usize, size: usize) -> Result<[Vec<Count>; 4], RedistError> {
    let mut c = [vec![0; size], vec![0; size], vec![0; size], vec![0; size]];
    let what = "elements one rank exchanges in one MPI_Alltoallv";
    for (t, &(o, n)) in m.sends().iter().zip(&m.send_slots) {
        c[0][t.peer] = count(k * n, what)?;
        c[1][t.peer] = count(k * o, what)?;
    }
    for (t, &(o, n)) in m.recvs().iter().zip(&m.recv_slots) {
        c[2][t.peer] = count(k * n, what)?;
        c[3][t.peer] = count(k * o, what)?;
    }
    Ok(c)
}

/// Counts and displacements, in words, of a group whose message of `len`
/// elements takes `slot(len)` words, over `size` ranks.
fn word_counts(
    m: &RankMessages,
    slot: &impl Fn(usize) -> usize,
    size: usize,
) -> Result<[Vec<Count>; 4], RedistError> {
    let mut c = [vec![0; size], vec![0; size], vec![0; size], vec![0; size]];
    let what = "words one rank exchanges in one MPI_Alltoallv";
    for (side, messages) in [(0, m.sends()), (2, m.recvs())] {
        let mut at = 0;
        for t in messages {
            let n = slot(t.len);
            c[side][t.peer] = count(n, what)?;
            c[side + 1][t.peer] = count(at, what)?;
            at += n;
        }
    }
    Ok(c)
}
