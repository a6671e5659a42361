//! Copy kernels: moving one line of stretches from one local storage to
//! another, shaped by the line.
//!
//! A line is `count` stretches of `len` elements; stretch `i` starts
//! `i·step` elements after the first on each side, and the elements of a
//! stretch lie `stride` apart (1 when the dimension is the fastest in
//! memory). Where both sides are contiguous the whole line is one
//! `copy_from_slice`; long stretches are one copy each; short ones of a
//! fixed length are loops the compiler unrolls and vectorises, with no
//! per-stretch branch or bookkeeping.
//!
//! Copies into a target larger than the cache may *stream*: long stretches
//! are then written with non-temporal stores, which send whole cache lines
//! to memory without first reading them in. An ordinary store of a line
//! not in cache reads it first (a read for ownership), so a copy through
//! ordinary stores moves three bytes over the memory bus per byte copied
//! and a streamed one two (measured: `docs/TUNING.md`). Streamed stores are
//! weakly ordered, so a thread that streamed calls `Out::fence` before
//! anybody else may read what it wrote.

use crate::tuning::STREAM_MIN_STRETCH_BYTES;
use line::{copy_line, stream_line};
use tile::copy_block;

mod line;
#[cfg(test)]
mod tests;
mod tile;

/// One line of stretches, in elements of local storage (offsets already
/// multiplied by the dimension's stride).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineCopy {
    /// Offset of the first element on the reading side.
    pub from: usize,
    /// Distance between successive stretches on the reading side.
    pub from_step: usize,
    /// Distance between successive elements of a stretch on the reading side.
    pub from_stride: usize,
    /// Offset of the first element on the writing side.
    pub to: usize,
    /// Distance between successive stretches on the writing side.
    pub to_step: usize,
    /// Distance between successive elements of a stretch on the writing side.
    pub to_stride: usize,
    /// Elements per stretch.
    pub len: usize,
    /// Stretches.
    pub count: usize,
}

impl LineCopy {
    /// One past the last element read and written (0 for an empty line).
    fn ends(&self) -> (usize, usize) {
        if self.len == 0 || self.count == 0 {
            return (0, 0);
        }
        let end = |start: usize, step: usize, stride: usize| {
            start + (self.count - 1) * step + (self.len - 1) * stride + 1
        };
        (
            end(self.from, self.from_step, self.from_stride),
            end(self.to, self.to_step, self.to_stride),
        )
    }
}

/// Element `e < n` of repetition `k < repeat` moves from `from +
/// k·from_period + index_from(e)·from_stride` to `to + k·to_period +
/// index_to(e)·to_stride`, where an index table gives `index(e)` (and no
/// table means `e` itself): periods of short stretches.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TableCopy<'a> {
    /// Offset of the period on the reading side.
    pub from: usize,
    /// Per-element offsets on the reading side, or contiguous.
    pub from_index: Option<&'a [u32]>,
    /// One past the largest entry of `from_index`.
    pub from_span: usize,
    /// Element distance on the reading side.
    pub from_stride: usize,
    /// Offset of the period on the writing side.
    pub to: usize,
    /// Per-element offsets on the writing side, or contiguous.
    pub to_index: Option<&'a [u32]>,
    /// One past the largest entry of `to_index`.
    pub to_span: usize,
    /// Element distance on the writing side.
    pub to_stride: usize,
    /// Elements per repetition.
    pub n: usize,
    /// Repetitions.
    pub repeat: usize,
    /// Distance between repetitions on the reading side.
    pub from_period: usize,
    /// Distance between repetitions on the writing side.
    pub to_period: usize,
}

/// `rows` copies of a line, row `r` shifted by `r·from_row` elements on the
/// reading side and `r·to_row` on the writing side: two dimensions of a
/// message at once, where the writing side's fastest dimension is the
/// reading side's second (an axis permutation). Copied tile by tile, so
/// that both sides touch each cache line once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TileCopy {
    /// The line of row 0.
    pub line: LineCopy,
    /// Rows.
    pub rows: usize,
    /// Distance between rows on the reading side.
    pub from_row: usize,
    /// Distance between rows on the writing side.
    pub to_row: usize,
}

