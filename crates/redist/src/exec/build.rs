//! Building a redistribution, step by step:
//!
//! 1. this rank's plan (its sends, receives and local part, from its own
//!    rows and columns of the 1-D plans) and, for `scheduled`, its steps —
//!    pure, no communication;
//! 2. the agreement: one all-reduce of every rank's verdict, a fingerprint
//!    of its arguments and a few figures (the most messages, partners and
//!    elements of any rank; whether any message moves; whether
//!    `MPI_Alltoallv`'s counts fit), so bad input gives the same error on
//!    every rank and every rank knows what it needs of the others;
//! 3. the strategy, from those figures alone (the same on every rank);
//! 4. this rank's copy programs and message routes — local;
//! 5. for `async`, which messages stay within the node and whether this
//!    rank can read the storage of the node's ranks it receives from (a
//!    probe each rank shows the node's ranks it sends to, point to point);
//! 6. a second all-reduce: every rank's verdict on steps 4 and 5, and
//!    whether every rank can use `MPI_Alltoallw` and node-direct copies.
//!
//! Nothing here holds or walks another rank's messages.

use super::combined::Combined;
use super::figures::{Figures, Words};
use super::messages::RankMessages;
use super::node_direct::NodeDirect;
use super::{agree, alltoallv, asynchronous, calibrate, machine, mpi_raw, route, scheduled};
use super::{Exchange, Redistribution};
use crate::tuning::CALIBRATE_MIN_BYTES;
use crate::{MinRun, Options, RankPlan, RedistError, Strategy, Window};
use dist_array::{Element, Layout};
use mpi::topology::Communicator;
use procgrid::ProcGrid;
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
    pub options: Options,
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

/// This rank's parts that need no other rank: its programs and routes,
/// and the other routes to try, if any ([`other_options`]).
type LocalParts = (RankMessages, route::Routes, Option<route::Routes>);

