//! Mixed batches: arrays of different element types, all laid out as one
//! redistribution's source and target, moved in one exchange.
//!
//! A solver's fields are not always of one type: a complex spectrum with a
//! real mask, an `f64` field with an `i32` material map. The plan of a
//! redistribution — its messages, runs and copy programs — counts
//! elements, not bytes, so it serves every element type alike; only the
//! buffers see the bytes. A mixed batch packs array `j`'s part of message
//! `m` (`len(m)` elements of `size_j` bytes) into the message's slot after
//! the parts of arrays `0..j`, each part rounded up to whole 8-byte words so
//! that every part starts aligned for its type. One `MPI_Alltoallv` of words
//! moves the parts of a group of arrays — one message per pair of ranks —
//! and each rank copies its local part array by array, straight from source
//! to target storage.
//!
//! Groups hold arrays whose buffers stay about
//! [`BATCH_GROUP_BYTES`], taken from the
//! largest part any rank moves (agreed, so every rank makes the same number
//! of calls); a batch of small arrays is one exchange.

use super::messages::{grow, RankMessages};
use super::{agree, mpi_raw, Redistribution, EXECUTING};
use crate::tuning::BATCH_GROUP_BYTES;
use crate::RedistError;
use dist_array::{DistArray, Element, Layout};
use mpi::topology::Communicator;
use mpi::Count;
use procgrid::ProcGrid;
use redist_plan::kernel::Plain;
use redist_plan::program::MessageProgram;
use std::fmt;

/// Bytes of one word of a mixed batch's buffers; every part of a message
/// starts at a whole word, so at an address aligned for every element type.
const WORD: usize = std::mem::size_of::<u64>();

/// Pairs of arrays — a source and the target it is redistributed into — of
/// any element types, moved together by
/// [`Redistribution::execute_mixed_batch`].
///
/// ```
/// use dist_array::{DistArray, Layout};
/// use dist_array::Complex;
/// use procgrid::ProcGrid;
/// use redist::{MixedBatch, Options, Redistribution};
/// use mpi::topology::Communicator;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let p = world.size() as usize;
/// let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
/// let from = Layout::parse(&[8, 6], &format!("block,*@{p}x1")).unwrap();
/// let to = Layout::parse(&[8, 6], &format!("cyclic(2),cyclic(3)@{p}x1")).unwrap();
/// // The plan counts elements: one redistribution moves arrays of any type.
/// let mut r = Redistribution::<f64>::new(&grid, &from, &grid, &to, Options::default()).unwrap();
/// let u = DistArray::from_fn(&grid, from.clone(), |g| g[0] as f64).unwrap();
/// let mask = DistArray::from_fn(&grid, from.clone(), |g| (g[1] % 2) as i32).unwrap();
/// let w = DistArray::from_fn(&grid, from.clone(), |g| Complex::new(g[0] as f64, 1.0)).unwrap();
/// let mut bu = DistArray::<f64>::zeros(&grid, to.clone()).unwrap();
/// let mut bmask = DistArray::<i32>::zeros(&grid, to.clone()).unwrap();
/// let mut bw = DistArray::<Complex<f64>>::zeros(&grid, to.clone()).unwrap();
/// let mut batch = MixedBatch::new();
/// batch.push(&u, &mut bu).push(&mask, &mut bmask).push(&w, &mut bw);
/// r.execute_mixed_batch(&mut batch).unwrap();
/// drop(batch);
/// assert_eq!(bu.gather(0).unwrap(), u.gather(0).unwrap());
/// assert_eq!(bmask.gather(0).unwrap(), mask.gather(0).unwrap());
/// assert_eq!(bw.gather(0).unwrap(), w.gather(0).unwrap());
/// ```
#[derive(Default)]
pub struct MixedBatch<'a> {
    pairs: Vec<Box<dyn Pair + 'a>>,
}

impl<'a> MixedBatch<'a> {
    /// An empty batch.
    pub fn new() -> MixedBatch<'a> {
        MixedBatch::default()
    }

    /// Adds a pair: `src` is to be redistributed into `dst`. Returns the
    /// batch, so pushes chain.
    pub fn push<U: Element>(
        &mut self,
        src: &'a DistArray<U>,
        dst: &'a mut DistArray<U>,
    ) -> &mut MixedBatch<'a> {
        self.pairs.push(Box::new(Typed { src, dst }));
        self
    }

    /// Number of pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether the batch holds no pair.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The element types' names, in order ("f64,i32,c64").
    pub fn types(&self) -> String {
        let names: Vec<_> = self.pairs.iter().map(|p| p.type_name()).collect();
        names.join(",")
    }
}

