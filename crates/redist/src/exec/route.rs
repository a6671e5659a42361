//! How each message of a rank travels, decided once when a redistribution
//! is built, in one place.
//!
//! A message leaves its sender in one of three ways ([`Send`]): packed into
//! a buffer, described to MPI by a derived datatype over source storage, or
//! (`async` only) as one MPI message per contiguous source run straight
//! from source storage. Its receiver takes it into a buffer and unpacks
//! it, or, when it comes as one MPI message, through a derived datatype
//! over target storage ([`Recv`]). How the data is cut into MPI messages
//! ([`Pieces`]) follows from the sender's choice; the receiver computes
//! that choice itself from the same copy program, so both sides agree
//! without talking.
//!
//! A side is described by a datatype when its runs are long enough on
//! average ([`Options::min_typed_run`]): the datatype is built from the
//! message's [`TypeTree`], which holds the lines of one period, never one
//! entry per run, so it costs the same at any extent. A message typed on
//! both sides moves with no copy of ours.
//!
//! Between ranks of one node, `async` may skip MPI for the data altogether
//! ([`super::node_direct`]); that is decided per execution, since it
//! depends on the source array.

use super::mpi_raw::Datatype;
use super::program::{RankProgram, Transfer, TypeTree};
use crate::options::DATATYPE_MIN_RUN;
use crate::{Options, RedistError, Strategy};

/// Most runs a message may be split into for direct sends.
const SOURCE_RUNS_MAX: usize = 4096;

/// Bytes per piece of a packed `async` message: pieces are packed, sent,
/// received and unpacked one after another, so packing, transfer and
/// unpacking overlap.
pub(crate) const PIPELINE_BYTES: usize = 1 << 18;

/// How a message leaves its sender.
pub(crate) enum Send {
    /// Packed into the strategy's send buffer, sent in chunks; in `async`
    /// each chunk leaves as soon as it is packed.
    Packed(Pieces),
    /// One instance of a derived datatype over source storage.
    Typed(Datatype),
    /// One MPI message per contiguous run of source storage (runs longer
    /// than `max` elements in pieces of `max`), computed as it is sent.
    SourceRuns {
        /// Longest piece.
        max: usize,
    },
}

/// How a message arrives at its receiver.
pub(crate) struct Recv {
    /// How the sender cut it into MPI messages.
    pub pieces: Pieces,
    /// Whether each piece covers whole outermost indices of the message,
    /// so it can be unpacked on arrival (else the message is unpacked once
    /// whole).
    pub unpack_pieces: bool,
    /// A derived datatype over target storage, if it is received directly
    /// (only when it comes as one MPI message).
    pub typed: Option<Datatype>,
}

/// How a message is cut into MPI messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pieces {
    /// Chunks of this many elements (the last one shorter).
    Chunks(usize),
    /// One message per contiguous run of the source storage, runs longer
    /// than `max` elements in pieces of `max`.
    SourceRuns {
        /// Longest piece.
        max: usize,
    },
}

impl Pieces {
    /// Calls `f(offset within the message, length, source offset)` for
    /// each piece of message `t`, in the order they are sent; the source
    /// offset is that of the piece in source storage for source runs, 0
    /// for chunks. Stops at the first error.
    pub fn each<E>(
        &self,
        t: &Transfer,
        mut f: impl FnMut(usize, usize, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        match *self {
            Pieces::Chunks(size) => {
                for (o, n) in PieceIter::chunks(t.len, size) {
                    f(o, n, 0)?;
                }
                Ok(())
            }
            Pieces::SourceRuns { max } => {
                let mut at = 0;
                let mut result = Ok(());
                t.each_run(true, usize::MAX, |off, len| {
                    for (o, n) in PieceIter::chunks(len, max) {
                        if result.is_ok() {
                            result = f(at + o, n, off + o);
                        }
                    }
                    at += len;
                });
                result
            }
        }
    }

    /// Whether every piece of `t` covers whole outermost indices, so that
    /// it packs and unpacks on its own.
    pub fn aligned(&self, t: &Transfer) -> bool {
        match self {
            Pieces::Chunks(size) => size % t.outer_stride() == 0,
            Pieces::SourceRuns { .. } => false,
        }
    }
}

/// The chunks of one message: (offset within the message, length).
#[derive(Debug, Clone)]
pub(crate) struct PieceIter {
    len: usize,
    size: usize,
    /// Offset of the next piece.
    next: usize,
}

impl PieceIter {
    /// Chunks of at most `size` elements.
    pub fn chunks(len: usize, size: usize) -> Self {
        PieceIter {
            len,
            size: size.max(1),
            next: 0,
        }
    }

