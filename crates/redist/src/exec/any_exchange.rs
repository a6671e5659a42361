//! The exchange a redistribution set up: any of the four behind one enum
//! ([`AnyExchange`]), which implements [`Exchange`] by handing each call
//! to the exchange it holds.

use super::alltoallv::Alltoallv;
use super::arrays::Arrays;
use super::asynchronous::Async;
use super::combined::Combined;
use super::exchange::{Exchange, Run};
use super::messages::RankMessages;
use super::scheduled::Scheduled;
use super::stacked::Stacked;
use crate::error::RedistError;
use dist_array::{DistArray, Element};
use mpi::topology::SimpleCommunicator;
use redist_plan::kernel::Store;

/// The exchange a redistribution set up, with its buffers and state (one
/// per redistribution, so the variants' sizes do not matter).
#[allow(
    clippy::large_enum_variant,
    reason = "one per redistribution: boxing a variant would only add an indirection"
)]
pub(crate) enum AnyExchange<T> {
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
            AnyExchange::Alltoallv($x) => $body,
            AnyExchange::Scheduled($x) => $body,
            AnyExchange::Async($x) => $body,
            AnyExchange::Combined($x) => $body,
        }
    };
}

impl<T: Element> Exchange<T> for AnyExchange<T> {
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

    fn run_one<S: Store<T>>(
        &mut self,
        messages: &RankMessages,
        comm: &SimpleCommunicator,
        src: &DistArray<T>,
        dst: &mut DistArray<T>,
        store: S,
    ) -> Result<(), RedistError> {
        each!(self, x => x.run_one(messages, comm, src, dst, store))
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
