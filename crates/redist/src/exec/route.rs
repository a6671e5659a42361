//! How each message of a rank travels, decided once when a redistribution
//! is built, in one place.
//!
//! A message leaves its sender in one of three ways ([`Send`]): packed into
//! a buffer, described to MPI by a derived datatype over source storage, or
//! (`async` only) as one MPI message per contiguous source run straight
//! from source storage. Its receiver takes it into a buffer and unpacks
//! it, or (not in `async`) through a derived datatype over target storage
//! ([`Recv`]). How the data is cut into MPI messages ([`Pieces`]) follows
//! from the sender's choice; the receiver computes that choice itself from
//! the same copy program, so both sides agree without talking.
//!
//! Between ranks of one node, `async` may skip MPI for the data altogether
//! ([`super::node_direct`]); that is decided per execution, since it
//! depends on the source array.

use super::mpi_raw::Datatype;
use super::program::{RankProgram, Transfer};
use crate::{Options, RedistError, Strategy};

/// Most runs a message may be split into for direct sends.
const SOURCE_RUNS_MAX: usize = 4096;

/// How a message leaves its sender.
pub(crate) enum Send {
    /// Packed into the strategy's send buffer, sent in chunks.
    Packed,
    /// One instance of a derived datatype over source storage.
    Typed(Datatype),
    /// One MPI message per run `(offset, len)` of source storage.
    SourceRuns(Vec<(usize, usize)>),
}

/// How a message arrives at its receiver.
pub(crate) struct Recv {
    /// How the sender cut it into MPI messages.
    pub pieces: Pieces,
    /// A derived datatype over target storage, if it is received directly
    /// (only when it comes as one MPI message, never in `async`).
    pub typed: Option<Datatype>,
}

/// How a message is cut into MPI messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pieces {
    /// Chunks of at most `max_message_elements` elements.
    Chunks,
    /// One message.
    Whole,
    /// One message per source run, of these lengths.
    Runs(Vec<usize>),
}

impl Pieces {
    /// The pieces of a message of `len` elements as (offset within the
    /// message, length), in the order they are sent.
    pub fn of(&self, len: usize, max: usize) -> PieceIter<'_> {
        match self {
            Pieces::Chunks => PieceIter::chunks(len, max),
            Pieces::Whole => PieceIter::whole(len),
            Pieces::Runs(r) => PieceIter {
                len,
                max,
                next: 0,
                chunks: 0,
                runs: r.iter(),
            },
        }
    }

    /// Number of MPI messages for a message of `len` elements.
    pub fn count(&self, len: usize, max: usize) -> usize {
        match self {
            Pieces::Chunks => len.div_ceil(max),
            Pieces::Whole => 1,
            Pieces::Runs(r) => r.len(),
        }
    }
}

/// The pieces of one message: (offset within the message, length).
#[derive(Debug, Clone)]
pub(crate) struct PieceIter<'a> {
    len: usize,
    max: usize,
    /// Offset of the next piece.
    next: usize,
    /// Chunks still to come (chunked messages).
    chunks: usize,
    /// Run lengths still to come (messages cut by source runs).
    runs: std::slice::Iter<'a, usize>,
}

impl PieceIter<'static> {
    /// Chunks of at most `max` elements.
    pub fn chunks(len: usize, max: usize) -> Self {
        PieceIter {
            len,
            max,
            next: 0,
            chunks: len.div_ceil(max),
            runs: [].iter(),
        }
    }

    /// The whole message as one piece.
    pub fn whole(len: usize) -> Self {
        PieceIter {
            len,
            max: len.max(1),
            next: 0,
            chunks: 1,
            runs: [].iter(),
        }
    }
}