    /// The whole message as one piece.
    pub fn whole(len: usize) -> Self {
        PieceIter {
            len,
            size: len.max(1),
            next: 0,
        }
    }
}

impl Iterator for PieceIter {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        if self.next >= self.len {
            return None;
        }
        let n = (self.len - self.next).min(self.size);
        self.next += n;
        Some((self.next - n, n))
    }
}

/// The routes of every message of one rank.
pub(crate) struct Routes {
    /// Per send, in the order of [`RankProgram::sends`].
    pub send: Vec<Send>,
    /// Per receive, in the order of [`RankProgram::recvs`].
    pub recv: Vec<Recv>,
}

impl Routes {
    /// Decides the route of every message of `program` for `strategy`
    /// (never `Auto`).
    pub fn new(
        program: &RankProgram,
        options: &Options,
        strategy: Strategy,
        elem: &Datatype,
    ) -> Result<Routes, RedistError> {
        let send = program
            .sends
            .iter()
            .map(|t| send_route(t, options, strategy, elem))
            .collect::<Result<_, _>>()?;
        let recv = program
            .recvs
            .iter()
            .map(|t| {
                let pieces = match send_route_kind(t, options, strategy, elem.bytes()) {
                    Kind::Typed => Pieces::Chunks(t.len),
                    Kind::SourceRuns => Pieces::SourceRuns {
                        max: options.max_message_elements,
                    },
                    Kind::Packed(p) => p,
                };
                let one_message = matches!(pieces, Pieces::Chunks(size) if size >= t.len);
                let typed = match typed_tree(t, false, options, elem.bytes()) {
                    Some(tree) if one_message => Some(Datatype::tree(&tree, elem)?),
                    _ => None,
                };
                let unpack_pieces = pieces.aligned(t);
                Ok(Recv {
                    pieces,
                    typed,
                    unpack_pieces,
                })
            })
            .collect::<Result<_, RedistError>>()?;
        Ok(Routes { send, recv })
    }

    /// Bytes these routes hold on the heap (datatypes aside, which MPI holds).
    pub fn heap_bytes(&self) -> usize {
        self.send.capacity() * std::mem::size_of::<Send>()
            + self.recv.capacity() * std::mem::size_of::<Recv>()
    }

    /// Whether every message of this rank is described by datatypes on
    /// both sides (then `alltoallv` can run as one `MPI_Alltoallw`).
    pub fn all_typed(&self) -> bool {
        self.send.iter().all(|s| matches!(s, Send::Typed(_)))
            && self.recv.iter().all(|r| r.typed.is_some())
    }
}

/// The sender's choice, without building its datatype.
enum Kind {
    Packed(Pieces),
    Typed,
    SourceRuns,
}

fn send_route_kind(t: &Transfer, options: &Options, strategy: Strategy, elem_bytes: usize) -> Kind {
    if typed_tree(t, true, options, elem_bytes).is_some() {
        Kind::Typed
    } else if strategy == Strategy::Async && source_runs(t, options) {
        Kind::SourceRuns
    } else {
        Kind::Packed(packed_pieces(t, options, strategy, elem_bytes))
    }
}

