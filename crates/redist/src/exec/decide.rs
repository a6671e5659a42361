//! Every choice the engine makes about how a redistribution moves, here
//! and nowhere else, as pure functions of what the ranks agreed on: no
//! MPI, no environment, no clock. The same facts give the same choice on
//! every rank; the tests read as tables of cases.
//!
//! Building decides three times (the first, whether to give messages the
//! steps of a schedule, needs only the options: [`steps_through_schedule`]):
//!
//! 1. [`decide`], after the first all-reduce: the exchange, the options the
//!    messages are built with, whether node-direct copies and staging areas
//!    are set up, and the routes a trial would try. Some facts cost a
//!    collective to learn (which nodes the ranks are on; whether some rank
//!    has a message a datatype would describe; whether datatypes pay on
//!    the communicator), so `decide` asks for them one at a time
//!    ([`Step::Ask`]) and only where the answer matters; the caller learns
//!    each and asks again. Every rank asks the same questions in the same
//!    order, as each question follows from agreed facts.
//! 2. [`settle`], after the second all-reduce (what every rank could set
//!    up): the exchange that runs, `combined` falling back to `async` where
//!    some rank cannot stage.
//!
//! How messages are formed is part of the choice: [`packing`] turns the
//! options and the exchange into one [`Packing`] value, which the routes of
//! every message are cut from (`route.rs`) and which no exchange decides
//! again.
//!
//! Executing decides twice more, from figures agreed in the execution's
//! own all-reduce: how a batch of arrays moves ([`batch_way`]), and, on an
//! `async` exchange trying two kinds of routes, which to run next and when
//! to stop ([`route_trial`]).

use super::figures::Figures;
use crate::error::RedistError;
use crate::options::{MinRun, Options, Strategy};
use crate::tune::Measured;
use crate::tuning::{
    BATCH_ALONE_BYTES, BATCH_GROUP_BYTES, CALIBRATE_MIN_BYTES, COMBINED_MAX_MESSAGE_BYTES,
    ROUTE_TRIAL_CLEAR,
};

/// What the ranks know when building decides: the figures agreed in the
/// first all-reduce, the options asked for, the element size, and the
/// answers to the questions [`decide`] asked so far (`None`: not asked).
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    /// Maxima over every rank ([`Figures`]).
    pub figures: Figures,
    /// The options every rank passed.
    pub options: Options,
    /// Bytes of one element.
    pub elem_bytes: usize,
    /// Whether the ranks span several nodes ([`Question::SpansNodes`]).
    pub spans_nodes: Option<bool>,
    /// Whether some rank has a message a datatype would describe
    /// ([`Question::WouldType`]).
    pub would_type: Option<bool>,
    /// Whether datatypes pay on the communicator
    /// ([`Question::DatatypesPay`]); known without asking once measured.
    pub datatypes_pay: Option<bool>,
    /// A choice measured to be the fastest for this redistribution (the
    /// tuner's, [`Options::measured`], or a wisdom file's): `auto` runs it
    /// where it can run, instead of its rules, and tries no other routes.
    pub measured: Option<Measured>,
}

/// A fact [`decide`] needs that costs a collective to learn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Question {
    /// Whether the ranks span several nodes (the node's ranks are found
    /// from every rank's key: collective the first time).
    SpansNodes,
    /// Whether some rank has a message that datatypes would describe, were
    /// they found to pay (one small all-reduce, cheaper than the probe).
    WouldType,
    /// Whether datatypes pay on the communicator (the probe, milliseconds,
    /// once per communicator).
    DatatypesPay,
}

/// What [`decide`] gives: a question to answer first, or the choice.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Learn this fact, put it in [`Facts`] and decide again.
    Ask(Question),
    /// Everything is decided (boxed: a choice holds options, which hold
    /// ghost widths, and questions are asked more often).
    Chosen(Box<Choice>),
}

/// How a redistribution moves, as decided before its exchange is set up.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Choice {
    /// The exchange to set up (never `Auto`).
    pub strategy: Strategy,
    /// The options the messages' copy programs are built with.
    pub messages: Options,
    /// How the messages are formed: the one value their routes are cut
    /// from ([`packing`] of `messages` for the exchange).
    pub packing: Packing,
    /// For `async` under [`MinRun::Auto`]: how the first executions form
    /// the messages besides `packing` (the route trial).
    pub trial: Option<Packing>,
    /// Whether receivers of the node copy straight from senders' shared
    /// storage (`async` only).
    pub node_direct: bool,
    /// Whether the node's staging areas are set up (`combined` only).
    pub staging: bool,
}

