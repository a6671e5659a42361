//! How each message of a rank travels, decided once when a redistribution
//! is built, in one place.
//!
//! A message leaves its sender in one of three ways ([`Send`]): packed into
//! a buffer, described to MPI by a derived datatype over source storage, or
//! (`async` only) as one MPI message per contiguous source run straight
//! from source storage. Its receiver takes it into a buffer and unpacks
//! it, or, when it comes as one MPI message, through a derived datatype
//! over target storage ([`Recv`]). How the data is cut into MPI messages,
//! its *pieces* ([`Cut`]), follows from the sender's choice; the receiver computes
//! that choice itself from the same copy program, so both sides agree
//! without talking.
//!
//! Every route is cut from one value decided before ([`Packing`], from
//! `decide.rs`): nothing here looks at the options or the exchange.
//!
//! A side is described by a datatype when its runs are long enough on
//! average ([`Packing::typed_min_run`], from
//! [`Options::datatype_min_run`](crate::Options::datatype_min_run)): the datatype is built from the
//! message's [`TypeTree`], which holds the lines of one period, never one
//! entry per run, so it costs the same at any extent. A message typed on
//! both sides moves with no copy of ours.
//!
//! Between ranks of one node, `async` may skip MPI for the data altogether
//! ([`super::node_direct`]); that is decided per execution, since it
//! depends on the source array.

use super::decide::{Packing, Pieces};
use crate::error::RedistError;
use crate::tuning::{LANDING_MIN_BYTES, PIPELINE_BYTES, SOURCE_RUNS_MAX};
use mpi_extras::Datatype;
use redist_plan::program::{MessageProgram, RankProgram, TypeTree};

/// How a message leaves its sender.
pub(crate) enum Send {
    /// Packed into the strategy's send buffer, sent in chunks; in `async`
    /// each chunk leaves as soon as it is packed.
    Packed(Cut),
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
    /// How the sender cut it into MPI messages (pieces).
    pub cut: Cut,
    /// Whether each piece covers whole outermost indices of the message,
    /// so it can be unpacked on arrival (else the message is unpacked once
    /// whole).
    pub unpack_pieces: bool,
    /// A derived datatype over target storage, if it is received directly
    /// (only when it comes as one MPI message).
    pub typed: Option<Datatype>,
    /// Whether a piece that lies in target storage as one run may be
    /// received there directly (not where executions update the target:
    /// [`Options::updates`]).
    pub lands: bool,
}

/// How a message is cut into MPI messages, its pieces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cut {
    /// Chunks of this many elements (the last one shorter).
    Chunks(usize),
    /// One message per contiguous run of the source storage, runs longer
    /// than `max` elements in pieces of `max`.
    SourceRuns {
        /// Longest piece.
        max: usize,
    },
}