impl TileCopy {
    /// One past the last element read and written (0 for an empty tile).
    fn ends(&self) -> (usize, usize) {
        let (s, d) = self.line.ends();
        if s == 0 || self.rows == 0 {
            return (0, 0);
        }
        let r = self.rows - 1;
        (s + r * self.from_row, d + r * self.to_row)
    }
}

/// One copy a program asks for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum CopyOp<'a> {
    /// A line of stretches.
    Line(LineCopy),
    /// Periods of short stretches through offset tables.
    Table(TableCopy<'a>),
    /// Rows of a line, tile by tile.
    Tile(TileCopy),
}

/// How a copy stores the elements it moves into its destination: plainly
/// ([`Plain`], the copy kernels' fast paths), or as the target of an update
/// `target := β·target + α·op(source)` ([`crate::update`]), computed in the
/// copy that writes the target, element by element.
pub trait Store<T>: Copy + Send + Sync {
    /// Whether elements are stored as they are (the plain copy kernels).
    const PLAIN: bool;

    /// For `f64` elements, the update as `(α, β)` (β `None` where the target
    /// is not read), so that copies can compute it with vector
    /// instructions; `None` otherwise (and for plain stores).
    fn f64_update(&self) -> Option<(f64, Option<f64>)> {
        None
    }

    /// Stores what `v`, an element read from the source side, makes of the
    /// element at `d`.
    ///
    /// # Safety
    /// `d` is valid for reads and writes, and no other thread accesses it
    /// meanwhile.
    unsafe fn put(&self, d: *mut T, v: T);
}

/// Elements stored as they are.
#[derive(Debug, Clone, Copy)]
pub struct Plain;

impl<T: Copy> Store<T> for Plain {
    const PLAIN: bool = true;

    #[inline(always)]
    unsafe fn put(&self, d: *mut T, v: T) {
        // SAFETY: the caller's contract.
        unsafe { d.write(v) }
    }
}