impl fmt::Debug for MixedBatch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MixedBatch")
            .field("types", &self.types())
            .finish()
    }
}

/// One pair of a mixed batch, its element type erased: what the exchange
/// asks of it, in bytes.
trait Pair {
    /// The element type's name.
    fn type_name(&self) -> &'static str;
    /// Bytes per element.
    fn size(&self) -> usize;
    /// The source's and the target's layouts and grids.
    fn sides(&self) -> [(&Layout, &ProcGrid); 2];
    /// Copies the part that stays on this rank.
    fn copy_local(&mut self, m: &RankMessages);
    /// Packs the source's part of send `t` into `into` (its bytes).
    fn pack(&self, t: &MessageProgram, into: &mut [u8]) -> Result<(), RedistError>;
    /// Unpacks receive `t` from `from` (its bytes) into the target.
    fn unpack(&mut self, t: &MessageProgram, from: &[u8]) -> Result<(), RedistError>;
}

/// A pair of arrays of element type `U`.
struct Typed<'a, U: Element> {
    src: &'a DistArray<U>,
    dst: &'a mut DistArray<U>,
}

impl<U: Element> Pair for Typed<'_, U> {
    fn type_name(&self) -> &'static str {
        U::NAME
    }

    fn size(&self) -> usize {
        std::mem::size_of::<U>()
    }

    fn sides(&self) -> [(&Layout, &ProcGrid); 2] {
        [
            (self.src.layout(), self.src.grid()),
            (self.dst.layout(), self.dst.grid()),
        ]
    }

    fn copy_local(&mut self, m: &RankMessages) {
        m.copy_local(self.src.local_slice(), self.dst.local_slice_mut(), Plain);
    }

    fn pack(&self, t: &MessageProgram, into: &mut [u8]) -> Result<(), RedistError> {
        let part = bytemuck::try_cast_slice_mut::<u8, U>(into).map_err(misaligned)?;
        t.pack(self.src.local_slice(), t.whole(), part);
        Ok(())
    }

    fn unpack(&mut self, t: &MessageProgram, from: &[u8]) -> Result<(), RedistError> {
        let part = bytemuck::try_cast_slice::<u8, U>(from).map_err(misaligned)?;
        t.unpack_with(t.whole(), part, self.dst.local_slice_mut(), Plain);
        Ok(())
    }
}

/// A part of a buffer that does not hold whole, aligned elements: a bug.
fn misaligned(e: bytemuck::PodCastError) -> RedistError {
    RedistError::Internal(format!("a mixed batch's part of a message: {e}"))
}

/// Words a part of `len` elements of `size` bytes takes.
fn words(len: usize, size: usize) -> usize {
    len.saturating_mul(size).div_ceil(WORD)
}

/// What a mixed batch keeps from one execution to the next: its word
/// buffers.
#[derive(Default)]
pub(crate) struct MixedBuffers {
    send: Vec<u64>,
    recv: Vec<u64>,
}

