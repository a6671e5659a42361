//! Mixed batches: arrays of different element types, all laid out as one
//! redistribution's source and target, moved in one exchange.
//!
//! A solver's fields are not always of one type: a complex spectrum with a
//! real mask, an `f64` field with an `i32` material map. The plan of a
//! redistribution — its messages, runs and copy programs — counts
//! elements, not bytes, so it serves every element type alike; only the
//! buffers see the bytes. This file holds the batch ([`MixedBatch`]) and
//! what the exchange asks of each of its pairs, its type erased
//! ([`Pair`]); the pairs travel stacked in 8-byte words (`stacked.rs`).

use super::messages::RankMessages;
use crate::error::RedistError;
use dist_array::{DistArray, Element, Layout};
use procgrid::ProcGrid;
use redist_plan::kernel::Plain;
use redist_plan::program::MessageProgram;
use std::fmt;

/// Bytes of one word of a mixed batch's buffers; every share of a message
/// starts at a whole word, so at an address aligned for every element type.
pub(crate) const WORD: usize = std::mem::size_of::<u64>();

/// Pairs of arrays — a source and the target it is redistributed into — of
/// any element types, moved together by
/// [`Redistribution::execute_mixed_batch`](super::Redistribution::execute_mixed_batch).
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
    pub(crate) pairs: Vec<Box<dyn Pair + 'a>>,
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
pub(crate) trait Pair {
    /// The element type's name.
    fn type_name(&self) -> &'static str;
    /// Bytes per element.
    fn size(&self) -> usize;
    /// The source's and the target's layouts and grids.
    fn sides(&self) -> [(&Layout, &ProcGrid); 2];
    /// The source's and the target's ghost widths.
    fn ghost_widths(&self) -> [&[usize]; 2];
    /// Copies the elements this rank keeps.
    fn copy_kept(&mut self, m: &RankMessages);
    /// Packs the source's share of send `t` into `into` (its bytes).
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

    fn ghost_widths(&self) -> [&[usize]; 2] {
        [self.src.ghost_widths(), self.dst.ghost_widths()]
    }

    fn copy_kept(&mut self, m: &RankMessages) {
        m.copy_local(self.src.local_slice(), self.dst.local_slice_mut(), Plain);
    }

    fn pack(&self, t: &MessageProgram, into: &mut [u8]) -> Result<(), RedistError> {
        let slice = bytemuck::try_cast_slice_mut::<u8, U>(into).map_err(misaligned)?;
        t.pack(self.src.local_slice(), t.whole(), slice);
        Ok(())
    }

    fn unpack(&mut self, t: &MessageProgram, from: &[u8]) -> Result<(), RedistError> {
        let slice = bytemuck::try_cast_slice::<u8, U>(from).map_err(misaligned)?;
        t.unpack_with(t.whole(), slice, self.dst.local_slice_mut(), Plain);
        Ok(())
    }
}

/// A share of a buffer that does not hold whole, aligned elements: a bug.
fn misaligned(e: bytemuck::PodCastError) -> RedistError {
    RedistError::Internal(format!("a mixed batch's share of a message: {e}"))
}

/// Words a share of `len` elements of `size` bytes takes.
pub(crate) fn words(len: usize, size: usize) -> usize {
    len.saturating_mul(size).div_ceil(WORD)
}

/// A fingerprint of the batch's length and element types, in order: ranks
/// passing different batches disagree.
pub(crate) fn types_fingerprint(pairs: &[Box<dyn Pair + '_>]) -> u64 {
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