/// The strategy the routes are built for: `strategy`, but `async`'s for
/// `combined`, which packs every message and keeps `async`'s routes for
/// where it cannot run.
fn routes_for(strategy: Strategy) -> Strategy {
    match strategy {
        Strategy::Combined => Strategy::Async,
        s => s,
    }
}

/// How the messages of a redistribution are formed: the one value every
/// message's route is cut from (`route.rs`, per message, by its runs), so
/// that no exchange decides it again. Messages are packed into buffers
/// unless a side's runs are long enough to describe it by a derived
/// datatype, or (`async`) to send it run by run from source storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Packing {
    /// Sides whose runs average at least this many elements are described
    /// by a derived datatype; `None`: every message is packed.
    pub typed_min_run: Option<usize>,
    /// Whether a sending side MPI sends more slowly typed than packed stays
    /// packed ([`MinRun::Auto`]: datatypes are the engine's call).
    pub packs_slow_typed_sends: bool,
    /// `async`: messages whose source runs average at least this many
    /// elements leave run by run from source storage; `None`: never.
    pub source_min_run: Option<usize>,
    /// How a packed message is cut into MPI messages.
    pub pieces: Pieces,
    /// The most elements of one MPI message.
    pub max_message_elements: usize,
    /// Whether executions update the target (then nothing is received
    /// straight into it).
    pub updates: bool,
    /// Bytes of one element.
    pub elem_bytes: usize,
}

/// How a packed message is cut into MPI messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pieces {
    /// `async`: pieces of whole outermost indices, each packed, sent and
    /// unpacked on its own, overlapping the three.
    Pipelined,
    /// Chunks of the most elements one MPI message takes.
    Chunks,
}

/// How messages are formed under `options` for routes of `strategy`
/// (`Choice::routes_for`'s: `combined` keeps `async`'s), elements of
/// `elem_bytes` bytes.
pub(crate) fn packing(options: &Options, strategy: Strategy, elem_bytes: usize) -> Packing {
    let pipelined = strategy == Strategy::Async;
    Packing {
        typed_min_run: options.min_typed_run(elem_bytes),
        packs_slow_typed_sends: options.datatype_min_run == MinRun::Auto,
        source_min_run: options.min_direct_run().filter(|_| pipelined),
        pieces: if pipelined {
            Pieces::Pipelined
        } else {
            Pieces::Chunks
        },
        max_message_elements: options.max_message_elements,
        updates: options.updates,
        elem_bytes,
    }
}

/// Decides how a redistribution moves from `facts`, or names the one
/// fact it needs first.
///
/// # Errors
///
/// [`RedistError::InvalidArgument`] for `alltoallv` where a rank exchanges
/// more than 2^31-1 elements (one `MPI_Alltoallv` cannot address them).
pub(crate) fn decide(facts: &Facts) -> Result<Step, RedistError> {
    let strategy = match strategy(facts)? {
        Ok(s) => s,
        Err(q) => return Ok(Step::Ask(q)),
    };
    let messages = match message_options(facts, strategy) {
        Ok(o) => o,
        Err(q) => return Ok(Step::Ask(q)),
    };
    let moves = facts.figures.messages;
    let routes_for = routes_for(strategy);
    let trial = trial_options(facts, strategy, &messages);
    let formed = packing(&messages, routes_for, facts.elem_bytes);
    Ok(Step::Chosen(Box::new(Choice {
        strategy,
        messages,
        packing: formed,
        trial: trial.map(|o| packing(&o, routes_for, facts.elem_bytes)),
        node_direct: strategy == Strategy::Async
            && facts.options.node_direct
            && measured(facts).is_none_or(|m| m.node_direct)
            && moves,
        staging: strategy == Strategy::Combined && moves,
    })))
}

/// Whether each rank's messages are given steps of a contention-free
/// schedule when its plan is made (before any figure is agreed): only
/// where `scheduled` is asked for by name, as `auto` never chooses it.
pub(crate) fn steps_through_schedule(options: &Options) -> bool {
    options.strategy == Strategy::Scheduled
}

