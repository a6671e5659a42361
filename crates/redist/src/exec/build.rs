//! Building a redistribution, step by step:
//!
//! 1. this rank's plan (its sends, receives and kept elements, from its
//!    own rows and columns of the 1-D plans) and, for `scheduled`, its
//!    steps — pure, no communication;
//! 2. the agreement: one all-reduce of every rank's verdict, a fingerprint
//!    of its arguments and a few figures (the most messages and elements
//!    of any rank; whether any message moves; whether `MPI_Alltoallv`'s
//!    counts fit), so bad input gives the same error on every rank and
//!    every rank knows what it needs of the others;
//! 3. the choice ([`decide::decide`]), from those figures and the facts it
//!    asks for (the same on every rank);
//! 4. this rank's copy programs and message routes — local;
//! 5. for `async`, which messages stay within the node and whether this
//!    rank can read the storage of the node's ranks it receives from (a
//!    probe each rank shows the node's ranks it sends to, point to point);
//!    for `combined`, the node's staging areas;
//! 6. a second all-reduce: every rank's verdict on steps 4 and 5, and what
//!    every rank could set up, from which [`decide::settle`] gives the
//!    exchange that runs.
//!
//! Nothing here holds or walks another rank's messages.

use super::alltoallv::Alltoallv;
use super::any_exchange::AnyExchange;
use super::asynchronous::Async;
use super::combined::Combined;
use super::decide::{self, Choice, Facts, Packing, Question, SetUpFlags, Settled, Step};
use super::figures::{Figures, Words};
use super::messages::RankMessages;
use super::node_direct::NodeDirect;
use super::scheduled::Scheduled;
use super::{agree, calibrate, machine, route};
use crate::error::RedistError;
use crate::options::{Options, Strategy};
use crate::tune::{
    self,
    file::Recalled,
    wisdom::{Kept, Key},
    Measured,
};
use dist_array::{Element, Layout};
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi_extras::Datatype;
use procgrid::ProcGrid;
use redist_plan::error::PlanError;
use redist_plan::padding::Padding;
use redist_plan::part::PartOptions;
use redist_plan::plan::{RankPlan, Window};
use redist_plan::program::RankProgram;
use redist_plan::schedule::{assign_steps, RankSchedule};

/// What building needs besides the layouts: the grids, the window, the
/// options, and the permutation of the axes (source dimension `d` is the
/// target's dimension `permutation[d]`), if any.
#[derive(Clone, Copy)]
pub(super) struct Request<'a> {
    pub source_grid: &'a ProcGrid,
    pub source: &'a Layout,
    pub target_grid: &'a ProcGrid,
    pub target: &'a Layout,
    pub window: &'a Window,
    pub options: &'a Options,
    pub permutation: Option<&'a [usize]>,
}

/// The target and window of a permuting request seen in the source's
/// axis order: dimension `d` of the target seen is the real target's
/// dimension `permutation[d]`, and so is the window's target origin. The
/// plan, the remapping and the schedule work on them as on any target of
/// the source's shape; only the copy programs write the real target's
/// storage ([`RankProgram::new`]).
fn seen_in_source_order(
    req: &Request<'_>,
    permutation: &[usize],
) -> Result<(Layout, Window), RedistError> {
    let k = req.source.ndim();
    let target = req
        .target
        .select_axes(permutation)
        .map_err(|_| RedistError::InvalidArgument {
            what: "permutation",
            value: format!("{permutation:?}"),
            expected: format!(
                "a permutation of 0..{k} with one entry per dimension of the target ({})",
                req.target.ndim()
            ),
        })?;
    if k != target.ndim() {
        return Err(RedistError::InvalidArgument {
            what: "permutation",
            value: format!("{permutation:?}"),
            expected: format!("one entry per dimension of the source ({k})"),
        });
    }
    let w = req.window;
    let picked: Option<Vec<usize>> = (permutation.iter())
        .map(|&a| w.target_origin().get(a).copied())
        .collect();
    let origin = match picked {
        Some(o) => o,
        None => w.target_origin().to_vec(), // the window's own check reports it
    };
    let window = Window::new(w.source_origin(), &origin, w.shape())?;
    Ok((target, window))
}