/// How a packed message is cut: for `async`, into pieces of about
/// [`PIPELINE_BYTES`] that cover whole outermost indices (so each can be
/// packed, sent and unpacked on its own); otherwise, and where one
/// outermost index holds more than one MPI message, into chunks of at most
/// `max_message_elements`.
fn packed_pieces(t: &Transfer, options: &Options, strategy: Strategy, elem_bytes: usize) -> Pieces {
    let max = options.max_message_elements;
    if strategy != Strategy::Async {
        return Pieces::Chunks(max);
    }
    let stride = t.outer_stride();
    let per_piece = (PIPELINE_BYTES / elem_bytes.max(1) / stride).max(1) * stride;
    if per_piece <= max {
        Pieces::Chunks(per_piece)
    } else {
        Pieces::Chunks(max)
    }
}

fn send_route(
    t: &Transfer,
    options: &Options,
    strategy: Strategy,
    elem: &Datatype,
) -> Result<Send, RedistError> {
    Ok(match send_route_kind(t, options, strategy, elem.bytes()) {
        Kind::Packed(p) => Send::Packed(p),
        Kind::SourceRuns => Send::SourceRuns {
            max: options.max_message_elements,
        },
        Kind::Typed => match typed_tree(t, true, options, elem.bytes()) {
            Some(tree) => Send::Typed(Datatype::tree(&tree, elem)?),
            None => Send::Packed(packed_pieces(t, options, strategy, elem.bytes())),
        },
    })
}

/// The tree of `t` on one side if that side is described by a derived
/// datatype: when datatypes are on, its runs are long enough on average
/// ([`Options::min_typed_run`]), the message needs no splitting, and —
/// under the default [`Options::datatype_min_run`] — it is not a sending
/// side MPI would send more slowly typed than packed
/// ([`sends_slowly_typed`]). O(nodes of the trees).
fn typed_tree(
    t: &Transfer,
    source: bool,
    options: &Options,
    elem_bytes: usize,
) -> Option<TypeTree> {
    let min_run = options.min_typed_run(elem_bytes)?;
    if t.len == 0 || t.len > options.max_message_elements || t.len > i32::MAX as usize {
        return None;
    }
    let tree = t.type_tree(source);
    if source && options.datatype_min_run == DATATYPE_MIN_RUN && sends_slowly_typed(t, &tree) {
        return None;
    }
    (t.len / tree.leaf_runs().max(1) >= min_run).then_some(tree)
}

/// Whether MPI sends message `t`, whose source side is `source`, more
/// slowly as a derived datatype than we pack it: when either side repeats a
/// period made of a sequence of different runs
/// ([`TypeTree::repeats_sequences`]). Measured with MPICH 4.0.2 on 2 ranks
/// as messages, f64: 16777216 `cyclic(40)@2` → `cyclic(300)@2` (periods of
/// two runs sent, of three lines received) typed on both sides 44–49 ms,
/// packed on both 30–32 ms, typed on the receiving side only 19–21 ms;
/// `cyclic(300)@2` → `cyclic(200)@2` (one run sent, two received per
/// period) 24–26 ms typed on both sides, 16 ms on the receiving side only.
/// Repeats of one run on both sides are fast typed: 4096² `cyclic(64)²@1x2`
/// → `@2x1` (runs of 1 MiB sent row-major, received column-major), and
/// 4096² column-major `cyclic,cyclic@1x2` → `cyclic(3),cyclic(3)@1x2`
/// (columns of 32 KiB) 7.5 ms typed on both sides, 13.6 ms packed by the
/// sender.
fn sends_slowly_typed(t: &Transfer, source: &TypeTree) -> bool {
    source.repeats_sequences() || t.type_tree(false).repeats_sequences()
}

