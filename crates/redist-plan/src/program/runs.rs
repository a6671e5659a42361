//! A message's straight copy as plain runs: where each contiguous stretch
//! is read in the source's local storage and written in the target's.
//!
//! This is the copy with everything but its access pattern taken away —
//! no lines, periods or kernels, one `(from, to, len)` per stretch — for
//! yardsticks that time the pattern alone (`redist run --baseline
//! pattern`) and for tests. It costs O(stretches of the message), so it is
//! never on an execution's path.

use super::walk::{Sides, Walk};
use super::MessageProgram;
use crate::kernel::{CopyOp, LineCopy};

impl MessageProgram {
    /// Calls `f(from, to, len)` for every stretch the straight copy of the
    /// message moves (source to target local storage, offsets and lengths
    /// in elements), in message order. A stretch whose elements are not
    /// contiguous on both sides (a permuted or transposed dimension)
    /// comes element by element, with `len == 1`. Adjacent stretches are
    /// not joined: the caller may.
    pub fn each_direct_run(&self, mut f: impl FnMut(usize, usize, usize)) {
        if self.len == 0 || self.ndim() == 0 {
            return;
        }
        let walk = Walk {
            sides: Sides::Direct,
            tables: false,
            buf_start: 0,
        };
        let outer = self.axis(0).len();
        self.walk(walk, (0, outer), &mut |op| {
            match op {
                CopyOp::Line(l) => line_runs(&l, 0, 0, &mut f),
                CopyOp::Tile(t) => {
                    for r in 0..t.rows {
                        line_runs(&t.line, r * t.from_row, r * t.to_row, &mut f);
                    }
                }
                // Not asked for, so not expected; element by element all the same.
                CopyOp::Table(t) => {
                    let at = |index: Option<&[u32]>, e: usize| index.map_or(e, |x| x[e] as usize);
                    for k in 0..t.repeat {
                        for e in 0..t.n {
                            let a =
                                t.from + k * t.from_period + at(t.from_index, e) * t.from_stride;
                            let b = t.to + k * t.to_period + at(t.to_index, e) * t.to_stride;
                            f(a, b, 1);
                        }
                    }
                }
            }
            true
        });
    }
}

/// The stretches of line `l`, shifted by `from` and `to` elements.
fn line_runs(l: &LineCopy, from: usize, to: usize, f: &mut impl FnMut(usize, usize, usize)) {
    for i in 0..l.count {
        let (a, b) = (from + l.from + i * l.from_step, to + l.to + i * l.to_step);
        if l.from_stride == 1 && l.to_stride == 1 {
            f(a, b, l.len);
        } else {
            for e in 0..l.len {
                f(a + e * l.from_stride, b + e * l.to_stride, 1);
            }
        }
    }
}