/// The inverse of `permutation`.
pub(super) fn inverse(permutation: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; permutation.len()];
    for (d, &a) in permutation.iter().enumerate() {
        if let Some(x) = inv.get_mut(a) {
            *x = d;
        }
    }
    inv
}

/// What this rank prepares alone once the exchange is chosen: its copy
/// programs with their buffer slots, its message routes, and the routes
/// a trial would try ([`Choice::trial`]), if any.
struct Prepared {
    messages: RankMessages,
    routes: route::Routes,
    other: Option<route::Routes>,
}

/// A redistribution as built: everything
/// [`Redistribution`](super::Redistribution) holds but its count of
/// executions.
pub(super) struct Built<T> {
    /// The target layout, with the rank map chosen, in the target's own
    /// axis order.
    pub target: Layout,
    /// The plan of this rank (its runs let go).
    pub plan: RankPlan,
    /// Its steps, for `scheduled`.
    pub schedule: Option<RankSchedule>,
    /// What every rank learnt of the others in the first all-reduce.
    pub figures: Figures,
    /// The exchange that runs, as settled after set-up.
    pub settled: Settled,
    /// This rank's copy programs and buffer slots.
    pub messages: RankMessages,
    /// The exchange set up.
    pub exchange: AnyExchange<T>,
    /// What building warned of (the same on every rank).
    pub warnings: Vec<String>,
    /// The measured choice the decision ran (the options' or the wisdom
    /// file's), where one did.
    pub measured: Option<Measured>,
}

/// Builds the redistribution `outer` describes, after `verdict`, the
/// caller's own check of the arguments on this rank. Collective.
pub(super) fn build<T: Element>(
    outer: &Request<'_>,
    verdict: Result<(), RedistError>,
) -> Result<Built<T>, RedistError> {
    const WHAT: &str = "building a redistribution";
    // The wisdom file the environment names counts as the options' own
    // (agreed with them).
    let resolved = Options {
        wisdom: tune::file::path(outer.options.wisdom.as_deref()),
        ..outer.options.clone()
    };
    let outer = &Request {
        options: &resolved,
        ..*outer
    };
    let comm = outer.source_grid.communicator();
    let me = usize::try_from(comm.rank()).unwrap_or(0);
    let verdict = verdict.and_then(|()| check_arguments(outer));
    let (seen, verdict) = seen_if_permuted(outer, verdict);
    let req = &Request {
        target: seen.as_ref().map_or(outer.target, |s| &s.0),
        window: seen.as_ref().map_or(outer.window, |s| &s.1),
        ..*outer
    };
    let planned = verdict
        .and_then(|()| plan_rank(req, me))
        .map(|(plan, schedule)| {
            let words = Figures::of(&plan);
            ((plan, schedule), words)
        });
    let fingerprint = fingerprint::<T>(outer);
    let ((mut plan, schedule), words): (_, Words) =
        agree::agree_with(comm, planned, fingerprint, WHAT)?;
    let figures = Figures::from_maxima(words);
    let (measured, warnings) = recall(outer, std::mem::size_of::<T>());
    let choice = choose(req, &plan, figures, std::mem::size_of::<T>(), measured)?;
    let prepared = prepare::<T>(&plan, &choice, outer.permutation);
    let (prepared, set_up) = set_up_exchange::<T>(req, &choice, &mut plan, prepared)?;
    let settled = decide::settle(&choice, req.options.strategy, set_up.flags)?;
    let (messages, exchange) = exchange_for(comm, &settled, &plan, prepared, set_up)?;
    let target = match outer.permutation {
        Some(p) => plan.target().select_axes(&inverse(p))?,
        None => plan.target().clone(),
    };
    Ok(Built {
        target,
        plan,
        schedule,
        figures,
        settled,
        messages,
        exchange,
        warnings,
        measured: measured.filter(|m| m.strategy == settled.strategy),
    })
}