/// The strategy: `auto`'s choice (`combined` where ranks span several
/// nodes and no message is larger than [`COMBINED_MAX_MESSAGE_BYTES`],
/// else `async`, never predicted slower than `alltoallv`: see
/// [`Strategy::Auto`]), or the one asked for where it can run.
fn strategy(facts: &Facts) -> Result<Result<Strategy, Question>, RedistError> {
    let f = &facts.figures;
    Ok(Ok(match facts.options.strategy {
        Strategy::Auto if f.messages && measured(facts).is_some() => {
            match measured(facts).map(|m| m.strategy) {
                Some(Strategy::Combined) if facts.spans_nodes.is_none() => {
                    return Ok(Err(Question::SpansNodes))
                }
                Some(s) => s,
                None => Strategy::Async,
            }
        }
        Strategy::Auto if f.messages => {
            let small =
                f.max_message.saturating_mul(facts.elem_bytes) <= COMBINED_MAX_MESSAGE_BYTES;
            match (small, facts.spans_nodes) {
                (false, _) | (true, Some(false)) => Strategy::Async,
                (true, Some(true)) => Strategy::Combined,
                (true, None) => return Ok(Err(Question::SpansNodes)),
            }
        }
        Strategy::Auto => Strategy::Async,
        Strategy::Alltoallv if !f.counts_fit => {
            return Err(RedistError::InvalidArgument {
                what: "strategy",
                value: "alltoallv".to_string(),
                expected: "scheduled or async: a rank exchanges more than 2^31-1 elements, \
                           which one MPI_Alltoallv cannot address"
                    .to_string(),
            })
        }
        s => s,
    }))
}

/// The measured choice `auto` runs: the one known, where it can run here
/// (`alltoallv` only where its counts fit; `combined` only across nodes,
/// once that is known to hold).
fn measured(facts: &Facts) -> Option<Measured> {
    let m = facts.measured?;
    let runs = match m.strategy {
        Strategy::Alltoallv => facts.figures.counts_fit,
        Strategy::Combined => facts.spans_nodes != Some(false),
        Strategy::Async => true,
        Strategy::Auto | Strategy::Scheduled => false,
    };
    (runs && facts.options.strategy == Strategy::Auto).then_some(m)
}

/// Whether some rank moves fewer than [`CALIBRATE_MIN_BYTES`] at most:
/// then what datatypes could save is less than measuring or trying them
/// costs.
fn small_exchange(facts: &Facts) -> bool {
    facts.figures.max_volume.saturating_mul(facts.elem_bytes) < CALIBRATE_MIN_BYTES
}

/// The options messages are built with: those asked for, but packing every
/// message where [`MinRun::Auto`] leaves datatypes to the communicator and
/// they were found not to pay, or where `strategy` packs everything anyway
/// (`combined`), or where the exchange is small, or where no rank has a
/// message a datatype would describe (then nothing is measured).
fn message_options(facts: &Facts, strategy: Strategy) -> Result<Options, Question> {
    let asked = facts.options.clone();
    if asked.datatype_min_run != MinRun::Auto || !facts.figures.messages {
        return Ok(asked);
    }
    let packing = Options {
        datatype_min_run: MinRun::Never,
        ..asked.clone()
    };
    if let Some(m) = measured(facts) {
        let chosen = match (m.typed && strategy != Strategy::Combined, m.min_run) {
            (true, None) => asked,
            // A threshold measured near auto's.
            (true, Some(n)) => Options {
                datatype_min_run: MinRun::Elements(n),
                ..asked
            },
            (false, _) => packing,
        };
        return Ok(match m.direct_run {
            Some(n) if chosen.direct_min_run == MinRun::Auto => Options {
                direct_min_run: MinRun::Elements(n),
                ..chosen
            },
            _ => chosen,
        });
    }
    if strategy == Strategy::Combined || small_exchange(facts) {
        return Ok(packing);
    }
    let pay = match (facts.datatypes_pay, facts.would_type) {
        (Some(pay), _) => pay,
        // Every message would be packed whatever the probe found: one small
        // all-reduce instead of the probe.
        (None, Some(false)) => false,
        (None, None) => return Err(Question::WouldType),
        (None, Some(true)) => return Err(Question::DatatypesPay),
    };
    Ok(if pay { asked } else { packing })
}

/// The options of the routes the first executions of an `async`
/// redistribution try besides `chosen`'s: packing every message where
/// `chosen` would describe some by datatypes, and the other way round —
/// where [`MinRun::Auto`] leaves the choice to measurement and the
/// exchange is not small.
fn trial_options(facts: &Facts, strategy: Strategy, chosen: &Options) -> Option<Options> {
    let auto = facts.options.datatype_min_run == MinRun::Auto;
    let known = measured(facts).is_some();
    if !auto || known || !facts.figures.messages || small_exchange(facts) {
        return None;
    }
    if strategy != Strategy::Async {
        return None;
    }
    Some(match chosen.datatype_min_run {
        MinRun::Auto => Options {
            datatype_min_run: MinRun::Never,
            ..chosen.clone()
        },
        _ => facts.options.clone(),
    })
}