impl<T: Element> Redistribution<T> {
    /// Builds the redistribution `req` describes, after `verdict`, the
    /// caller's own check of the arguments on this rank. Collective.
    pub(super) fn build(
        outer: &Request<'_>,
        verdict: Result<(), RedistError>,
    ) -> Result<Self, RedistError> {
        const WHAT: &str = "building a redistribution";
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
        let ((plan, schedule), words): (_, Words) =
            agree::agree_with(comm, planned, fingerprint, WHAT)?;
        let figures = Figures::from_maxima(words);
        let mut strategy = strategy_for(req, &figures, std::mem::size_of::<T>())?;
        let elem = std::mem::size_of::<T>();
        let options = message_options(req, (&figures, &plan, elem), strategy);
        let other = other_options(req, (&figures, elem), strategy, &options);
        let parts = local_parts::<T>(&plan, (&options, other), strategy, outer.permutation);
        let mut plan = plan;
        let ((messages, routes, other), set_up) =
            set_up_exchange::<T>(req, (strategy, &figures), &mut plan, parts)?;
        let exchange = exchange_for(
            req,
            (&mut strategy, &figures),
            (&plan, &messages, routes, other),
            set_up,
        )?;
        let target = match outer.permutation {
            Some(p) => plan.target().select_axes(&inverse(p))?,
            None => plan.target().clone(),
        };
        Ok(Redistribution {
            target,
            target_axes: outer.permutation.map(<[usize]>::to_vec),
            updates: outer.options.updates,
            plan,
            schedule,
            figures,
            source_grid: req.source_grid.clone(),
            target_grid: req.target_grid.clone(),
            strategy,
            messages,
            exchange,
            batch: Default::default(),
            mixed: Default::default(),
            executions: 0,
        })
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

/// Sets up what the exchange of `strategy` needs beyond this rank's
/// `parts` (its programs and routes, or the error building them gave):
/// staging areas for `combined`, node-direct copies for `async` — then
/// lets go of the plan's runs and agrees, in a second all-reduce, on every
/// rank's verdict and on what every rank can use. Every rank takes part in
/// each step, whatever its own verdict. Collective.
fn set_up_exchange<T: Element>(
    req: &Request<'_>,
    (strategy, figures): (Strategy, &Figures),
    plan: &mut RankPlan,
    parts: Result<LocalParts, RedistError>,
) -> Result<(LocalParts, SetUp<T>), RedistError> {
    const WHAT: &str = "building a redistribution";
    let comm = req.source_grid.communicator();
    // Combined: where each message lies in the node's shared memory.
    let combined = (strategy == Strategy::Combined && figures.messages).then(|| {
        let node = req.source_grid.node();
        Combined::<T>::new(comm, node, plan, req.options.max_message_elements)
    });
    plan.release_runs();
    // Which messages stay within the node; each rank keeps its probe until
    // the ranks have agreed.
    let node =
        (strategy == Strategy::Async && req.options.node_direct && figures.messages).then(|| {
            let node = req.source_grid.node();
            NodeDirect::new(comm, node, plan, std::mem::size_of::<T>())
        });
    let all_typed = parts
        .as_ref()
        .is_ok_and(|(_, routes, _)| routes.all_typed());
    let differs = parts
        .as_ref()
        .is_ok_and(|(_, routes, other)| other.as_ref().is_some_and(|o| !o.same_as(routes)));
    let can_map = node.as_ref().is_none_or(|n| n.1);
    let can_stage = combined.as_ref().is_none_or(|c| c.1);
    let flags = [
        u64::from(!all_typed),
        u64::from(!can_map),
        u64::from(!can_stage),
        u64::from(differs),
    ];
    let agreed = agree::agree_with(comm, parts.map(|p| (p, flags)), 0, WHAT);
    let node = node.map(|(n, _, probe)| {
        drop(probe);
        n
    });
    let (parts, flags) = agreed?;
    let set_up = SetUp {
        node: node.filter(|_| flags[1] == 0),
        combined: combined.and_then(|c| c.0).filter(|_| flags[2] == 0),
        typed: flags[0] == 0,
        trial: flags[3] != 0,
    };
    Ok((parts, set_up))
}

/// What the ranks set up for the exchange, as they agreed: node-direct
/// copies (`async`), staging areas (`combined`), whether every rank
/// describes every message by datatypes (`alltoallv`), and whether the
/// first executions try other routes (`async`: some rank's differ).
struct SetUp<T> {
    node: Option<NodeDirect>,
    combined: Option<Combined<T>>,
    typed: bool,
    trial: bool,
}

/// The exchange of `strategy`, from what was set up; `combined` becomes
/// `async` (messages only) where nothing moves, or where `auto` chose it
/// and some rank cannot stage.
fn exchange_for<T: Element>(
    req: &Request<'_>,
    (strategy, figures): (&mut Strategy, &Figures),
    (plan, messages, routes, other): (
        &RankPlan,
        &RankMessages,
        route::Routes,
        Option<route::Routes>,
    ),
    set_up: SetUp<T>,
) -> Result<Exchange<T>, RedistError> {
    let comm = req.source_grid.communicator();
    Ok(match *strategy {
        Strategy::Alltoallv | Strategy::Auto => {
            // One MPI_Alltoallw over datatypes replaces the packed
            // MPI_Alltoallv only if every rank can use it. Counts fit
            // MPI's i32 (checked when the strategy was chosen).
            let size = usize::try_from(comm.size()).unwrap_or(0);
            Exchange::Alltoallv(alltoallv::Alltoallv::new(
                messages,
                routes,
                size,
                set_up.typed,
            )?)
        }
        Strategy::Scheduled => Exchange::Scheduled(scheduled::Scheduled::new(plan, routes)),
        Strategy::Async => {
            let other = other.filter(|_| set_up.trial);
            Exchange::Async(asynchronous::Async::new(routes, set_up.node, other))
        }
        Strategy::Combined => match set_up.combined {
            Some(c) => Exchange::Combined(c),
            None if !figures.messages || req.options.strategy == Strategy::Auto => {
                *strategy = Strategy::Async;
                Exchange::Async(asynchronous::Async::new(routes, None, None))
            }
            None => {
                return Err(RedistError::InvalidArgument {
                    what: "strategy",
                    value: "combined".to_string(),
                    expected: "a strategy that needs no shared memory: some rank could not \
                               make or map the staging areas of its node"
                        .to_string(),
                })
            }
        },
    })
}

/// The options messages are built with: `req`'s, but packing every message
/// where [`MinRun::Auto`] leaves datatypes to the communicator and its
/// measurement found them slower ([`calibrate::datatypes_pay`], collective
/// on the first redistribution with messages on the communicator that
/// would use them), or where `strategy` packs everything anyway
/// (`combined`), or where no rank moves [`CALIBRATE_MIN_BYTES`], or where
/// no rank has a message whose runs are long enough for a datatype (then
/// nothing is measured).
fn message_options(
    req: &Request<'_>,
    (figures, plan, elem_bytes): (&Figures, &RankPlan, usize),
    strategy: Strategy,
) -> Options {
    let auto = req.options.datatype_min_run == MinRun::Auto;
    let packing = Options {
        datatype_min_run: MinRun::Never,
        ..req.options
    };
    if !auto || !figures.messages {
        return req.options;
    }
    // Small exchanges pack without measuring: what datatypes could save
    // there is less than the measurement costs (once per communicator).
    let small = figures.max_volume.saturating_mul(elem_bytes) < CALIBRATE_MIN_BYTES;
    if strategy == Strategy::Combined || small {
        return packing;
    }
    if calibrate::known(req.source_grid).is_none() && !anyone_would_type(req, plan, elem_bytes) {
        // Every message would be packed whatever the measurement found:
        // one small all-reduce instead of the probe (milliseconds).
        return packing;
    }
    match calibrate::datatypes_pay(req.source_grid) {
        true => req.options,
        false => packing,
    }
}

/// The options of the routes the first executions of an `async`
/// redistribution try besides `chosen`'s (`asynchronous/trial.rs`):
/// packing every message where `chosen` would describe some by datatypes,
/// and the other way round — where [`MinRun::Auto`] leaves the choice to
/// measurement and some rank moves [`CALIBRATE_MIN_BYTES`] (below that,
/// what the better routes could save is less than trying the worse).
fn other_options(
    req: &Request<'_>,
    (figures, elem_bytes): (&Figures, usize),
    strategy: Strategy,
    chosen: &Options,
) -> Option<Options> {
    let small = figures.max_volume.saturating_mul(elem_bytes) < CALIBRATE_MIN_BYTES;
    let auto = req.options.datatype_min_run == MinRun::Auto;
    if !auto || !figures.messages || small || strategy != Strategy::Async {
        return None;
    }
    Some(match chosen.datatype_min_run {
        MinRun::Auto => Options {
            datatype_min_run: MinRun::Never,
            ..*chosen
        },
        _ => req.options,
    })
}

/// Whether some rank has a message that datatypes would describe, were
/// they found to pay ([`route::would_type`] on this rank's programs, built
/// for the question and dropped). Collective: every rank asks at the same
/// point (the figures and options it depends on are agreed, and whether
/// the verdict is known is the same on every rank of a communicator).
fn anyone_would_type(req: &Request<'_>, plan: &RankPlan, elem_bytes: usize) -> bool {
    let program = programs(plan, &req.options, elem_bytes, req.permutation);
    let mine = u8::from(route::would_type(&program, &req.options, elem_bytes));
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

/// A hash of everything that must be the same on every rank.
fn fingerprint<T>(req: &Request<'_>) -> u64 {
    agree::Fingerprint::new()
        .layout(req.source)
        .layout(req.target)
        .window(req.window)
        .grid(req.source_grid)
        .grid(req.target_grid)
        .options(&req.options)
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
    Ok(())
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
    let scheduled = req.options.strategy == Strategy::Scheduled;
    let schedule = scheduled.then(|| assign_steps(&mut plan)).transpose()?;
    Ok((plan, schedule))
}

/// The strategy to run, from the figures every rank has: `auto`'s choice
/// (`combined` where ranks span several nodes and messages are small, else
/// `async`), or the one asked for where it can run.
fn strategy_for(
    req: &Request<'_>,
    figures: &Figures,
    elem: usize,
) -> Result<Strategy, RedistError> {
    match req.options.strategy {
        Strategy::Auto if figures.messages && combines(req, figures, elem) => {
            Ok(Strategy::Combined)
        }
        // Never predicted slower than alltoallv (Strategy::Auto says why).
        Strategy::Auto => Ok(Strategy::Async),
        Strategy::Alltoallv if !figures.counts_fit => Err(RedistError::InvalidArgument {
            what: "strategy",
            value: "alltoallv".to_string(),
            expected: "scheduled or async: a rank exchanges more than 2^31-1 elements, \
                       which one MPI_Alltoallv cannot address"
                .to_string(),
        }),
        s => Ok(s),
    }
}

/// Whether `auto` combines the messages between nodes: the ranks span
/// several nodes (every rank sees it alike: the node's ranks are found from
/// every rank's key) and no message is larger than
/// [`COMBINED_MAX_MESSAGE_BYTES`](crate::tuning::COMBINED_MAX_MESSAGE_BYTES).
/// Collective the first time a communicator's nodes are asked for.
fn combines(req: &Request<'_>, figures: &Figures, elem: usize) -> bool {
    let small =
        figures.max_message.saturating_mul(elem) <= crate::tuning::COMBINED_MAX_MESSAGE_BYTES;
    let grid = req.source_grid;
    small && grid.node().ranks().len() < grid.communicator().size() as usize
}

/// This rank's copy programs and message routes for `strategy`, the
/// target's axes permuted as `target_axes` says (see [`RankProgram::new`]).
fn local_parts<T: Element>(
    plan: &RankPlan,
    (options, other): (&Options, Option<Options>),
    strategy: Strategy,
    target_axes: Option<&[usize]>,
) -> Result<LocalParts, RedistError> {
    let program = programs(plan, options, std::mem::size_of::<T>(), target_axes);
    let elem = mpi_raw::Datatype::element(std::mem::size_of::<T>())?;
    // Combined packs every message; its routes are async's, for where it
    // cannot run.
    let routes_for = match strategy {
        Strategy::Combined => Strategy::Async,
        s => s,
    };
    let routes = route::Routes::new(&program, options, routes_for, &elem)?;
    let other = match other {
        Some(o) => Some(route::Routes::new(&program, &o, routes_for, &elem)?),
        None => None,
    };
    Ok((RankMessages::new(program, elem), routes, other))
}

/// This rank's copy programs, for elements of `elem_bytes` bytes (the
/// target's axes permuted as `target_axes` says), on this rank's machine.
fn programs(
    plan: &RankPlan,
    options: &Options,
    elem_bytes: usize,
    target_axes: Option<&[usize]>,
) -> RankProgram {
    let machine = machine::this_machine();
    redist_plan::part::programs(plan, options.streaming, elem_bytes, target_axes, &machine)
}
