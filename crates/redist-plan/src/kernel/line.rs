//! Copies of one line: one memcpy, long stretches one by one, short
//! ones of a fixed length as unrolled loops, single elements at small
//! constant steps as vector shuffles, and streamed (non-temporal) stores
//! for long stretches.

use super::{copy_block, LineCopy, Plain};
use std::ptr;

/// Copies the line `m`, whose stretches are long, from `src` to `dst`
/// with non-temporal stores where both sides are contiguous.
///
/// # Safety
/// As for [`copy_line`].
pub(super) unsafe fn stream_line<T: Copy>(src: *const T, dst: *mut T, m: &LineCopy) {
    if m.from_stride != 1 || m.to_stride != 1 {
        // SAFETY: the caller's contract.
        return unsafe {
            copy_block(
                src.add(m.from),
                dst.add(m.to),
                (m.count, m.len),
                (m.from_step, m.from_stride),
                (m.to_step, m.to_stride),
                Plain,
                true,
            )
        };
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
pub(super) unsafe fn stream_bytes(src: *const u8, dst: *mut u8, n: usize) {
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
pub(super) unsafe fn copy_line<T: Copy>(src: *const T, dst: *mut T, m: &LineCopy) {
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
                Plain,
                false,
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
