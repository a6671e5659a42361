//! Copies of two dimensions at once, where a copy transposes (the
//! target's axes permuted): blocks in square tiles, 8-byte elements 8 × 8
//! in AVX-512 registers or 4 × 4 in AVX ones, where the machine has them
//! (detected at run time) — plain copies of those in
//! bands of a few target columns swept along the whole block, streamed
//! where the copy streams.

use super::Store;
use crate::tuning::{TILE_BYTES, TILE_WRITE_BYTES, UPDATE_TILE_BYTES};
use std::ptr;

/// Copies a block of `rows × cols` elements, element `(r, c)` read at
/// `r·from.0 + c·from.1` from `src` and stored through `store` at
/// `r·to.0 + c·to.1` from `dst`, in square tiles of [`tile_edge`]
/// elements: within a tile the loop runs along the writing side's shorter
/// stride, and every cache line a tile touches on either side is used
/// whole before the next tile. Plain vector copies take tiles of
/// [`TILE_WRITE_BYTES`] of the target's rows, band after band.
///
/// # Safety
/// Every element read lies inside the allocation behind `src`, every
/// element written inside the one behind `dst`, and no other thread
/// accesses the written elements meanwhile.
#[inline(always)]
pub(super) unsafe fn copy_block<T: Copy, S: Store<T>>(
    src: *const T,
    dst: *mut T,
    (rows, cols): (usize, usize),
    from: (usize, usize),
    to: (usize, usize),
    store: S,
    stream: bool,
) {
    // The inner loop walks the writing side's shorter stride.
    let ((rows, cols), from, to) = if to.0 < to.1 {
        ((cols, rows), (from.1, from.0), (to.1, to.0))
    } else {
        ((rows, cols), from, to)
    };
    let block = Block { src, dst, from, to };
    if from.1 == 1 && to.1 == 1 {
        // SAFETY: the caller's contract.
        return unsafe { block.rows(rows, cols, store) };
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
    // Plain vector copies sweep bands of a few target columns (a short
    // stretch of every target row) along the whole block, the source read
    // in long stretches of as many rows; copies that read the target too
    // (updates) keep square tiles, whose target lines stay in cache.
    let band = match vector && update.is_none() {
        true => tile_edge::<T>(TILE_WRITE_BYTES),
        false => edge,
    };
    let stream = stream && S::PLAIN;
    for c0 in (0..cols).step_by(band) {
        for r0 in (0..rows).step_by(edge) {
            let (r1, c1) = ((r0 + edge).min(rows), (c0 + band).min(cols));
            let (r4, c4) = match vector {
                true => (r0 + (r1 - r0) / 4 * 4, c0 + (c1 - c0) / 4 * 4),
                false => (r0, c0),
            };
            // SAFETY: (for both) the tile lies inside the block (the
            // caller's contract); `avx()` checked the vector instructions.
            unsafe {
                if vector {
                    block.vectors(r0..r4, c0..c4, stream, update);
                }
                // What the vectors left: the rows below r4 past c4, the
                // rows from r4.
                block.elements(r0..r1, c0..c1, (r4, c4), store);
            }
        }
    }
}

/// A block's corners and strides, as [`copy_block`] walks it.
#[derive(Clone, Copy)]
struct Block<T> {
    src: *const T,
    dst: *mut T,
    from: (usize, usize),
    to: (usize, usize),
}

impl<T: Copy> Block<T> {
    /// Rows `0..rows` of `cols` elements contiguous on both sides.
    ///
    /// # Safety
    /// As for [`copy_block`].
    #[inline(always)]
    unsafe fn rows<S: Store<T>>(&self, rows: usize, cols: usize, store: S) {
        for r in 0..rows {
            // SAFETY: row r lies inside both allocations (the caller's
            // contract).
            unsafe {
                let (s, d) = (self.src.add(r * self.from.0), self.dst.add(r * self.to.0));
                if S::PLAIN {
                    ptr::copy_nonoverlapping(s, d, cols);
                } else {
                    for c in 0..cols {
                        store.put(d.add(c), *s.add(c));
                    }
                }
            }
        }
    }

    /// The elements of rows `rows` and columns `cols`, but those of rows
    /// below `done.0` and columns below `done.1` (which vectors copied).
    ///
    /// # Safety
    /// As for [`copy_block`].
    #[inline(always)]
    unsafe fn elements<S: Store<T>>(
        &self,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        done: (usize, usize),
        store: S,
    ) {
        let (from, to) = (self.from, self.to);
        for r in rows {
            let first = if r < done.0 { done.1 } else { cols.start };
            // SAFETY: (r, c) lies inside the block, whose elements lie
            // inside both allocations (the caller's contract).
            unsafe {
                let (s, d) = (self.src.add(r * from.0), self.dst.add(r * to.0));
                for c in first..cols.end {
                    store.put(d.add(c * to.1), *s.add(c * from.1));
                }
            }
        }
    }

    /// Rows `rows` and columns `cols` (multiples of 4 long) in vector
    /// registers: 8 × 8 where the machine has AVX-512 (whole rows of 64
    /// bytes, one cache line, written at a time), 4 × 4 over what blocks of
    /// 8 leave; 8-byte elements, read along the rows (`from.0 == 1`),
    /// written along the columns (`to.1 == 1`).
    ///
    /// # Safety
    /// As for [`copy_block`], and the machine has AVX.
    #[inline(always)]
    unsafe fn vectors(
        &self,
        rows: std::ops::Range<usize>,
        cols: std::ops::Range<usize>,
        stream: bool,
        update: Option<(f64, Option<f64>)>,
    ) {
        #[cfg(target_arch = "x86_64")]
        {
            let (r8, c8) = match avx512() {
                true => (
                    rows.start + rows.len() / 8 * 8,
                    cols.start + cols.len() / 8 * 8,
                ),
                false => (rows.start, cols.start),
            };
            let at = |r: usize, c: usize| {
                (
                    self.src.wrapping_add(r + c * self.from.1).cast::<f64>(),
                    self.dst.wrapping_add(r * self.to.0 + c).cast::<f64>(),
                )
            };
            let written = RowsWritten {
                stride: self.to.0,
                stream,
                update,
            };
            for r in (rows.start..r8).step_by(8) {
                for c in (cols.start..c8).step_by(8) {
                    let (s, d) = at(r, c);
                    // SAFETY: the 8 × 8 elements lie inside the block (the
                    // caller's contract), and `avx512()` checked the
                    // machine.
                    unsafe { transpose8_f64(s, self.from.1, d, written) };
                }
            }
            for r in rows.clone().step_by(4) {
                let first = if r < r8 { c8 } else { cols.start };
                for c in (first..cols.end).step_by(4) {
                    let (s, d) = at(r, c);
                    // SAFETY: the 4 × 4 elements lie inside the block (the
                    // caller's contract), and the machine has AVX.
                    unsafe { transpose4_f64(s, self.from.1, d, written) };
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (rows, cols, stream, update);
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

/// Whether this machine has AVX-512 (checked once).
fn avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static AVX512: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *AVX512.get_or_init(|| std::arch::is_x86_feature_detected!("avx512f"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// How a transpose writes its rows of 8-byte elements: `stride` elements
/// apart, with non-temporal stores where `stream`, and, where `update` is
/// `Some((α, β))`, as `α·x` (`β` absent) or `β·target + α·x`.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct RowsWritten {
    stride: usize,
    stream: bool,
    update: Option<(f64, Option<f64>)>,
}

/// [`transpose4_f64`] for an 8 × 8 block, in AVX-512 registers: each row
/// written is 64 bytes, a whole cache line where the target is aligned to
/// it, streamed in one store.
///
/// # Safety
/// The 64 elements read and the 64 written lie inside their allocations,
/// no other thread accesses those written, and the machine has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn transpose8_f64(src: *const f64, src_stride: usize, dst: *mut f64, written: RowsWritten) {
    let RowsWritten {
        stride: dst_stride,
        stream,
        update,
    } = written;
    use std::arch::x86_64::{
        _mm256_stream_pd, _mm512_add_pd, _mm512_castpd512_pd256, _mm512_extractf64x4_pd,
        _mm512_loadu_pd, _mm512_mul_pd, _mm512_set1_pd, _mm512_storeu_pd, _mm512_stream_pd,
    };
    // SAFETY: the caller's contract: the eight columns read and the eight
    // rows written each hold eight elements inside their allocations.
    unsafe {
        let rows = rows8_f64(src, src_stride);
        if let Some((alpha, beta)) = update {
            let a = _mm512_set1_pd(alpha);
            for (k, row) in rows.into_iter().enumerate() {
                let d = dst.add(k * dst_stride);
                let v = _mm512_mul_pd(a, row);
                let v = match beta {
                    Some(b) => {
                        _mm512_add_pd(_mm512_mul_pd(_mm512_set1_pd(b), _mm512_loadu_pd(d)), v)
                    }
                    None => v,
                };
                _mm512_storeu_pd(d, v);
            }
            return;
        }
        let aligned = |bytes: usize| {
            (dst as usize).is_multiple_of(bytes) && dst_stride.is_multiple_of(bytes / 8)
        };
        for (k, row) in rows.into_iter().enumerate() {
            let d = dst.add(k * dst_stride);
            if stream && aligned(64) {
                _mm512_stream_pd(d, row);
            } else if stream && aligned(32) {
                _mm256_stream_pd(d, _mm512_castpd512_pd256(row));
                _mm256_stream_pd(d.add(4), _mm512_extractf64x4_pd::<1>(row));
            } else {
                _mm512_storeu_pd(d, row);
            }
        }
    }
}

/// The rows of the transpose of the 8 × 8 block whose column `j` (rows
/// 0..8) is read contiguously at `src[j·src_stride]`: row `k` holds
/// element `k` of every column, in column order.
///
/// # Safety
/// The 64 elements read lie inside their allocation, and the machine has
/// AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn rows8_f64(src: *const f64, src_stride: usize) -> [std::arch::x86_64::__m512d; 8] {
    use std::arch::x86_64::{
        __m512d, _mm512_loadu_pd, _mm512_shuffle_f64x2, _mm512_unpackhi_pd, _mm512_unpacklo_pd,
    };
    // a[j]: column j of the block, rows 0..8, contiguous in the source.
    // SAFETY: the caller's contract.
    let a: [__m512d; 8] =
        std::array::from_fn(|j| unsafe { _mm512_loadu_pd(src.add(j * src_stride)) });
    // Pairs of columns interleaved within each 128-bit lane: t[2i] holds
    // rows 0, 2, 4, 6 of columns 2i and 2i+1, t[2i+1] rows 1, 3, 5, 7.
    let t: [__m512d; 8] = std::array::from_fn(|k| {
        let (x, y) = (a[k / 2 * 2], a[k / 2 * 2 + 1]);
        if k % 2 == 0 {
            _mm512_unpacklo_pd(x, y)
        } else {
            _mm512_unpackhi_pd(x, y)
        }
    });
    // Lanes gathered across four columns: u[0] rows 0 and 4 of columns
    // 0..4, u[1] rows 2 and 6, u[2] rows 1 and 5, u[3] rows 3 and 7;
    // u[4..8] the same of columns 4..8.
    let quad = |x: __m512d, y: __m512d, high: bool| match high {
        false => _mm512_shuffle_f64x2::<0x88>(x, y),
        true => _mm512_shuffle_f64x2::<0xDD>(x, y),
    };
    let u: [__m512d; 8] = std::array::from_fn(|k| {
        let (x, y) = (t[k / 4 * 4 + k % 4 / 2], t[k / 4 * 4 + k % 4 / 2 + 2]);
        quad(x, y, k % 2 == 1)
    });
    // Row k of the transposed block: rows 0, 4 from u[0], u[4]; 2, 6 from
    // u[1], u[5]; 1, 5 from u[2], u[6]; 3, 7 from u[3], u[7].
    const FROM: [usize; 4] = [0, 2, 1, 3];
    std::array::from_fn(|k| {
        let i = FROM[k % 4];
        quad(u[i], u[i + 4], k >= 4)
    })
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
unsafe fn transpose4_f64(src: *const f64, src_stride: usize, dst: *mut f64, written: RowsWritten) {
    let RowsWritten {
        stride: dst_stride,
        stream,
        update,
    } = written;
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
        // Row k of the transpose: element k of every column.
        let rows = [
            _mm256_permute2f128_pd::<0x20>(t0, t2),
            _mm256_permute2f128_pd::<0x20>(t1, t3),
            _mm256_permute2f128_pd::<0x31>(t0, t2),
            _mm256_permute2f128_pd::<0x31>(t1, t3),
        ];
        if let Some((alpha, beta)) = update {
            let a = _mm256_set1_pd(alpha);
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
        let stream = stream && (dst as usize).is_multiple_of(32) && dst_stride.is_multiple_of(4);
        for (k, row) in rows.into_iter().enumerate() {
            let d = dst.add(k * dst_stride);
            if stream {
                _mm256_stream_pd(d, row);
            } else {
                _mm256_storeu_pd(d, row);
            }
        }
    }
}

/// Edge of the square tiles of [`copy_block`], in elements: a row of
/// `bytes` ([`TILE_BYTES`], [`UPDATE_TILE_BYTES`]), so that a tile's lines
/// on both sides stay in the cache while it is copied and are used whole.
fn tile_edge<T>(bytes: usize) -> usize {
    (bytes / std::mem::size_of::<T>().max(1)).clamp(4, 256)
}