impl<T: Element> Redistribution<T> {
    /// Redistributes every pair of `batch` — arrays of any element types,
    /// each pair laid out as this redistribution's source and target — in
    /// one exchange: each message between two ranks carries every array's
    /// part (in groups of about
    /// [`BATCH_GROUP_BYTES`] when the
    /// arrays are large), and the part that stays on a rank is copied
    /// straight. The plan counts elements, so the redistribution's own
    /// element type `T` does not restrict the batch's. Collective: every
    /// rank passes the same number of pairs with the same element types in
    /// the same order. The example is at [`MixedBatch`].
    ///
    /// Arrays of one type are better moved by
    /// [`execute_batch_into`](Self::execute_batch_into), which also copies
    /// straight from the sender's storage within a node.
    ///
    /// # Errors
    ///
    /// - [`RedistError::Dist`] (a layout mismatch) when a pair's arrays are
    ///   not laid out as this redistribution's source and target;
    /// - [`RedistError::InvalidArgument`] when one array's part of a rank's
    ///   messages exceeds what one `MPI_Alltoallv` can count;
    /// - [`RedistError::Disagreement`] when ranks pass different numbers of
    ///   pairs or element types; [`RedistError::OtherRank`] when another
    ///   rank's batch was wrong; [`RedistError::Mpi`] as an execution's.
    pub fn execute_mixed_batch(&mut self, batch: &mut MixedBatch<'_>) -> Result<(), RedistError> {
        self.executing();
        let pairs = &mut batch.pairs;
        let verdict = self.check_mixed(pairs).map(|()| {
            (
                (),
                [self.messages.send_total.max(self.messages.recv_total) as u64],
            )
        });
        let comm = self.source_grid.communicator();
        let fingerprint = types_fingerprint(pairs);
        let ((), [per_array]) = agree::agree_with(comm, verdict, fingerprint, EXECUTING)?;
        if pairs.is_empty() {
            return Ok(());
        }
        if !self.figures.messages {
            for p in pairs.iter_mut() {
                p.copy_local(&self.messages);
            }
            return Ok(());
        }
        let _guard = mpi_raw::AbortOnUnwind::new(comm);
        // Groups of consecutive arrays whose largest part on any rank stays
        // about BATCH_GROUP_BYTES (at least one array each); every rank
        // cuts the same groups from the agreed figure and types.
        let per_array = usize::try_from(per_array).unwrap_or(usize::MAX);
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
            self.exchange_mixed(&mut pairs[start..end])?;
            start = end;
        }
        Ok(())
    }

    /// What is wrong with a mixed batch on this rank: each pair's layouts
    /// and grids, parts too large for one `MPI_Alltoallv`.
    fn check_mixed(&self, pairs: &[Box<dyn Pair + '_>]) -> Result<(), RedistError> {
        let m = &self.messages;
        for p in pairs {
            self.check_sides(p.sides())?;
            // Each message's part rounds up to a whole word.
            let most = words(m.send_total.max(m.recv_total), p.size())
                + m.sends().len().max(m.recvs().len());
            if most > i32::MAX as usize {
                return Err(RedistError::InvalidArgument {
                    what: "mixed batch",
                    value: format!(
                        "an array of {} ({} bytes per element)",
                        p.type_name(),
                        p.size()
                    ),
                    expected: "arrays whose part of one rank's messages fits 2^31-1 words of 8 \
                               bytes (one MPI_Alltoallv)"
                        .to_string(),
                });
            }
        }
        Ok(())
    }

    /// One exchange of a group of a mixed batch: every message carries the
    /// group's parts one after the other, each in whole words.
    fn exchange_mixed(&mut self, pairs: &mut [Box<dyn Pair + '_>]) -> Result<(), RedistError> {
        let comm = self.source_grid.communicator();
        let size = usize::try_from(comm.size()).unwrap_or(0);
        let m = &self.messages;
        let sizes: Vec<usize> = pairs.iter().map(|p| p.size()).collect();
        let slot = |len: usize| sizes.iter().map(|&s| words(len, s)).sum::<usize>();
        let counts = mixed_counts(m, &slot, size)?;
        let total = |messages: &[MessageProgram]| messages.iter().map(|t| slot(t.len)).sum();
        let b = &mut self.mixed;
        grow(&mut b.send, total(m.sends()));
        grow(&mut b.recv, total(m.recvs()));
        // The word buffers as bytes; every part starts at a whole word.
        let send: &mut [u8] = bytemuck::cast_slice_mut(&mut b.send[..]);
        let mut at = 0;
        for t in m.sends() {
            for p in pairs.iter() {
                let n = t.len * p.size();
                p.pack(t, &mut send[at..at + n])?;
                at += words(t.len, p.size()) * WORD;
            }
        }
        for p in pairs.iter_mut() {
            p.copy_local(m);
        }
        let word = mpi_raw::Datatype::element(WORD)?;
        let [sc, sd, rc, rd] = &counts;
        mpi_raw::alltoallv(comm, &b.send, sc, sd, &mut b.recv, rc, rd, &word)?;
        let recv: &[u8] = bytemuck::cast_slice(&b.recv[..]);
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

/// Counts and displacements, in words, of a group whose message of `len`
/// elements takes `slot(len)` words, over `size` ranks (send counts, send
/// displacements, receive counts, receive displacements).
fn mixed_counts(
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
            c[side][t.peer] = mpi_raw::count(n, what)?;
            c[side + 1][t.peer] = mpi_raw::count(at, what)?;
            at += n;
        }
    }
    Ok(c)
}

/// A fingerprint of the batch's length and element types, in order: ranks
/// passing different batches disagree.
fn types_fingerprint(pairs: &[Box<dyn Pair + '_>]) -> u64 {
    // FNV-1a over the length and the names, each name closed by a comma.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: u8| {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    };
    pairs.len().to_le_bytes().into_iter().for_each(&mut eat);
    for p in pairs {
        p.type_name().bytes().chain([b',']).for_each(&mut eat);
    }
    h
}