/// The measured choice for `req`: the options', else (under `auto`) the
/// wisdom file's, if one is named — with the warning every rank gives when
/// the file has none for this case and machine. Collective where a wisdom
/// file is read (the options, the file's name among them, are agreed).
fn recall(req: &Request<'_>, elem_bytes: usize) -> (Option<Measured>, Vec<String>) {
    let o = req.options;
    if o.measured.is_some() || o.strategy != Strategy::Auto {
        return (o.measured, Vec::new());
    }
    let Some(path) = o.wisdom.as_deref() else {
        return (None, Vec::new());
    };
    let key = Key {
        case: tune::key::case(
            req.source,
            req.target,
            req.window,
            req.permutation,
            o,
            elem_bytes,
        ),
        machine: tune::key::machine(req.source_grid),
    };
    let comm = req.source_grid.communicator();
    let warn = |w: String| {
        if comm.rank() == 0 {
            eprintln!("ndcyclic: warning: {w}");
        }
        (None, vec![w])
    };
    match tune::file::recall(comm, path, &key) {
        Recalled::Found(Kept::Exchange(m)) => (Some(m), Vec::new()),
        Recalled::Found(other) => warn(format!(
            "wisdom file {}: its entry for this redistribution is not an exchange ({other}); untuned",
            path.display()
        )),
        Recalled::Warning(w) | Recalled::Absent(w) => warn(w),
    }
}

/// The choice of [`decide::decide`], each fact it asks for learnt in turn
/// (collective: every rank asks the same questions in the same order, as
/// each follows from agreed figures; whether the datatypes' verdict is
/// known already is the same on every rank of a communicator).
fn choose(
    req: &Request<'_>,
    plan: &RankPlan,
    figures: Figures,
    elem_bytes: usize,
    measured: Option<Measured>,
) -> Result<Choice, RedistError> {
    let grid = req.source_grid;
    let mut facts = Facts {
        figures,
        options: req.options.clone(),
        elem_bytes,
        spans_nodes: None,
        would_type: None,
        datatypes_pay: calibrate::known(grid),
        measured,
    };
    loop {
        match decide::decide(&facts)? {
            Step::Chosen(choice) => return Ok(*choice),
            Step::Ask(Question::SpansNodes) => {
                let size = usize::try_from(grid.communicator().size()).unwrap_or(0);
                facts.spans_nodes = Some(grid.node().ranks().len() < size);
            }
            Step::Ask(Question::WouldType) => {
                facts.would_type = Some(anyone_would_type(req, plan, elem_bytes));
            }
            Step::Ask(Question::DatatypesPay) => {
                facts.datatypes_pay = Some(calibrate::datatypes_pay(grid));
            }
        }
    }
}

/// With a permutation, the target and window seen in the source's axis
/// order ([`seen_in_source_order`]), or the error that leaves; with none,
/// nothing. `verdict` is this rank's verdict so far.
fn seen_if_permuted(
    req: &Request<'_>,
    verdict: Result<(), RedistError>,
) -> (Option<(Layout, Window)>, Result<(), RedistError>) {
    match (verdict, req.permutation) {
        (Ok(()), Some(p)) => match seen_in_source_order(req, p) {
            Ok(s) => (Some(s), Ok(())),
            Err(e) => (None, Err(e)),
        },
        (verdict, _) => (None, verdict),
    }
}

