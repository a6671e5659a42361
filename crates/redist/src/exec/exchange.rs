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

use super::arrays::Arrays;
use super::decide::BatchWay;
use super::messages::RankMessages;
use super::mixed::Pair;
use super::stacked::Stacked;
use crate::error::RedistError;
use dist_array::{DistArray, Element};
use mpi::topology::SimpleCommunicator;
use redist_plan::kernel::Store;

/// What an execution's errors say was being done.
pub(crate) const EXECUTING: &str = "executing a redistribution";

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
    ///
    /// As provided: stacked, or array by array through
    /// [`run_one`](Self::run_one), or through
    /// [`run_node_direct`](Self::run_node_direct), as `run.way` says.
    fn run<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        arrays: Arrays<'_, '_, T>,
        verdict: Result<(), RedistError>,
        run: Run<S>,
    ) -> Result<(), RedistError> {
        match run.way {
            BatchWay::Stacked(group) => {
                verdict?;
                (self.stacked()).run(messages, comm, arrays, group, run.store)
            }
            BatchWay::NodeDirect => {
                verdict?;
                self.run_node_direct(messages, comm, arrays, run.store)
            }
            BatchWay::OneByOne => one_by_one(arrays, verdict, |src, dst| {
                self.run_one(messages, comm, src, dst, run.store)
            }),
        }
    }

    /// Moves one array, `src` into `dst`, storing through `store`, the
    /// ranks' verdicts agreed before.
    ///
    /// # Errors
    ///
    /// MPI's errors; [`RedistError::OtherRank`] where the exchange agrees
    /// as it goes.
    fn run_one<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        store: S,
    ) -> Result<(), RedistError>;

    /// Moves a batch through node-direct copies all at once
    /// ([`BatchWay::NodeDirect`], which only an exchange that has them is
    /// handed).
    ///
    /// # Errors
    ///
    /// [`RedistError::Internal`], as provided: the exchange has none.
    fn run_node_direct<S: Store<T>>(
        &mut self,
        _messages: &RankMessages,
        _comm: &SimpleCommunicator,
        _arrays: Arrays<'_, '_, T>,
        _store: S,
    ) -> Result<(), RedistError> {
        Err(RedistError::Internal(
            "a node-direct batch on an exchange without node-direct copies".to_string(),
        ))
    }

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
