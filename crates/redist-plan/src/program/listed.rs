//! Small messages' copies listed once: the lines a walk of the program
//! yields, kept on all three sides (source storage, target storage,
//! buffer), so that copying a small message is one pass over a short list
//! instead of a walk through its dimensions' programs. A redistribution
//! lists them at its second execution (one executed once never pays for
//! it). A rank lists at most [`LISTED_LINES`](crate::tuning::LISTED_LINES)
//! lines over all its messages, so what it holds stays bounded by a
//! constant, whatever the extent.

use super::walk::{Sides, Stretch, Walk};
use super::{units, MessageProgram};
use crate::kernel::{CopyOp, LineCopy};
use std::sync::Arc;

/// Where a listing's two walks collect their lines, reused from one
/// message to the next.
#[derive(Debug, Default)]
pub(super) struct ListScratch {
    /// The lines of the packing walk (source storage → buffer).
    pack: Vec<LineCopy>,
    /// The lines of the unpacking walk (buffer → target storage).
    unpack: Vec<LineCopy>,
}

/// One line of a listed message, on each side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ListedLine {
    src: Stretch,
    dst: Stretch,
    buf: Stretch,
    len: usize,
    count: usize,
}

impl ListedLine {
    /// The copy of this line between `sides`.
    #[inline(always)]
    pub(super) fn op(&self, sides: Sides) -> CopyOp<'static> {
        sides.line(self.src, self.dst, self.buf, self.len, self.count)
    }
}

/// Where the stretches of line `l` lie on its reading side.
fn reading(l: &LineCopy) -> Stretch {
    Stretch {
        at: l.from,
        step: l.from_step,
        stride: l.from_stride,
    }
}

/// Where the stretches of line `l` lie on its writing side.
fn writing(l: &LineCopy) -> Stretch {
    Stretch {
        at: l.to,
        step: l.to_step,
        stride: l.to_stride,
    }
}

impl MessageProgram {
    /// The message's lines on all three sides, when the whole message is
    /// one unit of work and its walks yield at most `max` lines and
    /// nothing but lines (no offset tables, no tiles); else `None`. Also
    /// returns how many copies the attempt walked: at most `2 · (max + 1)`.
    /// The walks collect their lines in `scratch`, reused from one message
    /// to the next.
    pub(super) fn listing(
        &self,
        max: usize,
        scratch: &mut ListScratch,
    ) -> (Option<Arc<[ListedLine]>>, usize) {
        let outer = self.shape.axes.first().map_or(0, |a| a.len());
        if units(self.len, outer, self.shape.unit_elements) != 1 {
            return (None, 0);
        }
        let ListScratch { pack, unpack } = scratch;
        let (ok, walked) = self.lines(Sides::Pack, max, pack);
        if !ok {
            return (None, walked);
        }
        let (ok, more) = self.lines(Sides::Unpack, max, unpack);
        let walked = walked + more;
        if !ok {
            return (None, walked);
        }
        // Both walks go the same way through the message: the buffer is
        // what packing writes and unpacking reads, line by line.
        let same = pack.len() == unpack.len()
            && (pack.iter().zip(unpack.iter()))
                .all(|(p, u)| writing(p) == reading(u) && (p.len, p.count) == (u.len, u.count));
        if !same {
            debug_assert!(same, "packing and unpacking walk a message alike");
            return (None, walked);
        }
        let listed = (pack.iter().zip(unpack.iter()))
            .map(|(p, u)| ListedLine {
                src: reading(p),
                dst: writing(u),
                buf: writing(p),
                len: p.len,
                count: p.count,
            })
            .collect();
        (Some(listed), walked)
    }

    /// The lines of the whole message between `sides` into `lines`, as
    /// [`run`](Self::run) walks them; whether there are at most `max` and
    /// nothing else, and how many copies were walked.
    fn lines(&self, sides: Sides, max: usize, lines: &mut Vec<LineCopy>) -> (bool, usize) {
        lines.clear();
        let mut ok = true;
        let mut walked = 0;
        let outer = self.shape.axes.first().map_or(0, |a| a.len());
        let walk = Walk {
            sides,
            tables: true,
            buf_start: 0,
        };
        self.walk(walk, (0, outer), &mut |op| {
            walked += 1;
            match op {
                CopyOp::Line(l) if lines.len() < max => {
                    lines.push(l);
                    true
                }
                _ => {
                    ok = false;
                    false
                }
            }
        });
        (ok, walked)
    }
}