/// A destination slice shared by rayon tasks that write disjoint elements
/// of it (every target element belongs to exactly one stretch of one
/// message, and every buffer element to one piece of one unit of work).
pub(crate) struct Out<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: tasks write disjoint elements only (see the type's doc).
unsafe impl<T: Send> Sync for Out<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Send for Out<T> {}

impl<T: Copy> Out<T> {
    /// Lends out `s` for writing by several tasks.
    pub fn new(s: &mut [T]) -> Out<T> {
        Out {
            ptr: s.as_mut_ptr(),
            len: s.len(),
        }
    }

    /// Performs `m`, reading `src`; long stretches of lines with
    /// non-temporal stores when `stream.0` is set, tiles when `stream.1`
    /// is (then [`fence`](Self::fence) before the target is read by
    /// anybody else).
    #[inline(always)]
    pub fn apply(&self, src: &[T], m: &CopyOp<'_>, stream: (bool, bool)) {
        match m {
            CopyOp::Line(l) => self.copy_with(src, l, stream.0),
            CopyOp::Table(x) => self.indexed(src, x),
            CopyOp::Tile(t) => self.tiled_with(src, t, Plain, stream.1),
        }
    }

    /// Performs `m` storing through `store`: as [`apply`](Self::apply)
    /// where it stores plainly, else element by element (never streamed).
    ///
    /// # Panics
    /// If the copy reaches outside either side: a bug, as for
    /// [`copy_with`](Self::copy_with).
    #[inline(always)]
    pub fn apply_with<S: Store<T>>(
        &self,
        src: &[T],
        m: &CopyOp<'_>,
        stream: (bool, bool),
        store: S,
    ) {
        if S::PLAIN {
            return self.apply(src, m, stream);
        }
        match m {
            CopyOp::Line(l) => {
                if l.ends().0 == 0 {
                    return;
                }
                self.check(src, l.ends(), m);
                // SAFETY: every element lies below the ends, checked;
                // writers of one `Out` touch disjoint elements.
                unsafe {
                    copy_block(
                        src.as_ptr().add(l.from),
                        self.ptr.add(l.to),
                        (l.count, l.len),
                        (l.from_step, l.from_stride),
                        (l.to_step, l.to_stride),
                        store,
                        false,
                    );
                }
            }
            CopyOp::Tile(t) => self.tiled_with(src, t, store, false),
            CopyOp::Table(x) => {
                let mut all = |f: usize, t: usize| {
                    // SAFETY: `indexed_each` hands out offsets it checked.
                    unsafe { store.put(self.ptr.add(t), *src.as_ptr().add(f)) }
                };
                self.indexed_each(src, x, &mut all);
            }
        }
    }

    /// Panics unless `ends` (as [`LineCopy::ends`] gives them) lie inside
    /// `src` and this destination.
    fn check(&self, src: &[T], ends: (usize, usize), m: &CopyOp<'_>) {
        let (src_end, dst_end) = ends;
        assert!(
            src_end <= src.len() && dst_end <= self.len,
            "copy {m:?} outside {} source and {} target elements",
            src.len(),
            self.len
        );
    }

    /// Orders this thread's streamed stores before everything it does
    /// next (a no-op unless `stream`): non-temporal stores are weakly
    /// ordered, even against the release of a lock.
    #[inline]
    pub fn fence(stream: bool) {
        #[cfg(target_arch = "x86_64")]
        if stream {
            // SAFETY: SSE2 is part of x86_64.
            unsafe { std::arch::x86_64::_mm_sfence() };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = stream;
    }

    /// Copies the period `x` from `src` into this destination.
    ///
    /// # Panics
    /// If the period reaches outside either side or its tables are shorter
    /// than `n`: a bug, as for [`copy_with`](Self::copy_with).
    pub fn indexed(&self, src: &[T], x: &TableCopy<'_>) {
        if !self.check_table(src, x) {
            return;
        }
        let (fs, ts) = (x.from_stride, x.to_stride);
        for k in 0..x.repeat {
            // SAFETY: (all the loops below) every index entry is below its
            // span, so every element read and written lies inside the two
            // sides (`check_table`); writers of one `Out` touch disjoint
            // elements (the type's contract).
            unsafe {
                let s = src.as_ptr().add(x.from + k * x.from_period);
                let d = self.ptr.add(x.to + k * x.to_period);
                match (x.from_index, x.to_index) {
                    (Some(a), None) if ts == 1 => {
                        for (e, &i) in a[..x.n].iter().enumerate() {
                            *d.add(e) = *s.add(i as usize * fs);
                        }
                    }
                    (None, Some(b)) if fs == 1 => {
                        for (e, &j) in b[..x.n].iter().enumerate() {
                            *d.add(j as usize * ts) = *s.add(e);
                        }
                    }
                    (Some(a), Some(b)) if fs == 1 && ts == 1 => {
                        for (&i, &j) in a[..x.n].iter().zip(&b[..x.n]) {
                            *d.add(j as usize) = *s.add(i as usize);
                        }
                    }
                    (a, b) => {
                        for e in 0..x.n {
                            let i = a.map_or(e, |a| a[e] as usize);
                            let j = b.map_or(e, |b| b[e] as usize);
                            *d.add(j * ts) = *s.add(i * fs);
                        }
                    }
                }
            }
        }
    }

    /// Whether the period `x` copies anything; panics (a bug, as for
    /// [`copy_with`](Self::copy_with)) where it reaches outside either
    /// side or its tables are shorter than its period.
    fn check_table(&self, src: &[T], x: &TableCopy<'_>) -> bool {
        if x.n == 0 || x.repeat == 0 {
            return false;
        }
        let end =
            |start: usize, index: Option<&[u32]>, span: usize, stride: usize, period: usize| {
                let last = match index {
                    Some(t) => {
                        assert!(t.len() >= x.n, "an index table shorter than its period");
                        span
                    }
                    None => x.n,
                };
                start + (x.repeat - 1) * period + (last - 1) * stride + 1
            };
        let src_end = end(
            x.from,
            x.from_index,
            x.from_span,
            x.from_stride,
            x.from_period,
        );
        let dst_end = end(x.to, x.to_index, x.to_span, x.to_stride, x.to_period);
        assert!(
            src_end <= src.len() && dst_end <= self.len,
            "indexed copy {x:?} outside {} source and {} target elements",
            src.len(),
            self.len
        );
        true
    }

    /// Calls `f(source offset, destination offset)` for every element of
    /// the period `x`, after the checks [`indexed`](Self::indexed) makes.
    fn indexed_each(&self, src: &[T], x: &TableCopy<'_>, f: &mut impl FnMut(usize, usize)) {
        if !self.check_table(src, x) {
            return;
        }
        for k in 0..x.repeat {
            let (s, d) = (x.from + k * x.from_period, x.to + k * x.to_period);
            for e in 0..x.n {
                let i = x.from_index.map_or(e, |a| a[e] as usize);
                let j = x.to_index.map_or(e, |b| b[e] as usize);
                f(s + i * x.from_stride, d + j * x.to_stride);
            }
        }
    }

    /// Copies the tile `t` from `src` into this destination.
    ///
    /// # Panics
    /// If the tile reaches outside either side: a bug, as for
    /// [`copy_with`](Self::copy_with).
    #[cfg(test)]
    pub fn tiled(&self, src: &[T], t: &TileCopy) {
        self.tiled_with(src, t, Plain, false);
    }

    /// [`tiled`](Self::tiled), storing through `store`, with non-temporal
    /// stores where `stream` is set and the tile allows.
    fn tiled_with<S: Store<T>>(&self, src: &[T], t: &TileCopy, store: S, stream: bool) {
        let (src_end, dst_end) = t.ends();
        if src_end == 0 {
            return;
        }
        assert!(
            src_end <= src.len() && dst_end <= self.len,
            "tile {t:?} outside {} source and {} target elements",
            src.len(),
            self.len
        );
        let m = &t.line;
        for k in 0..m.count {
            // SAFETY: every element of the tile lies below `src_end` and
            // `dst_end`, checked above; writers of one `Out` touch disjoint
            // elements (the type's contract).
            unsafe {
                copy_block(
                    src.as_ptr().add(m.from + k * m.from_step),
                    self.ptr.add(m.to + k * m.to_step),
                    (t.rows, m.len),
                    (t.from_row, m.from_stride),
                    (t.to_row, m.to_stride),
                    store,
                    stream,
                );
            }
        }
    }

    /// Copies the line `m` from `src` into this destination with ordinary
    /// stores, as [`copy_with`](Self::copy_with).
    #[cfg(test)]
    pub fn copy(&self, src: &[T], m: &LineCopy) {
        self.copy_with(src, m, false);
    }

    /// Copies the line `m` from `src` into this destination, streaming
    /// long stretches when `stream` is set.
    ///
    /// # Panics
    /// If the line reaches outside either side: copy programs are checked
    /// against the local sizes when they are built, so this is a bug.
    #[inline(always)]
    fn copy_with(&self, src: &[T], m: &LineCopy, stream: bool) {
        let (src_end, dst_end) = m.ends();
        if src_end == 0 {
            return;
        }
        assert!(
            src_end <= src.len() && dst_end <= self.len,
            "copy line {m:?} outside {} source and {} target elements",
            src.len(),
            self.len
        );
        // SAFETY: every element read lies below `src_end` and every element
        // written below `dst_end`, both checked above; writers of one `Out`
        // touch disjoint elements (the type's contract).
        unsafe {
            if stream && m.len * std::mem::size_of::<T>() >= STREAM_MIN_STRETCH_BYTES {
                stream_line(src.as_ptr(), self.ptr, m);
            } else {
                copy_line(src.as_ptr(), self.ptr, m);
            }
        }
    }
}