/// Whether `t` is sent run by run straight from source storage: its
/// source runs long enough on average, not too many pieces (runs longer
/// than one MPI message count as several). Costs O(`SOURCE_RUNS_MAX`) at
/// most; the runs are not kept but walked again when sent.
fn source_runs(t: &Transfer, options: &Options) -> bool {
    if options.direct_min_run == usize::MAX {
        return false;
    }
    let cap = (t.len / options.direct_min_run.max(1)).clamp(1, SOURCE_RUNS_MAX);
    let max = options.max_message_elements;
    let mut pieces = 0;
    let runs = t.each_run(true, cap, |_, len| pieces += len.div_ceil(max));
    runs.is_some_and(|n| n > 0) && pieces <= SOURCE_RUNS_MAX
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Plan, Remap};
    use dist_array::{Layout, Order};

    /// The message from rank 0 to rank 1 of `shape` from `from` to `to`,
    /// both stored in `order`.
    fn message_in(order: Order, shape: &[usize], from: &str, to: &str) -> Transfer {
        let s = Layout::parse(shape, from).unwrap().with_storage(order);
        let t = Layout::parse(shape, to).unwrap().with_storage(order);
        let plan = Plan::new(&s, &t, Remap::None).unwrap();
        Transfer::with_units(&plan, 0, 1, 1, usize::MAX)
    }

    /// The message from rank 0 to rank 1, row-major.
    fn message(shape: &[usize], from: &str, to: &str) -> Transfer {
        message_in(Order::RowMajor, shape, from, to)
    }

    /// Sides of f64 messages the default options describe by datatypes:
    /// (source, target).
    fn typed_sides(t: &Transfer, options: &Options) -> (bool, bool) {
        let typed = |source| typed_tree(t, source, options, 8).is_some();
        (typed(true), typed(false))
    }

    #[test]
    fn repeated_sequences_are_packed_by_the_sender() {
        let default = Options::default();
        // Periods of several runs on either side: the receiver takes the
        // datatype, the sender packs.
        let t = message(&[16_777_216], "cyclic(40)@2", "cyclic(300)@2");
        assert_eq!(typed_sides(&t, &default), (false, true));
        let t = message(&[16_777_216], "cyclic(300)@2", "cyclic(200)@2");
        assert_eq!(typed_sides(&t, &default), (false, true));
        // Repeats of one run on both sides: both typed, with runs of 1 MiB
        // sent (row-major) or received (column-major) ...
        let (from, to) = ("cyclic(64),cyclic(64)@1x2", "cyclic(64),cyclic(64)@2x1");
        for order in [Order::RowMajor, Order::ColumnMajor] {
            let t = message_in(order, &[4096, 4096], from, to);
            assert_eq!(typed_sides(&t, &default), (true, true), "{order:?}");
        }
        // ... columns of 32 KiB on both sides ...
        let (from, to) = ("cyclic,cyclic@1x2", "cyclic(3),cyclic(3)@1x2");
        let t = message_in(Order::ColumnMajor, &[4096, 4096], from, to);
        assert_eq!(typed_sides(&t, &default), (true, true));
        // ... or one run received.
        let t = message(&[256, 256, 256], "block,*,*@2x1x1", "*,*,block@1x1x2");
        assert_eq!(typed_sides(&t, &default), (true, true));
        // Runs too short for any datatype.
        let t = message(
            &[4096, 4096],
            "cyclic(5),cyclic(5)@1x2",
            "cyclic(8),cyclic(8)@1x2",
        );
        assert_eq!(typed_sides(&t, &default), (false, false));
        // An explicit minimum run is taken as it is.
        let explicit = Options {
            datatype_min_run: 16,
            ..Options::default()
        };
        let t = message(&[16_777_216], "cyclic(40)@2", "cyclic(300)@2");
        assert_eq!(typed_sides(&t, &explicit), (true, true));
    }

    #[test]
    fn chunks_cover_the_message_in_order() {
        let all = |len, size| PieceIter::chunks(len, size).collect::<Vec<_>>();
        assert_eq!(all(10, 4), vec![(0, 4), (4, 4), (8, 2)]);
        assert_eq!(all(8, 4), vec![(0, 4), (4, 4)]);
        assert_eq!(all(0, 4), vec![]);
        assert_eq!(all(10, 10), vec![(0, 10)]);
        assert_eq!(PieceIter::whole(7).collect::<Vec<_>>(), vec![(0, 7)]);
    }
}