/// What every rank could set up, as the second all-reduce found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SetUpFlags {
    /// Every rank describes every message by datatypes.
    pub all_typed: bool,
    /// Every rank can map the storage of the node's ranks it receives from.
    pub can_map: bool,
    /// Every rank could make and map its node's staging areas.
    pub can_stage: bool,
    /// Some rank's trial routes differ from the routes in use.
    pub differs: bool,
}

/// The exchange that runs, after set-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Settled {
    /// The strategy (never `Auto`).
    pub strategy: Strategy,
    /// `async`: receivers copy straight from shared sources of the node.
    pub node_direct: bool,
    /// `alltoallv`: one `MPI_Alltoallw` over datatypes, no buffers.
    pub typed: bool,
    /// `async`: the first executions try the other routes.
    pub trial: bool,
}

/// The exchange that runs, from `choice` and what every rank could set up
/// (`flags`): `combined` becomes `async` (messages only) where nothing
/// moves, or where `auto` chose it and some rank cannot stage.
///
/// # Errors
///
/// [`RedistError::InvalidArgument`] where `combined` was asked for and
/// some rank could not make or map its node's staging areas.
pub(crate) fn settle(
    choice: &Choice,
    asked: Strategy,
    flags: SetUpFlags,
) -> Result<Settled, RedistError> {
    let mut settled = Settled {
        strategy: choice.strategy,
        node_direct: choice.node_direct && flags.can_map,
        typed: flags.all_typed,
        trial: choice.trial.is_some() && flags.differs,
    };
    if choice.strategy == Strategy::Combined && !(choice.staging && flags.can_stage) {
        if choice.staging && asked != Strategy::Auto {
            return Err(RedistError::InvalidArgument {
                what: "strategy",
                value: "combined".to_string(),
                expected: "a strategy that needs no shared memory: some rank could not make or \
                           map the staging areas of its node"
                    .to_string(),
            });
        }
        settled = Settled {
            strategy: Strategy::Async,
            node_direct: false,
            typed: flags.all_typed,
            trial: false,
        };
    }
    Ok(settled)
}

/// How a batch of arrays moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BatchWay {
    /// Node-direct copies for all the arrays at once, and stacked messages
    /// for the rest (`async` with node-direct copies, every source shared).
    NodeDirect,
    /// Array by array through the exchange: each array's messages are long
    /// enough that latency no longer decides.
    OneByOne,
    /// Stacked messages in one `MPI_Alltoallv` per group of this many
    /// arrays (buffers of about [`BATCH_GROUP_BYTES`]).
    Stacked(usize),
}

/// How a batch of `k` arrays moves on an exchange settled as `settled`,
/// from figures agreed in the batch's all-reduce: the most bytes a rank
/// sends or receives per array, and whether some rank's source is private
/// (node-direct copies cannot read it).
pub(crate) fn batch_way(settled: &Settled, per_array: usize, private: bool, k: usize) -> BatchWay {
    if settled.strategy == Strategy::Async && settled.node_direct && !private {
        return BatchWay::NodeDirect;
    }
    let per_array = per_array.max(1);
    // Combined agrees on the verdict as it goes, array by array: a batch
    // agreed once moves stacked.
    if per_array >= BATCH_ALONE_BYTES && settled.strategy != Strategy::Combined {
        return BatchWay::OneByOne;
    }
    BatchWay::Stacked((BATCH_GROUP_BYTES / per_array).clamp(1, k.max(1)))
}

/// What an execution of a route trial does (`asynchronous/trial.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TrialStep {
    /// Run with the probe's routes (`false`) or the other ones (`true`).
    Try { other: bool },
    /// The trial is over: keep the other routes (`true`) or the probe's.
    Keep { other: bool },
}

/// The trial's step before execution `runs + 1` (counting from 0 the
/// executions timed so far): both ways run twice, in the order probe,
/// other, other, probe; after every four, the slowest rank's best times
/// (`slowest`, collective, called only then) are compared, and the faster
/// kept where it is [`ROUTE_TRIAL_CLEAR`] times faster, or after eight in
/// any case (a tie keeps the probe's).
pub(crate) fn route_trial(runs: u8, slowest: impl FnOnce() -> [f64; 2]) -> TrialStep {
    if runs > 0 && runs.is_multiple_of(4) {
        let [probe, other] = slowest();
        let (fast, slow) = (probe.min(other), probe.max(other));
        if runs >= 8 || slow > ROUTE_TRIAL_CLEAR * fast {
            return TrialStep::Keep {
                other: other < probe,
            };
        }
    }
    TrialStep::Try {
        other: matches!(runs % 4, 1 | 2),
    }
}

#[cfg(test)]
mod tests;