impl Iterator for PieceIter<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let n = if self.chunks > 0 {
            self.chunks -= 1;
            (self.len - self.next).min(self.max)
        } else {
            *self.runs.next()?
        };
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
                let pieces = match send_route_kind(t, options, strategy) {
                    Kind::Typed => Pieces::Whole,
                    Kind::SourceRuns(runs) => Pieces::Runs(runs.iter().map(|r| r.1).collect()),
                    Kind::Packed => Pieces::Chunks,
                };
                let one_message = pieces.count(t.len, options.max_message_elements) == 1;
                let typed = match typed_runs(t, false, options) {
                    Some(runs) if one_message && strategy != Strategy::Async => {
                        Some(Datatype::runs(&runs, elem)?)
                    }
                    _ => None,
                };
                Ok(Recv { pieces, typed })
            })
            .collect::<Result<_, RedistError>>()?;
        Ok(Routes { send, recv })
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
    Packed,
    Typed,
    SourceRuns(Vec<(usize, usize)>),
}

fn send_route_kind(t: &Transfer, options: &Options, strategy: Strategy) -> Kind {
    if typed_runs(t, true, options).is_some() {
        Kind::Typed
    } else if let (Strategy::Async, Some(runs)) = (strategy, source_runs(t, options)) {
        Kind::SourceRuns(runs)
    } else {
        Kind::Packed
    }
}

fn send_route(
    t: &Transfer,
    options: &Options,
    strategy: Strategy,
    elem: &Datatype,
) -> Result<Send, RedistError> {
    Ok(match send_route_kind(t, options, strategy) {
        Kind::Packed => Send::Packed,
        Kind::SourceRuns(runs) => Send::SourceRuns(runs),
        Kind::Typed => {
            let runs = typed_runs(t, true, options).unwrap_or_default();
            Send::Typed(Datatype::runs(&runs, elem)?)
        }
    })
}

/// The runs of `t` on one side if that side is described by a derived
/// datatype: when datatypes are on, the runs are long enough on average,
/// and the message needs no splitting.
fn typed_runs(t: &Transfer, source: bool, options: &Options) -> Option<Vec<(usize, usize)>> {
    if t.len > options.max_message_elements
        || t.len > i32::MAX as usize
        || options.datatype_min_run == usize::MAX
    {
        return None;
    }
    t.runs(source, (t.len / options.datatype_min_run.max(1)).max(1))
}

/// The source runs of `t` if it is sent run by run straight from source
/// storage: runs long enough on average, not too many of them; runs longer
/// than one MPI message are sent in pieces.
fn source_runs(t: &Transfer, options: &Options) -> Option<Vec<(usize, usize)>> {
    if options.direct_min_run == usize::MAX {
        return None;
    }
    let cap = (t.len / options.direct_min_run.max(1)).clamp(1, SOURCE_RUNS_MAX);
    let runs = t.runs(true, cap)?;
    let max = options.max_message_elements;
    let pieces: Vec<(usize, usize)> = runs
        .iter()
        .flat_map(|&(off, len)| {
            (0..len.div_ceil(max)).map(move |k| (off + k * max, (len - k * max).min(max)))
        })
        .collect();
    (!pieces.is_empty() && pieces.len() <= SOURCE_RUNS_MAX).then_some(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_message_in_order() {
        let all = |p: &Pieces, len, max| p.of(len, max).collect::<Vec<_>>();
        assert_eq!(all(&Pieces::Chunks, 10, 4), vec![(0, 4), (4, 4), (8, 2)]);
        assert_eq!(all(&Pieces::Chunks, 8, 4), vec![(0, 4), (4, 4)]);
        assert_eq!(all(&Pieces::Chunks, 0, 4), vec![]);
        assert_eq!(all(&Pieces::Whole, 10, 4), vec![(0, 10)]);
        assert_eq!(
            all(&Pieces::Runs(vec![3, 1, 6]), 10, 4),
            vec![(0, 3), (3, 1), (4, 6)]
        );
        for p in [Pieces::Chunks, Pieces::Whole, Pieces::Runs(vec![5, 5])] {
            assert_eq!(p.count(10, 4), p.of(10, 4).count());
        }
    }
}
