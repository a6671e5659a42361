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
//! weakly ordered, so a thread that streamed calls [`Out::fence`] before
//! anybody else may read what it wrote.

use crate::tuning::{STREAM_MIN_STRETCH_BYTES, TILE_BYTES, UPDATE_TILE_BYTES};
use std::ptr;

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
pub(crate) trait Store<T>: Copy + Send + Sync {
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
pub(crate) struct Plain;

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
                        (store, false),
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
    fn check(&self, src: &[T], (src_end, dst_end): (usize, usize), m: &CopyOp<'_>) {
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
        if x.n == 0 || x.repeat == 0 {
            return;
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
        let (fs, ts) = (x.from_stride, x.to_stride);
        for k in 0..x.repeat {
            // SAFETY: (all the loops below) every index entry is below its
            // span, so every element read lies below `src_end` and every
            // element written below `dst_end`, both checked above; writers
            // of one `Out` touch disjoint elements (the type's contract).
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

    /// Calls `f(source offset, destination offset)` for every element of
    /// the period `x`, after the checks [`indexed`](Self::indexed) makes.
    fn indexed_each(&self, src: &[T], x: &TableCopy<'_>, f: &mut impl FnMut(usize, usize)) {
        if x.n == 0 || x.repeat == 0 {
            return;
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
                    (store, stream),
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

/// Copies the line `m`, whose stretches are long, from `src` to `dst`
/// with non-temporal stores where both sides are contiguous.
///
/// # Safety
/// As for [`copy_line`].
unsafe fn stream_line<T: Copy>(src: *const T, dst: *mut T, m: &LineCopy) {
    if m.from_stride != 1 || m.to_stride != 1 {
        // SAFETY: the caller's contract.
        return unsafe { copy_line(src, dst, m) };
    }
    let size = std::mem::size_of::<T>();
    // SAFETY: every stretch lies inside both allocations (the caller's
    // contract), and a contiguous line is one stretch of `len · count`.
    unsafe {
        let (s, d) = (src.add(m.from).cast::<u8>(), dst.add(m.to).cast::<u8>());
        if m.count == 1 || (m.from_step == m.len && m.to_step == m.len) {
            return stream_bytes(s, d, m.len * m.count * size);
        }
        let (fs, ts) = (m.from_step * size, m.to_step * size);
        for i in 0..m.count {
            stream_bytes(s.add(i * fs), d.add(i * ts), m.len * size);
        }
    }
}

/// Copies `n` bytes from `src` to `dst` with non-temporal stores: the
/// bytes before the first 16-byte boundary of `dst` and after the last one
/// with ordinary stores, the rest 64 (then 16) bytes at a time.
///
/// # Safety
/// `src` is readable and `dst` writable for `n` bytes, they do not
/// overlap, and no other thread accesses `dst`'s bytes meanwhile.
#[inline(always)]
unsafe fn stream_bytes(src: *const u8, dst: *mut u8, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let head = dst.align_offset(16).min(n);
        let body = (n - head) & !15;
        // SAFETY: every byte touched lies below `n` on both sides (the
        // caller's contract); the streamed stores are 16-byte aligned on
        // `dst`, as `_mm_stream_si128` requires; SSE2 is part of x86_64.
        unsafe {
            ptr::copy_nonoverlapping(src, dst, head);
            let (s, d) = (src.add(head), dst.add(head));
            let mut i = 0;
            while i + 64 <= body {
                let a = _mm_loadu_si128(s.add(i).cast::<__m128i>());
                let b = _mm_loadu_si128(s.add(i + 16).cast::<__m128i>());
                let c = _mm_loadu_si128(s.add(i + 32).cast::<__m128i>());
                let e = _mm_loadu_si128(s.add(i + 48).cast::<__m128i>());
                _mm_stream_si128(d.add(i).cast::<__m128i>(), a);
                _mm_stream_si128(d.add(i + 16).cast::<__m128i>(), b);
                _mm_stream_si128(d.add(i + 32).cast::<__m128i>(), c);
                _mm_stream_si128(d.add(i + 48).cast::<__m128i>(), e);
                i += 64;
            }
            while i < body {
                let a = _mm_loadu_si128(s.add(i).cast::<__m128i>());
                _mm_stream_si128(d.add(i).cast::<__m128i>(), a);
                i += 16;
            }
            ptr::copy_nonoverlapping(s.add(body), d.add(body), n - head - body);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's contract.
    unsafe {
        ptr::copy_nonoverlapping(src, dst, n)
    }
}

/// Copies the line `m` from `src` to `dst`.
///
/// # Safety
/// Every element the line reads lies inside the allocation behind `src`,
/// every element it writes inside the one behind `dst`, and no other thread
/// accesses the written elements meanwhile.
unsafe fn copy_line<T: Copy>(src: *const T, dst: *mut T, m: &LineCopy) {
    // SAFETY: (the whole body) every offset below addresses an element of
    // the line, which the caller guarantees lies inside its allocation.
    unsafe {
        let (s, d) = (src.add(m.from), dst.add(m.to));
        if m.from_stride != 1 || m.to_stride != 1 {
            // Stretches across the writing side's fastest dimension (or
            // the reading side's): the line as a block of count × len.
            copy_block(
                s,
                d,
                (m.count, m.len),
                (m.from_step, m.from_stride),
                (m.to_step, m.to_stride),
                (Plain, false),
            );
            return;
        }
        if m.count == 1 || (m.from_step == m.len && m.to_step == m.len) {
            ptr::copy_nonoverlapping(s, d, m.len * m.count);
            return;
        }
        match m.len {
            // Single elements at a small constant step: CYCLIC against
            // BLOCK on 2, 3 or 4 processes. Constant steps vectorise.
            1 => match (m.from_step, m.to_step) {
                (2, 1) => stepped::<T, 2, 1>(s, d, m.count),
                (3, 1) => stepped::<T, 3, 1>(s, d, m.count),
                (4, 1) => stepped::<T, 4, 1>(s, d, m.count),
                (1, 2) => stepped::<T, 1, 2>(s, d, m.count),
                (1, 3) => stepped::<T, 1, 3>(s, d, m.count),
                (1, 4) => stepped::<T, 1, 4>(s, d, m.count),
                _ => fixed::<T, 1>(s, d, m),
            },
            2 => fixed::<T, 2>(s, d, m),
            3 => fixed::<T, 3>(s, d, m),
            4 => fixed::<T, 4>(s, d, m),
            5 => fixed::<T, 5>(s, d, m),
            6 => fixed::<T, 6>(s, d, m),
            7 => fixed::<T, 7>(s, d, m),
            8 => fixed::<T, 8>(s, d, m),
            9..=16 => {
                for i in 0..m.count {
                    let (a, b) = (s.add(i * m.from_step), d.add(i * m.to_step));
                    for j in 0..m.len {
                        *b.add(j) = *a.add(j);
                    }
                }
            }
            _ => {
                for i in 0..m.count {
                    ptr::copy_nonoverlapping(s.add(i * m.from_step), d.add(i * m.to_step), m.len);
                }
            }
        }
    }
}

/// Copies a block of `rows × cols` elements, element `(r, c)` read at
/// `r·from.0 + c·from.1` from `src` and stored through `store` at
/// `r·to.0 + c·to.1` from `dst`, in square tiles of [`tile_edge`]
/// elements: within a tile the
/// loop runs along the writing side's shorter stride, and every cache line
/// a tile touches on either side is used whole before the next tile.
///
/// # Safety
/// Every element read lies inside the allocation behind `src`, every
/// element written inside the one behind `dst`, and no other thread
/// accesses the written elements meanwhile.
#[inline(always)]
unsafe fn copy_block<T: Copy, S: Store<T>>(
    src: *const T,
    dst: *mut T,
    (rows, cols): (usize, usize),
    from: (usize, usize),
    to: (usize, usize),
    (store, stream): (S, bool),
) {
    // The inner loop walks the writing side's shorter stride.
    let ((rows, cols), from, to) = if to.0 < to.1 {
        ((cols, rows), (from.1, from.0), (to.1, to.0))
    } else {
        ((rows, cols), from, to)
    };
    if from.1 == 1 && to.1 == 1 {
        // Contiguous rows on both sides: row by row, nothing to tile.
        for r in 0..rows {
            // SAFETY: row r lies inside both allocations (the caller's
            // contract).
            unsafe {
                let (s, d) = (src.add(r * from.0), dst.add(r * to.0));
                if S::PLAIN {
                    ptr::copy_nonoverlapping(s, d, cols);
                } else {
                    for c in 0..cols {
                        store.put(d.add(c), *s.add(c));
                    }
                }
            }
        }
        return;
    }
    // 8-byte elements read along the rows and written along the columns
    // (a transpose): 4 × 4 at a time in vector registers, where the
    // machine has them.
    let update = store.f64_update();
    let vector = (S::PLAIN || update.is_some())
        && std::mem::size_of::<T>() == 8
        && from.0 == 1
        && to.1 == 1
        && avx();
    // Element by element, updates read the target too: a third stream in
    // the same cache, so smaller tiles.
    let edge = if S::PLAIN || vector {
        tile_edge::<T>(TILE_BYTES)
    } else {
        tile_edge::<T>(UPDATE_TILE_BYTES)
    };
    let tile = |r0: usize, c0: usize| {
        let (r1, c1) = ((r0 + edge).min(rows), (c0 + edge).min(cols));
        let (r4, c4) = if vector {
            (r0 + (r1 - r0) / 4 * 4, c0 + (c1 - c0) / 4 * 4)
        } else {
            (r0, c0)
        };
        #[cfg(target_arch = "x86_64")]
        if vector {
            for r in (r0..r4).step_by(4) {
                for c in (c0..c4).step_by(4) {
                    // SAFETY: the 4 × 4 elements lie inside the block (the
                    // caller's contract); `avx()` checked the instructions.
                    unsafe {
                        transpose4_f64(
                            src.add(r + c * from.1).cast(),
                            from.1,
                            dst.add(r * to.0 + c).cast(),
                            (to.0, stream && S::PLAIN, update),
                        );
                    }
                }
            }
        }
        // What the vectors left: the rows below r4 past c4, the rows from r4.
        for r in r0..r1 {
            let first = if r < r4 { c4 } else { c0 };
            // SAFETY: (r, c) lies inside the block, whose elements lie
            // inside both allocations (the caller's contract).
            unsafe {
                let (s, d) = (src.add(r * from.0), dst.add(r * to.0));
                for c in first..c1 {
                    store.put(d.add(c * to.1), *s.add(c * from.1));
                }
            }
        }
    };
    for r0 in (0..rows).step_by(edge) {
        for c0 in (0..cols).step_by(edge) {
            tile(r0, c0);
        }
    }
}

/// Whether this machine has AVX (checked once).
fn avx() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVX.get_or_init(|| std::arch::is_x86_feature_detected!("avx"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Transposes a 4 × 4 block of 8-byte elements: element `(r, c)` is read
/// at `src[r + c·src_stride]` and written at `dst[r·dst_stride + c]`, with
/// non-temporal stores where `stream` is set and the rows written are
/// aligned (the next blocks of a row complete its cache lines) — or, for
/// `f64` elements with `update` `Some((α, β))`, stores α·v, or β·old + α·v
/// where β is given.
///
/// # Safety
/// The 16 elements read and the 16 written lie inside their allocations,
/// no other thread accesses those written, and the machine has AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn transpose4_f64(
    src: *const f64,
    src_stride: usize,
    dst: *mut f64,
    (dst_stride, stream, update): (usize, bool, Option<(f64, Option<f64>)>),
) {
    use std::arch::x86_64::{
        _mm256_add_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_permute2f128_pd, _mm256_set1_pd,
        _mm256_storeu_pd, _mm256_stream_pd, _mm256_unpackhi_pd, _mm256_unpacklo_pd,
    };
    // SAFETY: the caller's contract: the four columns read and the four
    // rows written each hold four elements inside their allocations.
    unsafe {
        // Column c of the block: rows 0..4 of it, contiguous in the source.
        let a0 = _mm256_loadu_pd(src);
        let a1 = _mm256_loadu_pd(src.add(src_stride));
        let a2 = _mm256_loadu_pd(src.add(2 * src_stride));
        let a3 = _mm256_loadu_pd(src.add(3 * src_stride));
        // Pairs of rows: (r0c0 r0c1 r2c0 r2c1), (r1c0 r1c1 r3c0 r3c1), …
        let t0 = _mm256_unpacklo_pd(a0, a1);
        let t1 = _mm256_unpackhi_pd(a0, a1);
        let t2 = _mm256_unpacklo_pd(a2, a3);
        let t3 = _mm256_unpackhi_pd(a2, a3);
        if let Some((alpha, beta)) = update {
            let a = _mm256_set1_pd(alpha);
            let rows = [
                _mm256_permute2f128_pd::<0x20>(t0, t2),
                _mm256_permute2f128_pd::<0x20>(t1, t3),
                _mm256_permute2f128_pd::<0x31>(t0, t2),
                _mm256_permute2f128_pd::<0x31>(t1, t3),
            ];
            for (k, row) in rows.into_iter().enumerate() {
                let d = dst.add(k * dst_stride);
                let v = _mm256_mul_pd(a, row);
                let v = match beta {
                    Some(b) => {
                        _mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(b), _mm256_loadu_pd(d)), v)
                    }
                    None => v,
                };
                _mm256_storeu_pd(d, v);
            }
            return;
        }
        if stream && (dst as usize) % 32 == 0 && dst_stride % 4 == 0 {
            _mm256_stream_pd(dst, _mm256_permute2f128_pd::<0x20>(t0, t2));
            _mm256_stream_pd(dst.add(dst_stride), _mm256_permute2f128_pd::<0x20>(t1, t3));
            _mm256_stream_pd(
                dst.add(2 * dst_stride),
                _mm256_permute2f128_pd::<0x31>(t0, t2),
            );
            _mm256_stream_pd(
                dst.add(3 * dst_stride),
                _mm256_permute2f128_pd::<0x31>(t1, t3),
            );
            return;
        }
        _mm256_storeu_pd(dst, _mm256_permute2f128_pd::<0x20>(t0, t2));
        _mm256_storeu_pd(dst.add(dst_stride), _mm256_permute2f128_pd::<0x20>(t1, t3));
        _mm256_storeu_pd(
            dst.add(2 * dst_stride),
            _mm256_permute2f128_pd::<0x31>(t0, t2),
        );
        _mm256_storeu_pd(
            dst.add(3 * dst_stride),
            _mm256_permute2f128_pd::<0x31>(t1, t3),
        );
    }
}

/// Edge of the square tiles of [`copy_block`], in elements: a row of
/// `bytes` ([`TILE_BYTES`], [`UPDATE_TILE_BYTES`]), so that a tile's lines
/// on both sides stay in the cache while it is copied and are used whole.
fn tile_edge<T>(bytes: usize) -> usize {
    (bytes / std::mem::size_of::<T>().max(1)).clamp(4, 256)
}

/// `count` single elements read `F` apart and written `D` apart, one side
/// contiguous: written over whole chunks of `F` (or `D`) elements, which the
/// compiler turns into vector shuffles.
///
/// # Safety
/// As for [`copy_line`], with lines of one element at steps `F` and `D`.
#[inline(always)]
unsafe fn stepped<T: Copy, const F: usize, const D: usize>(s: *const T, d: *mut T, count: usize) {
    // Bytes gathered from every 2nd or 4th: 16 at a time with vector
    // instructions, the rest below.
    let done = if D == 1 && std::mem::size_of::<T>() == 1 {
        // SAFETY: T is one byte, so the line's bytes are its elements; the
        // gather reads and writes only inside the line (its contract).
        unsafe { gather_bytes::<F>(s.cast::<u8>(), d.cast::<u8>(), count) }
    } else {
        0
    };
    // SAFETY: the first `done` elements are copied; the rest of the line
    // starts `done` elements on, inside both allocations.
    let (s, d, count) = unsafe { (s.add(done * F), d.add(done * D), count - done) };
    if count == 0 {
        return;
    }
    // SAFETY: the line's elements lie inside both allocations (the caller's
    // contract): reading reaches `(count - 1)·F` past `s`, writing
    // `(count - 1)·D` past `d`, and no other thread touches them.
    let (src, dst) = unsafe {
        (
            std::slice::from_raw_parts(s, (count - 1) * F + 1),
            std::slice::from_raw_parts_mut(d, (count - 1) * D + 1),
        )
    };
    // The last element on its own: the whole chunks may stop short of it.
    dst[(count - 1) * D] = src[(count - 1) * F];
    let whole = count - 1;
    if D == 1 {
        for (o, c) in dst[..whole].iter_mut().zip(src.chunks_exact(F)) {
            *o = c[0];
        }
    } else {
        for (c, x) in dst.chunks_exact_mut(D).zip(&src[..whole * F]) {
            c[0] = *x;
        }
    }
}

/// Gathers bytes read `F` apart into contiguous ones, 16 per step, and
/// returns how many it copied (a multiple of 16, fewer than `count`; 0 where
/// `F` is not 2 or 4 or the target has no SSE2). Compilers do not find this
/// on their own: the bytes wanted are the low bytes of the 16-bit (`F` = 2)
/// or 32-bit (`F` = 4) lanes of the source; masking the other bytes off and
/// packing the lanes with saturation keeps exactly them.
///
/// # Safety
/// `src` is readable for `(count - 1)·F + 1` bytes and `dst` writable for
/// `count`, and no other thread writes them meanwhile.
#[inline(always)]
unsafe fn gather_bytes<const F: usize>(src: *const u8, dst: *mut u8, count: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_and_si128, _mm_loadu_si128, _mm_packs_epi32, _mm_packus_epi16,
            _mm_set1_epi16, _mm_set1_epi32, _mm_storeu_si128,
        };
        if F != 2 && F != 4 || count < 17 {
            return 0;
        }
        // Step b reads source bytes up to (16·b + 16)·F − 1: below
        // (count − 1)·F + 1 as long as 16·(b + 1) ≤ count − 1.
        let steps = (count - 1) / 16;
        // SAFETY: SSE2 is part of x86_64; every load lies inside the
        // source bytes (see above), every store inside the first
        // 16·steps < count target bytes.
        unsafe {
            let load = |p: *const u8| _mm_loadu_si128(p.cast::<__m128i>());
            for b in 0..steps {
                let p = src.add(16 * F * b);
                let packed = if F == 2 {
                    let low = _mm_set1_epi16(0x00ff);
                    _mm_packus_epi16(
                        _mm_and_si128(load(p), low),
                        _mm_and_si128(load(p.add(16)), low),
                    )
                } else {
                    let low = _mm_set1_epi32(0xff);
                    let half = |q: *const u8| {
                        _mm_packs_epi32(
                            _mm_and_si128(load(q), low),
                            _mm_and_si128(load(q.add(16)), low),
                        )
                    };
                    _mm_packus_epi16(half(p), half(p.add(32)))
                };
                _mm_storeu_si128(dst.add(16 * b).cast::<__m128i>(), packed);
            }
        }
        16 * steps
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (src, dst, count);
        0
    }
}

/// Stretches of exactly `L` elements: a loop with a constant inner length.
///
/// # Safety
/// As for [`copy_line`], with `m.len == L` and unit element strides.
#[inline(always)]
unsafe fn fixed<T: Copy, const L: usize>(s: *const T, d: *mut T, m: &LineCopy) {
    for i in 0..m.count {
        // SAFETY: stretch `i` of the line, inside both allocations (the
        // caller's contract).
        unsafe {
            let (a, b) = (s.add(i * m.from_step), d.add(i * m.to_step));
            for j in 0..L {
                *b.add(j) = *a.add(j);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (read, write) offset pair of a line, element by element.
    fn naive(m: &LineCopy) -> Vec<(usize, usize)> {
        let mut v = vec![];
        for i in 0..m.count {
            for j in 0..m.len {
                v.push((
                    m.from + i * m.from_step + j * m.from_stride,
                    m.to + i * m.to_step + j * m.to_stride,
                ));
            }
        }
        v
    }

    #[test]
    fn every_shape_of_line_matches_the_naive_copy() {
        let src: Vec<u32> = (0..4000).collect();
        for len in 0..12 {
            for count in [0, 1, 2, 7] {
                for (from_step, to_step) in [
                    (len, len),
                    (len + 3, len),
                    (len, len + 5),
                    (2 * len + 1, 3 * len + 2),
                    (2 * len, len),
                    (3 * len, len),
                    (len, 2 * len),
                    (len, 4 * len),
                ] {
                    for (from_stride, to_stride) in [(1, 1), (1, 3), (2, 1)] {
                        let m = LineCopy {
                            from: 5,
                            from_step: from_step * from_stride,
                            from_stride,
                            to: 2,
                            to_step: to_step * to_stride,
                            to_stride,
                            len,
                            count,
                        };
                        let mut dst = vec![u32::MAX; 4000];
                        Out::new(&mut dst).copy(&src, &m);
                        let mut want = vec![u32::MAX; 4000];
                        for (a, b) in naive(&m) {
                            want[b] = src[a];
                        }
                        assert_eq!(dst, want, "{m:?}");
                    }
                }
            }
        }
    }

    /// Single bytes at steps 2, 3 and 4 (the vector gather and the loop
    /// after it), every count around the 16-byte steps, from a source that
    /// ends at the line's last byte: the copy equals the naive one and
    /// writes nothing else.
    #[test]
    fn gathered_bytes_match_the_naive_copy() {
        for step in [2usize, 3, 4] {
            for count in (0..80).chain([255, 256, 257, 1000]) {
                for from in [0, 1, 7] {
                    let m = LineCopy {
                        from,
                        from_step: step,
                        from_stride: 1,
                        to: 3,
                        to_step: 1,
                        to_stride: 1,
                        len: 1,
                        count,
                    };
                    let span = from + count.saturating_sub(1) * step + 1;
                    #[allow(clippy::cast_possible_truncation, reason = "below 251")]
                    let src: Vec<u8> = (0..span).map(|i| (i % 251) as u8).collect();
                    let mut dst = vec![255u8; count + 10];
                    Out::new(&mut dst).copy(&src, &m);
                    let mut want = vec![255u8; count + 10];
                    for (a, b) in naive(&m) {
                        want[b] = src[a];
                    }
                    assert_eq!(dst, want, "{m:?}");
                }
            }
        }
    }

    /// Streamed lines: stretches around the 16- and 64-byte steps, every
    /// alignment of the target, contiguous and stepped lines, in elements
    /// of 1, 8 and 16 bytes — equal to the naive copy and writing nothing
    /// else.
    #[test]
    fn streamed_lines_match_the_naive_copy() {
        fn each<T: Copy + PartialEq + std::fmt::Debug>(value: impl Fn(usize) -> T, blank: T) {
            let size = std::mem::size_of::<T>();
            let src: Vec<T> = (0..6000).map(&value).collect();
            for bytes in [64usize, 65, 80, 96, 127, 128, 200, 513, 1024] {
                let len = bytes.div_ceil(size);
                for (count, extra_from, extra_to) in
                    [(1, 0, 0), (2, 0, 0), (3, 5, 0), (4, 0, 7), (3, 2, 9)]
                {
                    for to in 0..17 {
                        let m = LineCopy {
                            from: 3,
                            from_step: len + extra_from,
                            from_stride: 1,
                            to,
                            to_step: len + extra_to,
                            to_stride: 1,
                            len,
                            count,
                        };
                        let mut dst = vec![blank; 6000];
                        let out = Out::new(&mut dst);
                        out.copy_with(&src, &m, true);
                        Out::<T>::fence(true);
                        let mut want = vec![blank; 6000];
                        for (a, b) in naive(&m) {
                            want[b] = src[a];
                        }
                        assert_eq!(dst, want, "{m:?}, {size}-byte elements");
                    }
                }
            }
        }
        #[allow(clippy::cast_possible_truncation, reason = "below 251")]
        each(|i| (i % 251) as u8, 255u8);
        #[allow(clippy::cast_precision_loss, reason = "small integers")]
        each(|i| i as f64, -1.0f64);
        each(|i| (i as u64, !(i as u64)), (0u64, 0u64));
    }

    #[test]
    #[allow(clippy::cast_possible_truncation, reason = "test values wrap on purpose")]
    fn tiles_match_the_naive_copy() {
        // A 2-D transpose of rows × len elements, in stretches of `count`,
        // for element sizes whose tiles have different edges.
        fn each<T: Copy + PartialEq + std::fmt::Debug + Default>(value: impl Fn(usize) -> T) {
            for (rows, len, count) in [(1, 1, 1), (3, 70, 2), (33, 17, 1), (100, 3, 3), (0, 5, 1)] {
                let src_row = len * count + 3;
                let src: Vec<T> = (0..rows * src_row + 8).map(&value).collect();
                // Target: the transpose, rows contiguous, with a gap per line.
                let to_stride = rows + 2;
                let n = len * count * to_stride + rows + 8;
                let t = TileCopy {
                    line: LineCopy {
                        from: 1,
                        from_step: len,
                        from_stride: 1,
                        to: 2,
                        to_step: len * to_stride,
                        to_stride,
                        len,
                        count,
                    },
                    rows,
                    from_row: src_row,
                    to_row: 1,
                };
                let mut got = vec![T::default(); n];
                Out::new(&mut got).tiled(&src, &t);
                let mut want = vec![T::default(); n];
                for r in 0..rows {
                    for k in 0..count {
                        for j in 0..len {
                            want[2 + r + k * len * to_stride + j * to_stride] =
                                src[1 + r * src_row + k * len + j];
                        }
                    }
                }
                assert_eq!(got, want, "{rows} rows of {count} x {len}");
                // The strided line copy goes through the same blocks.
                let line = LineCopy {
                    count: rows,
                    from_step: src_row,
                    to_step: 1,
                    ..t.line
                };
                let mut got = vec![T::default(); n];
                Out::new(&mut got).copy(&src, &line);
                let mut want = vec![T::default(); n];
                for i in 0..rows {
                    for j in 0..len {
                        want[2 + i + j * to_stride] = src[1 + i * src_row + j];
                    }
                }
                assert_eq!(got, want, "a strided line of {rows} x {len}");
            }
        }
        each(|i| i as u8);
        each(|i| i as u32);
        each(|i| i as u64);
        each(|i| [i as u64, !(i as u64)]);
    }

    #[test]
    fn updating_tiles_match_the_naive_update() {
        use crate::update::{Accumulate, Scale};
        // Transposes of every size around the vector blocks and the tile
        // edges, f64 (vector updates) and f32 (element by element).
        fn each<T: crate::Scalar + Default>(v: impl Fn(usize) -> T, a: T, b: T) {
            for (rows, len) in [(1, 1), (4, 4), (5, 7), (70, 9), (3, 130), (64, 64)] {
                let src_row = len + 1;
                let src: Vec<T> = (0..rows * src_row).map(&v).collect();
                let to_stride = rows + 3;
                let n = len * to_stride + 1;
                let t = TileCopy {
                    line: LineCopy {
                        from: 0,
                        from_step: 0,
                        from_stride: 1,
                        to: 1,
                        to_step: 0,
                        to_stride,
                        len,
                        count: 1,
                    },
                    rows,
                    from_row: src_row,
                    to_row: 1,
                };
                let old: Vec<T> = (0..n).map(|i| v(i + 7)).collect();
                let mut scaled = vec![T::default(); n];
                let mut accumulated = old.clone();
                let m = CopyOp::Tile(t);
                Out::new(&mut scaled).apply_with(
                    &src,
                    &m,
                    (false, false),
                    Scale {
                        alpha: a,
                        conjugate: false,
                    },
                );
                let acc = Accumulate {
                    alpha: a,
                    beta: b,
                    conjugate: false,
                };
                Out::new(&mut accumulated).apply_with(&src, &m, (false, false), acc);
                for r in 0..rows {
                    for j in 0..len {
                        let (d, x) = (1 + r + j * to_stride, src[r * src_row + j]);
                        assert_eq!(scaled[d], a * x, "{rows} x {len}: ({r}, {j})");
                        assert_eq!(accumulated[d], b * old[d] + a * x, "{rows} x {len}");
                    }
                }
                // Elements outside the tile stay as they were.
                assert_eq!(accumulated[0], old[0]);
            }
        }
        each(|i| i as f64 * 0.5, 2.0, -3.0);
        each(|i| i as f32 * 0.25, 3.0, 0.5);
    }

    #[test]
    #[should_panic(expected = "outside")]
    fn a_line_outside_the_storage_is_refused() {
        let src = [1u8; 10];
        let mut dst = [0u8; 10];
        let m = LineCopy {
            from: 0,
            from_step: 4,
            from_stride: 1,
            to: 0,
            to_step: 2,
            to_stride: 1,
            len: 2,
            count: 3,
        };
        Out::new(&mut dst).copy(&src[..9], &m); // reads up to index 9
    }
}
