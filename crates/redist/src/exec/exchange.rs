//! The one interface every exchange implements ([`Exchange`]), and the
//! arrays an execution hands it ([`Arrays`]).
//!
//! An exchange moves K arrays with the same layouts at once; a single
//! array is a batch of one. How the K arrays travel was decided from the
//! figures the ranks agreed on ([`BatchWay`]): array by array through the
//! exchange's own messages, or stacked — every message between two ranks
//! carrying the K arrays' shares one after the other (array `j`'s share of
//! message `m` at `j · len(m)` of its slot, `stacked.rs`) — or, for
//! `async` between ranks of one node, copied straight from every sender's
//! storage.

use super::alltoallv::Alltoallv;
use super::asynchronous::Async;
use super::combined::Combined;
use super::decide::BatchWay;
use super::messages::RankMessages;
use super::mixed::Pair;
use super::scheduled::Scheduled;
use super::stacked::Stacked;
use crate::RedistError;
use dist_array::{DistArray, Element};
use mpi::topology::SimpleCommunicator;
use redist_plan::kernel::Store;

/// What an execution's errors say was being done.
pub(crate) const EXECUTING: &str = "executing a redistribution";

/// The arrays of one execution: K sources and the targets they are
/// redistributed into (the `j`-th source into the `j`-th target), checked
/// against the redistribution's layouts.
pub(crate) struct Arrays<'a, 'd, T> {
    /// The sources.
    pub sources: &'a [&'a DistArray<T>],
    /// The targets, as many as sources.
    pub targets: &'a mut [&'d mut DistArray<T>],
}

impl<'a, 'd, T> Arrays<'a, 'd, T> {
    /// Each source with its target, in order.
    pub fn pairs<'s>(
        &'s mut self,
    ) -> impl Iterator<Item = (&'s DistArray<T>, &'s mut DistArray<T>)> + use<'s, 'a, 'd, T> {
        let targets = self.targets.iter_mut().map(|d| &mut **d);
        self.sources.iter().copied().zip(targets)
    }

    /// The number of pairs, K.
    pub fn len(&self) -> usize {
        self.sources.len()
    }

    /// Consecutive groups of `size` pairs (the last one may be shorter).
    pub fn groups<'s>(
        &'s mut self,
        size: usize,
    ) -> impl Iterator<Item = Arrays<'s, 'd, T>> + use<'s, 'a, 'd, T> {
        let size = size.max(1);
        let sources = self.sources.chunks(size);
        let targets = self.targets.chunks_mut(size);
        sources
            .zip(targets)
            .map(|(sources, targets)| Arrays { sources, targets })
    }
}

/// What every exchange does: move a batch of arrays between the ranks of
/// `comm`, each rank's messages as `messages` describes them, every value
/// stored into the targets through `store`. Collective over `comm`.
pub(crate) trait Exchange<T: Element> {
    /// Moves `arrays` as `way` says. `verdict` is this rank's own verdict
    /// on its arrays where the exchange agrees on the verdicts as it goes
    /// ([`agrees_as_it_goes`](Self::agrees_as_it_goes)); elsewhere the
    /// ranks agreed before and it is `Ok`.
    ///
    /// # Errors
    ///
    /// The verdict's error, [`RedistError::OtherRank`] where the exchange
    /// agrees as it goes and another rank's arrays were wrong, and MPI's
    /// errors.
    fn run<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        arrays: Arrays<'_, '_, T>,
        verdict: Result<(), RedistError>,
        run: Run<S>,
    ) -> Result<(), RedistError>;

    /// Moves a batch of arrays of several element types: always stacked,
    /// in 8-byte words (`mixed.rs`), in groups cut from `per_array`, the
    /// most elements any rank sends or receives. The ranks agreed on the
    /// batch.
    ///
    /// # Errors
    ///
    /// MPI's errors, and [`RedistError::Internal`] where a share of a
    /// buffer is not aligned for its type (a bug).
    fn run_mixed(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        pairs: &mut [Box<dyn Pair + '_>],
        per_array: usize,
    ) -> Result<(), RedistError> {
        self.stacked().run_mixed(messages, comm, pairs, per_array)
    }

    /// The buffers of stacked messages.
    fn stacked(&mut self) -> &mut Stacked<T>;

    /// Whether the exchange agrees on every rank's verdict on its arrays
    /// itself, at no cost of its own (so the execution does not agree
    /// before).
    fn agrees_as_it_goes(&self) -> bool {
        false
    }

    /// Bytes of the routes, tables and counts the exchange holds (buffers
    /// aside).
    fn heap_bytes(&self) -> usize;
}

/// How an execution stores and batches: through `store`, as `way` says.
#[derive(Clone, Copy)]
pub(crate) struct Run<S> {
    /// How each value is stored into the targets.
    pub store: S,
    /// How a batch of arrays travels.
    pub way: BatchWay,
}

/// The exchange a redistribution set up, with its buffers and state (one
/// per redistribution, so the variants' sizes do not matter).
#[allow(clippy::large_enum_variant)]
pub(crate) enum Exchanges<T> {
    /// `alltoallv`.
    Alltoallv(Alltoallv<T>),
    /// `scheduled`.
    Scheduled(Scheduled<T>),
    /// `async`.
    Async(Async<T>),
    /// `combined`.
    Combined(Combined<T>),
}

/// `$body` with `$x` bound to the exchange inside `$e`, whichever it is.
macro_rules! each {
    ($e:expr, $x:ident => $body:expr) => {
        match $e {
            Exchanges::Alltoallv($x) => $body,
            Exchanges::Scheduled($x) => $body,
            Exchanges::Async($x) => $body,
            Exchanges::Combined($x) => $body,
        }
    };
}

impl<T: Element> Exchange<T> for Exchanges<T> {
    fn run<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        arrays: Arrays<'_, '_, T>,
        verdict: Result<(), RedistError>,
        run: Run<S>,
    ) -> Result<(), RedistError> {
        each!(self, x => x.run(messages, comm, arrays, verdict, run))
    }

    fn stacked(&mut self) -> &mut Stacked<T> {
        each!(self, x => x.stacked())
    }

    fn agrees_as_it_goes(&self) -> bool {
        each!(self, x => x.agrees_as_it_goes())
    }

    fn heap_bytes(&self) -> usize {
        each!(self, x => x.heap_bytes())
    }
}

/// Moves `arrays` one by one with `one`, after `verdict` (agreed before).
///
/// # Errors
///
/// The verdict's, then the first error `one` returns.
pub(crate) fn one_by_one<T>(
    mut arrays: Arrays<'_, '_, T>,
    verdict: Result<(), RedistError>,
    mut one: impl FnMut(&DistArray<T>, &mut DistArray<T>) -> Result<(), RedistError>,
) -> Result<(), RedistError> {
    verdict?;
    arrays.pairs().try_for_each(|(src, dst)| one(src, dst))
}