/// Sets up what the exchange `choice` names needs beyond this rank's
/// `prepared` programs and routes (or the error preparing them gave):
/// staging areas for `combined`, node-direct copies for `async` — then
/// lets go of the plan's runs and agrees, in a second all-reduce, on every
/// rank's verdict and on what every rank could set up. Every rank takes
/// part in each step, whatever its own verdict. Collective.
fn set_up_exchange<T: Element>(
    req: &Request<'_>,
    choice: &Choice,
    plan: &mut RankPlan,
    prepared: Result<Prepared, RedistError>,
) -> Result<(Prepared, SetUp<T>), RedistError> {
    const WHAT: &str = "building a redistribution";
    let comm = req.source_grid.communicator();
    // Combined: where each message lies in the node's shared memory.
    let combined = choice.staging.then(|| {
        let node = req.source_grid.node();
        Combined::<T>::new(comm, node, plan, req.options.max_message_elements)
    });
    plan.release_runs();
    // Which messages stay within the node; each rank keeps its probe until
    // the ranks have agreed.
    let node = choice.node_direct.then(|| {
        let node = req.source_grid.node();
        NodeDirect::new(
            comm,
            node,
            plan,
            &seen_padding(req),
            std::mem::size_of::<T>(),
        )
    });
    let all_typed = prepared.as_ref().is_ok_and(|p| p.routes.all_typed());
    let differs = prepared
        .as_ref()
        .is_ok_and(|p| p.other.as_ref().is_some_and(|o| !o.same_as(&p.routes)));
    let can_map = node.as_ref().is_none_or(|n| n.1);
    let can_stage = combined.as_ref().is_none_or(|c| c.1);
    let words = [
        u64::from(!all_typed),
        u64::from(!can_map),
        u64::from(!can_stage),
        u64::from(differs),
    ];
    let agreed = agree::agree_with(comm, prepared.map(|p| (p, words)), 0, WHAT);
    let node = node.map(|(n, _, probe)| {
        drop(probe);
        n
    });
    let (prepared, words) = agreed?;
    let flags = SetUpFlags {
        all_typed: words[0] == 0,
        can_map: words[1] == 0,
        can_stage: words[2] == 0,
        differs: words[3] != 0,
    };
    let set_up = SetUp {
        node: node.filter(|_| flags.can_map),
        combined: combined.and_then(|c| c.0).filter(|_| flags.can_stage),
        flags,
    };
    Ok((prepared, set_up))
}

/// What the ranks set up for the exchange, as they agreed: node-direct
/// copies (`async`), staging areas (`combined`), and what every rank could
/// set up ([`SetUpFlags`]).
struct SetUp<T> {
    node: Option<NodeDirect>,
    combined: Option<Combined<T>>,
    flags: SetUpFlags,
}

/// The exchange `settled` names, from what was set up, with the messages
/// it moves.
fn exchange_for<T: Element>(
    comm: &SimpleCommunicator,
    settled: &Settled,
    plan: &RankPlan,
    prepared: Prepared,
    set_up: SetUp<T>,
) -> Result<(RankMessages, AnyExchange<T>), RedistError> {
    let Prepared {
        messages,
        routes,
        other,
    } = prepared;
    let exchange = match (settled.strategy, set_up.combined) {
        (Strategy::Combined, Some(c)) => AnyExchange::Combined(c),
        (Strategy::Alltoallv, _) => {
            // One MPI_Alltoallw over datatypes replaces the packed
            // MPI_Alltoallv only if every rank can use it. Counts fit
            // MPI's i32 (checked when the strategy was chosen).
            let size = usize::try_from(comm.size()).unwrap_or(0);
            AnyExchange::Alltoallv(Alltoallv::new(&messages, routes, size, settled.typed)?)
        }
        (Strategy::Scheduled, _) => AnyExchange::Scheduled(Scheduled::new(plan, routes)),
        (Strategy::Async, _) => {
            let other = other.filter(|_| settled.trial);
            let node = set_up.node.filter(|_| settled.node_direct);
            AnyExchange::Async(Async::new(routes, node, other))
        }
        (s, _) => {
            return Err(RedistError::Internal(format!(
                "an exchange settled as {s} without what it needs set up"
            )))
        }
    };
    Ok((messages, exchange))
}

/// Whether some rank has a message that datatypes would describe, were
/// they found to pay ([`route::would_type`] on this rank's programs, built
/// for the question and dropped). Collective: every rank asks at the same
/// point ([`choose`]).
fn anyone_would_type(req: &Request<'_>, plan: &RankPlan, elem_bytes: usize) -> bool {
    // The plan was just built and holds its runs, so the programs are
    // built; were they not, this rank would answer "no" and still join.
    let mine = u8::from(
        programs(plan, req.options, elem_bytes, req.permutation)
            .is_ok_and(|program| route::would_type(&program, &asked_packing(req, elem_bytes))),
    );
    let mut anyone = 0u8;
    let comm = req.source_grid.communicator();
    procgrid::waits::all_reduce_into(
        comm,
        &mine,
        &mut anyone,
        mpi::collective::SystemOperation::max(),
    );
    anyone != 0
}

