//! Copying ghost boxes: between two padded storages, from one into a
//! message buffer, and from a buffer into one. A box is walked as runs
//! along the storage's fastest axis, each one `copy_from_slice`; the outer
//! axes count with an odometer. A buffer holds a message's boxes one after
//! another, each box's cells in memory order: sender and receiver walk the
//! same boxes in the same order, so the bytes need no description.

use super::rank::GhostBox;
use crate::coords::Order;

/// Strides of padded storage of `shape` stored in `order`, per axis.
///
/// ```
/// use redist_plan::ghost::padded_strides;
/// use redist_plan::Order;
/// assert_eq!(padded_strides(&[4, 6], Order::RowMajor), vec![6, 1]);
/// assert_eq!(padded_strides(&[4, 6], Order::ColumnMajor), vec![1, 4]);
/// ```
pub fn padded_strides(shape: &[usize], order: Order) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    match order {
        Order::RowMajor => {
            for d in (0..shape.len().saturating_sub(1)).rev() {
                s[d] = s[d + 1] * shape[d + 1];
            }
        }
        Order::ColumnMajor => {
            for d in 1..shape.len() {
                s[d] = s[d - 1] * shape[d - 1];
            }
        }
    }
    s
}

/// How boxes are walked: the storage order (the same on both sides: one
/// layout), which fixes the fastest axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoxCopy {
    order: Order,
}

impl BoxCopy {
    /// Copies of storages in `order`.
    pub fn new(order: Order) -> BoxCopy {
        BoxCopy { order }
    }

    /// Calls `f(src, dst, len)` for every run of `b` along the fastest axis:
    /// offsets into storages of `src` and `dst` strides.
    fn runs(
        &self,
        b: &GhostBox,
        src: &[usize],
        dst: &[usize],
        mut f: impl FnMut(usize, usize, usize),
    ) {
        let n = b.len.len();
        if n == 0 || b.len.contains(&0) {
            return;
        }
        let fast = match self.order {
            Order::RowMajor => n - 1,
            Order::ColumnMajor => 0,
        };
        // Outer axes, slowest first.
        let outer: Vec<usize> = match self.order {
            Order::RowMajor => (0..n - 1).collect(),
            Order::ColumnMajor => (1..n).rev().collect(),
        };
        let base_s: usize = (0..n).map(|d| b.src[d] * src[d]).sum();
        let base_d: usize = (0..n).map(|d| b.dst[d] * dst[d]).sum();
        let len = b.len[fast];
        // The fastest of the outer axes is walked in a tight loop (a face
        // one cell thick along the fastest axis is that many runs of one);
        // the others count with an odometer.
        let (rows, rest) = match outer.split_last() {
            Some((&d, rest)) => ((b.len[d], src[d], dst[d]), rest),
            None => ((1, 0, 0), &outer[..]),
        };
        let mut at = vec![0usize; rest.len()];
        let (mut s, mut t) = (base_s, base_d);
        loop {
            let (count, ss, ts) = rows;
            for r in 0..count {
                f(s + r * ss, t + r * ts, len);
            }
            let mut k = rest.len();
            loop {
                if k == 0 {
                    return;
                }
                k -= 1;
                let d = rest[k];
                at[k] += 1;
                s += src[d];
                t += dst[d];
                if at[k] < b.len[d] {
                    break;
                }
                s -= src[d] * b.len[d];
                t -= dst[d] * b.len[d];
                at[k] = 0;
            }
        }
    }

    /// Copies `b` from `src` (strides `src_strides`) into `dst`.
    pub fn copy<T: Copy>(
        &self,
        b: &GhostBox,
        src: &[T],
        src_strides: &[usize],
        dst: &mut [T],
        dst_strides: &[usize],
    ) {
        self.runs(b, src_strides, dst_strides, |s, t, len| {
            put(dst, t, src, s, len);
        });
    }

    /// Copies `b` within one storage, from its interior into its ghosts
    /// (which never overlap).
    pub fn copy_within<T: Copy>(&self, b: &GhostBox, storage: &mut [T], strides: &[usize]) {
        self.runs(b, strides, strides, |s, t, len| {
            if len == 1 {
                storage[t] = storage[s];
            } else {
                storage.copy_within(s..s + len, t);
            }
        });
    }

    /// Packs `boxes` of `src` into `buf`, one after another; returns the
    /// cells written.
    pub fn pack<T: Copy>(
        &self,
        boxes: &[GhostBox],
        src: &[T],
        src_strides: &[usize],
        buf: &mut [T],
    ) -> usize {
        let mut k = 0;
        for b in boxes {
            self.runs(b, src_strides, src_strides, |s, _, len| {
                put(buf, k, src, s, len);
                k += len;
            });
        }
        k
    }

    /// Unpacks `buf`, as [`pack`](Self::pack) filled it, into `boxes` of
    /// `dst`; returns the cells read.
    pub fn unpack<T: Copy>(
        &self,
        boxes: &[GhostBox],
        buf: &[T],
        dst: &mut [T],
        dst_strides: &[usize],
    ) -> usize {
        let mut k = 0;
        for b in boxes {
            self.runs(b, dst_strides, dst_strides, |_, t, len| {
                put(dst, t, buf, k, len);
                k += len;
            });
        }
        k
    }
}

/// Copies `len` elements of `src` from `s` into `dst` at `t`; a single
/// element without a call to `memcpy`.
#[inline(always)]
fn put<T: Copy>(dst: &mut [T], t: usize, src: &[T], s: usize, len: usize) {
    if len == 1 {
        dst[t] = src[s];
    } else {
        dst[t..t + len].copy_from_slice(&src[s..s + len]);
    }
}