impl Cut {
    /// Calls `f(offset within the message, length, source offset)` for
    /// each piece of message `t`, in the order they are sent; the source
    /// offset is that of the piece in source storage for source runs, 0
    /// for chunks. Stops at the first error.
    pub fn each<E>(
        &self,
        t: &MessageProgram,
        mut f: impl FnMut(usize, usize, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        match *self {
            Cut::Chunks(size) => {
                for (o, n) in Chunks::of(t.len, size) {
                    f(o, n, 0)?;
                }
                Ok(())
            }
            Cut::SourceRuns { max } => {
                let mut at = 0;
                let mut result = Ok(());
                t.each_run(true, usize::MAX, |off, len| {
                    for (o, n) in Chunks::of(len, max) {
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
    pub fn aligned(&self, t: &MessageProgram) -> bool {
        match self {
            Cut::Chunks(size) => size % t.outer_stride() == 0,
            Cut::SourceRuns { .. } => false,
        }
    }
}

/// The chunks of one message, in order: (offset within the message,
/// length).
#[derive(Debug, Clone)]
pub(crate) struct Chunks {
    len: usize,
    size: usize,
    /// Offset of the next piece.
    next: usize,
}

impl Chunks {
    /// The chunks of at most `size` elements of a message of `len`.
    pub fn of(len: usize, size: usize) -> Self {
        Chunks {
            len,
            size: size.max(1),
            next: 0,
        }
    }

    /// The whole message as one piece.
    pub fn whole(len: usize) -> Self {
        Chunks {
            len,
            size: len.max(1),
            next: 0,
        }
    }
}

impl Iterator for Chunks {
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
    /// The route of every message of `program`, messages formed as
    /// `packing` says, elements moved as `elem`.
    pub fn new(
        program: &RankProgram,
        packing: &Packing,
        elem: &Datatype,
    ) -> Result<Routes, RedistError> {
        let send = program
            .sends
            .iter()
            .map(|t| send_route(t, packing, elem))
            .collect::<Result<_, _>>()?;
        let recv = program
            .recvs
            .iter()
            .map(|t| {
                let cut = match send_route_kind(t, packing) {
                    Kind::Typed => Cut::Chunks(t.len),
                    Kind::SourceRuns => Cut::SourceRuns {
                        max: packing.max_message_elements,
                    },
                    Kind::Packed(p) => p,
                };
                let one_message = matches!(cut, Cut::Chunks(size) if size >= t.len);
                let typed = match typed_tree(t, false, packing) {
                    Some(tree) if one_message && !packing.updates => {
                        Some(Datatype::tree(&tree, elem)?)
                    }
                    _ => None,
                };
                let unpack_pieces = cut.aligned(t);
                Ok(Recv {
                    cut,
                    typed,
                    unpack_pieces,
                    lands: !packing.updates,
                })
            })
            .collect::<Result<_, RedistError>>()?;
        Ok(Routes { send, recv })
    }

    /// Bytes these routes hold on the heap (datatypes aside, which MPI holds).
    pub fn heap_bytes(&self) -> usize {
        Routes::bytes_for(self.send.capacity(), self.recv.capacity())
    }

    /// Bytes the routes of `sends` sends and `recvs` receives hold on the
    /// heap (datatypes aside).
    pub fn bytes_for(sends: usize, recvs: usize) -> usize {
        sends * std::mem::size_of::<Send>() + recvs * std::mem::size_of::<Recv>()
    }

    /// Whether `other` sends and receives every message the same way
    /// (datatypes compared by whether there is one, not by their layout:
    /// routes of one program differ only in that). O(messages).
    pub fn same_as(&self, other: &Routes) -> bool {
        let send = |(a, b): (&Send, &Send)| match (a, b) {
            (Send::Packed(x), Send::Packed(y)) => x == y,
            (Send::Typed(_), Send::Typed(_)) => true,
            (Send::SourceRuns { max: x }, Send::SourceRuns { max: y }) => x == y,
            _ => false,
        };
        let recv = |(a, b): (&Recv, &Recv)| {
            a.cut == b.cut
                && a.typed.is_some() == b.typed.is_some()
                && a.unpack_pieces == b.unpack_pieces
                && a.lands == b.lands
        };
        self.send.len() == other.send.len()
            && self.recv.len() == other.recv.len()
            && self.send.iter().zip(&other.send).all(send)
            && self.recv.iter().zip(&other.recv).all(recv)
    }

    /// Messages this rank sends, and messages it receives, described by a
    /// derived datatype.
    pub fn typed(&self) -> (usize, usize) {
        let sends = self.send.iter().filter(|s| matches!(s, Send::Typed(_)));
        let recvs = self.recv.iter().filter(|r| r.typed.is_some());
        (sends.count(), recvs.count())
    }

    /// Messages this rank sends run by run straight from source storage.
    pub fn sent_from_source(&self) -> usize {
        (self.send.iter())
            .filter(|s| matches!(s, Send::SourceRuns { .. }))
            .count()
    }

    /// Whether every message of this rank is described by datatypes on
    /// both sides (then `alltoallv` can run as one `MPI_Alltoallw`).
    pub fn all_typed(&self) -> bool {
        self.send.iter().all(|s| matches!(s, Send::Typed(_)))
            && self.recv.iter().all(|r| r.typed.is_some())
    }
}

/// Whether some message of `program` would be described by a derived
/// datatype on either side formed as `packing` says (datatypes taken to
/// pay), without building one. O(nodes of the messages' trees).
pub(super) fn would_type(program: &RankProgram, packing: &Packing) -> bool {
    let typed = |t: &MessageProgram, source: bool| typed_tree(t, source, packing);
    program.sends.iter().any(|t| typed(t, true).is_some())
        || program.recvs.iter().any(|t| typed(t, false).is_some())
}

/// The sender's choice, without building its datatype.
enum Kind {
    Packed(Cut),
    Typed,
    SourceRuns,
}

fn send_route_kind(t: &MessageProgram, packing: &Packing) -> Kind {
    if typed_tree(t, true, packing).is_some() {
        Kind::Typed
    } else if source_runs(t, packing) {
        Kind::SourceRuns
    } else {
        Kind::Packed(packed_cut(t, packing))
    }
}

/// How a packed message is cut: pipelined ([`Pieces::Pipelined`], `async`), into pieces of about
/// [`PIPELINE_BYTES`] that cover whole outermost indices (so each can be
/// packed, sent and unpacked on its own); otherwise, and where one
/// outermost index holds more than one MPI message, into chunks of at most
/// `max_message_elements`.
fn packed_cut(t: &MessageProgram, packing: &Packing) -> Cut {
    let max = packing.max_message_elements;
    if packing.pieces == Pieces::Chunks {
        return Cut::Chunks(max);
    }
    let elem_bytes = packing.elem_bytes;
    let stride = t.outer_stride();
    let most = (PIPELINE_BYTES / elem_bytes.max(1) / stride).max(1);
    let per_piece = if packing.updates {
        most * stride
    } else {
        landing_indices(t, most, elem_bytes) * stride
    };
    if per_piece <= max {
        Cut::Chunks(per_piece)
    } else {
        Cut::Chunks(max)
    }
}

/// Outermost indices per `async` piece of `t`: `most`, or fewer where a
/// first piece of `most` would not lie in target storage as one run but a
/// shorter first piece of at least [`LANDING_MIN_BYTES`] does. A
/// block-cyclic target repeats its runs, so pieces cut at the end of the
/// first run tend to land each on one run, and are received straight into
/// target storage, with no unpacking. Sender and receiver compute it alike
/// from the same program. O(log `most` · lines of `most` indices).
fn landing_indices(t: &MessageProgram, most: usize, elem_bytes: usize) -> usize {
    let stride = t.outer_stride();
    let lands = |k: usize| t.target_run(0..(k * stride).min(t.len)).is_some();
    if most * stride >= t.len || lands(most) {
        return most;
    }
    // The longest first piece that lands: `lo` lands (0 trivially), `hi`
    // does not.
    let (mut lo, mut hi) = (0, most);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if lands(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    if lo * stride * elem_bytes >= LANDING_MIN_BYTES {
        lo
    } else {
        most
    }
}

fn send_route(t: &MessageProgram, packing: &Packing, elem: &Datatype) -> Result<Send, RedistError> {
    Ok(match send_route_kind(t, packing) {
        Kind::Packed(p) => Send::Packed(p),
        Kind::SourceRuns => Send::SourceRuns {
            max: packing.max_message_elements,
        },
        Kind::Typed => match typed_tree(t, true, packing) {
            Some(tree) => Send::Typed(Datatype::tree(&tree, elem)?),
            None => Send::Packed(packed_cut(t, packing)),
        },
    })
}

/// The tree of `t` on one side if that side is described by a derived
/// datatype: when datatypes are on, its runs are long enough on average
/// ([`Packing::typed_min_run`]), the message needs no splitting, and —
/// where [`Packing::packs_slow_typed_sends`] — it is not a sending side MPI
/// would send more slowly typed than packed ([`sends_slowly_typed`]).
/// O(nodes of the trees).
fn typed_tree(t: &MessageProgram, source: bool, packing: &Packing) -> Option<TypeTree> {
    let min_run = packing.typed_min_run?;
    if t.len == 0 || t.len > packing.max_message_elements || t.len > i32::MAX as usize {
        return None;
    }
    let tree = t.type_tree(source);
    if source && packing.packs_slow_typed_sends && sends_slowly_typed(t, &tree) {
        return None;
    }
    (t.len / tree.leaf_runs().max(1) >= min_run).then_some(tree)
}

/// Whether MPI sends message `t`, whose source side is `source`, more
/// slowly as a derived datatype than we pack it: when either side repeats a
/// period made of a sequence of different runs
/// ([`TypeTree::repeats_sequences`]). Repeats of one run on both sides are
/// fast typed. Measured with MPICH 4.0.2 (`docs/TUNING.md`); other MPIs may
/// differ.
fn sends_slowly_typed(t: &MessageProgram, source: &TypeTree) -> bool {
    source.repeats_sequences() || t.type_tree(false).repeats_sequences()
}

/// Whether `t` is sent run by run straight from source storage: its
/// source runs long enough on average, not too many pieces (runs longer
/// than one MPI message count as several). Costs O(`SOURCE_RUNS_MAX`) at
/// most; the runs are not kept but walked again when sent.
fn source_runs(t: &MessageProgram, packing: &Packing) -> bool {
    let Some(min_run) = packing.source_min_run else {
        return false;
    };
    let cap = (t.len / min_run).clamp(1, SOURCE_RUNS_MAX);
    let max = packing.max_message_elements;
    let mut pieces = 0;
    let runs = t.each_run(true, cap, |_, len| pieces += len.div_ceil(max));
    runs.is_some_and(|n| n > 0) && pieces <= SOURCE_RUNS_MAX
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::decide::packing;
    use crate::options::{MinRun, Options, Strategy::Async};
    use dist_array::{Layout, Order};
    use redist_plan::{Plan, Remap};

    /// The message from rank 0 to rank 1 of `shape` from `from` to `to`,
    /// both stored in `order`.
    fn message_in(order: Order, shape: &[usize], from: &str, to: &str) -> MessageProgram {
        let s = Layout::parse(shape, from).unwrap().with_storage(order);
        let t = Layout::parse(shape, to).unwrap().with_storage(order);
        let plan = Plan::new(&s, &t, Remap::None).unwrap();
        MessageProgram::new(
            plan.axes(),
            plan.source(),
            plan.target(),
            0,
            1,
            1,
            usize::MAX,
        )
    }

    /// The message from rank 0 to rank 1, row-major.
    fn message(shape: &[usize], from: &str, to: &str) -> MessageProgram {
        message_in(Order::RowMajor, shape, from, to)
    }

    /// Async pieces end where a run of target storage ends when the first
    /// run is long enough: then every piece lands in one run (received
    /// straight into target storage); else they keep their size.
    #[test]
    fn async_pieces_end_with_target_runs() {
        let options = Options::default();
        let pieces = |t: &MessageProgram| match packed_cut(t, &packing(&options, Async, 8)) {
            Cut::Chunks(n) => n,
            other => panic!("{other:?}"),
        };
        let landing = |t: &MessageProgram, n: usize| {
            (0..t.len)
                .step_by(n)
                .filter(|&o| t.target_run(o..(o + n).min(t.len)).is_some())
                .count()
        };
        // Rows of 4 KiB; 48 rows (192 KiB) of the target in one run, so
        // pieces of 64 rows (256 KiB) would not land but pieces of 48 do.
        let t = message(
            &[1024, 1024],
            "cyclic(48),*@2x1",
            "cyclic(1024),cyclic(8)@1x2",
        );
        let row = t.outer_stride();
        assert_eq!(row, 512);
        assert_eq!(pieces(&t), 48 * row);
        assert_eq!(landing(&t, pieces(&t)), t.len.div_ceil(48 * row));
        // Of pieces of 64 rows, only the last, shorter one would land.
        assert_eq!(landing(&t, 64 * row), 1);
        // Runs of 16 rows (64 KiB): shorter than LANDING_MIN_BYTES, the
        // pieces keep their 64 rows.
        let t = message(
            &[1024, 1024],
            "cyclic(16),*@2x1",
            "cyclic(1024),cyclic(8)@1x2",
        );
        assert_eq!(pieces(&t), 64 * t.outer_stride());
        // Updates never land: pieces keep their size.
        let updates = Options {
            updates: true,
            ..Options::default()
        };
        let t = message(
            &[1024, 1024],
            "cyclic(48),*@2x1",
            "cyclic(1024),cyclic(8)@1x2",
        );
        assert!(matches!(
            packed_cut(&t, &packing(&updates, Async, 8)),
            Cut::Chunks(n) if n == 64 * t.outer_stride()
        ));
    }

    /// Sides of f64 messages the default options describe by datatypes:
    /// (source, target).
    fn typed_sides(t: &MessageProgram, options: &Options) -> (bool, bool) {
        let typed = |source| typed_tree(t, source, &packing(options, Async, 8)).is_some();
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
            datatype_min_run: MinRun::Elements(16),
            ..Options::default()
        };
        let t = message(&[16_777_216], "cyclic(40)@2", "cyclic(300)@2");
        assert_eq!(typed_sides(&t, &explicit), (true, true));
    }

    #[test]
    fn chunks_cover_the_message_in_order() {
        let all = |len, size| Chunks::of(len, size).collect::<Vec<_>>();
        assert_eq!(all(10, 4), vec![(0, 4), (4, 4), (8, 2)]);
        assert_eq!(all(8, 4), vec![(0, 4), (4, 4)]);
        assert_eq!(all(0, 4), vec![]);
        assert_eq!(all(10, 10), vec![(0, 10)]);
        assert_eq!(Chunks::whole(7).collect::<Vec<_>>(), vec![(0, 7)]);
    }
}