/// How the asked options would form messages, datatypes taken to pay
/// (whether a side is typed does not depend on the exchange: any will do).
fn asked_packing(req: &Request<'_>, elem_bytes: usize) -> Packing {
    decide::packing(req.options, Strategy::Async, elem_bytes)
}

/// A hash of everything that must be the same on every rank.
fn fingerprint<T>(req: &Request<'_>) -> u64 {
    agree::Fingerprint::new()
        .layout(req.source)
        .layout(req.target)
        .window(req.window)
        .grid(req.source_grid)
        .grid(req.target_grid)
        .options(req.options)
        .numbers(req.permutation.unwrap_or(&[]))
        .number(std::mem::size_of::<T>() as u64)
        .value()
}

/// What can be wrong with the arguments on this rank alone.
fn check_arguments(req: &Request<'_>) -> Result<(), RedistError> {
    if !req.source_grid.shares_communicator(req.target_grid) {
        return Err(RedistError::InvalidArgument {
            what: "grids",
            value: format!("{} and {}", req.source_grid, req.target_grid),
            expected: "two grids over one communicator (GridBuilder::build_sharing)".to_string(),
        });
    }
    for (grid, layout) in [(req.source_grid, req.source), (req.target_grid, req.target)] {
        if grid.extents() != layout.grid_extents() {
            return Err(dist_array::DistError::GridMismatch {
                layout_grid: layout.grid_extents().to_vec(),
                grid: grid.extents().to_vec(),
            }
            .into());
        }
    }
    let max = req.options.max_message_elements;
    if max == 0 || max > i32::MAX as usize {
        return Err(RedistError::InvalidArgument {
            what: "max_message_elements",
            value: max.to_string(),
            expected: format!("1..={}", i32::MAX),
        });
    }
    req.options.padding.check(req.source, req.target)?;
    Ok(())
}

/// The padding of `req`'s arrays as the plan sees them: the target's
/// widths in the source's axis order where the axes are permuted.
fn seen_padding(req: &Request<'_>) -> Padding {
    let padding = &req.options.padding;
    match req.permutation {
        Some(p) => padding.target_seen(p),
        None => padding.clone(),
    }
}

/// This rank's plan, with the target's rank map as remapping chooses it
/// (the same on every rank; `redist_plan::part::plan_rank`), and its steps
/// when the strategy steps through a schedule. Pure.
fn plan_rank(
    req: &Request<'_>,
    me: usize,
) -> Result<(RankPlan, Option<RankSchedule>), RedistError> {
    let (source, target, window) = (req.source, req.target, req.window);
    let (mut plan, _) =
        redist_plan::part::plan_rank(source, target, window, req.options.remap, me)?;
    let steps = decide::steps_through_schedule(req.options);
    let schedule = steps.then(|| assign_steps(&mut plan)).transpose()?;
    Ok((plan, schedule))
}

/// This rank's copy programs and message routes for `choice`, the
/// target's axes permuted as `target_axes` says (see [`RankProgram::new`]).
fn prepare<T: Element>(
    plan: &RankPlan,
    choice: &Choice,
    target_axes: Option<&[usize]>,
) -> Result<Prepared, RedistError> {
    let elem_bytes = std::mem::size_of::<T>();
    let program = programs(plan, &choice.messages, elem_bytes, target_axes)?;
    let elem = Datatype::element(elem_bytes)?;
    let routes = route::Routes::new(&program, &choice.packing, &elem)?;
    let other = match &choice.trial {
        Some(packing) => Some(route::Routes::new(&program, packing, &elem)?),
        None => None,
    };
    Ok(Prepared {
        messages: RankMessages::new(program, elem),
        routes,
        other,
    })
}

/// This rank's copy programs, for elements of `elem_bytes` bytes (the
/// target's axes permuted as `target_axes` says), on this rank's machine.
fn programs(
    plan: &RankPlan,
    options: &Options,
    elem_bytes: usize,
    target_axes: Option<&[usize]>,
) -> Result<RankProgram, PlanError> {
    let machine = machine::this_machine();
    let part = PartOptions {
        remap: options.remap,
        streaming: options.streaming,
        padding: options.padding.clone(),
    };
    redist_plan::part::programs(plan, &part, elem_bytes, target_axes, &machine)
}
