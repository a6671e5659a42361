//! The decision as a table of cases: facts in, questions asked and choice
//! out.

use super::*;
use crate::options::Strategy::{Alltoallv, Async, Auto, Combined, Scheduled};

const KIB: usize = 1 << 10;

/// Figures of an exchange whose largest rank moves `volume` elements, in
/// messages of at most `message` elements.
fn figures(volume: usize, message: usize) -> Figures {
    Figures {
        max_degree: 3,
        max_volume: volume,
        messages: volume > 0,
        counts_fit: true,
        max_message: message,
    }
}

/// The answers a communicator gives to [`Question`]s.
#[derive(Clone, Copy)]
struct World {
    spans_nodes: bool,
    would_type: bool,
    datatypes_pay: bool,
}

const ONE_NODE: World = World {
    spans_nodes: false,
    would_type: true,
    datatypes_pay: true,
};

/// Decides as building does, answering each question from `world`: the
/// questions asked, in order, and the choice.
fn run(
    options: Options,
    figures: Figures,
    world: World,
) -> Result<(Vec<Question>, Choice), RedistError> {
    run_measured(options, figures, world, None)
}

/// As [`run`], with a measured choice among the facts.
fn run_measured(
    options: Options,
    figures: Figures,
    world: World,
    options_measured: Option<Measured>,
) -> Result<(Vec<Question>, Choice), RedistError> {
    let mut facts = Facts {
        figures,
        options,
        elem_bytes: 8,
        spans_nodes: None,
        would_type: None,
        datatypes_pay: None,
        measured: options_measured,
    };
    let mut asked = Vec::new();
    loop {
        match decide(&facts)? {
            Step::Chosen(c) => return Ok((asked, *c)),
            Step::Ask(q) => {
                assert!(!asked.contains(&q), "{q:?} asked twice");
                asked.push(q);
                match q {
                    Question::SpansNodes => facts.spans_nodes = Some(world.spans_nodes),
                    Question::WouldType => facts.would_type = Some(world.would_type),
                    Question::DatatypesPay => facts.datatypes_pay = Some(world.datatypes_pay),
                }
            }
        }
    }
}

fn with(strategy: Strategy, min_run: MinRun) -> Options {
    Options {
        strategy,
        datatype_min_run: min_run,
        ..Options::default()
    }
}

const PACK: MinRun = MinRun::Never;

/// One row: options, figures (volume and largest message, in 8-byte
/// elements), world; then the questions asked, the strategy, whether the
/// messages' options pack everything, whether a trial is set up,
/// node-direct copies, staging.
type Row = (
    Options,
    (usize, usize),
    World,
    &'static [Question],
    Strategy,
    bool,
    bool,
    bool,
    bool,
);

#[test]
fn the_table_of_choices() {
    use Question::{DatatypesPay as Pay, SpansNodes as Nodes, WouldType as Would};
    let auto = with(Auto, MinRun::Auto);
    let nodes = World {
        spans_nodes: true,
        ..ONE_NODE
    };
    let untyped = World {
        would_type: false,
        ..ONE_NODE
    };
    let slow_types = World {
        datatypes_pay: false,
        ..ONE_NODE
    };
    let big = 1 << 20; // 8 MiB per rank
    let small = 1 << 10; // 8 KiB per rank: below the probe's worth
    #[rustfmt::skip]
    let rows: &[Row] = &[
        // auto, one node, large: async, probe asked after the cheap question.
        (auto.clone(), (big, big / 4), ONE_NODE, &[Would, Pay], Async, false, true, true, false),
        // Small messages: is the job on several nodes? On one: async, packed, no trial.
        (auto.clone(), (small, small / 4), ONE_NODE, &[Nodes], Async, true, false, true, false),
        // On several: combined, packed, staging, no node-direct copies.
        (auto.clone(), (small, small / 4), nodes, &[Nodes], Combined, true, false, false, true),
        // Messages too large to combine: the nodes are never asked.
        (auto.clone(), (big, 9 * KIB), nodes, &[Would, Pay], Async, false, true, true, false),
        // No rank would type: no probe, packed; the trial still tries the asked options.
        (auto.clone(), (big, big), untyped, &[Would], Async, true, true, true, false),
        // Datatypes do not pay: packed, the trial tries them.
        (auto.clone(), (big, big), slow_types, &[Would, Pay], Async, true, true, true, false),
        // Nothing moves: nothing asked, async with nothing set up.
        (auto.clone(), (0, 0), nodes, &[], Async, false, false, false, false),
        // Options that leave nothing to measure ask nothing.
        (with(Auto, PACK), (big, big), ONE_NODE, &[], Async, true, false, true, false),
        (with(Alltoallv, MinRun::Auto), (big, big), ONE_NODE, &[Would, Pay], Alltoallv, false, false, false, false),
        (with(Scheduled, MinRun::Auto), (small, small), ONE_NODE, &[], Scheduled, true, false, false, false),
        // Combined asked for packs everything, without asking.
        (with(Combined, MinRun::Auto), (big, big), ONE_NODE, &[], Combined, true, false, false, true),
        (with(Async, PACK), (big, big), ONE_NODE, &[], Async, true, false, true, false),
    ];
    for (i, (options, (volume, message), world, asked, s, packs, trial, direct, stage)) in
        rows.iter().cloned().enumerate()
    {
        let (questions, c) = run(options, figures(volume, message), world).unwrap();
        let packed = c.messages.datatype_min_run == PACK;
        // The packing the routes are cut from is the messages' options'.
        assert_eq!(c.packing.typed_min_run.is_none(), packed, "row {i}");
        let got = (questions.as_slice(), c.strategy, packed, c.trial.is_some());
        assert_eq!(got, (asked, s, packs, trial), "row {i}");
        assert_eq!((c.node_direct, c.staging), (direct, stage), "row {i}");
        // The trial tries the other way of routing than the messages'.
        if let Some(t) = c.trial {
            assert_ne!(t.typed_min_run.is_none(), packed, "row {i}");
        }
    }
}

#[test]
fn a_known_probe_is_not_asked_again() {
    let facts = Facts {
        figures: figures(1 << 20, 1 << 20),
        options: Options::default(),
        elem_bytes: 8,
        spans_nodes: None,
        would_type: None,
        datatypes_pay: Some(false),
        measured: None,
    };
    let Step::Chosen(c) = decide(&facts).unwrap() else {
        panic!("asked a known fact")
    };
    assert_eq!(c.messages.datatype_min_run, PACK);
}

#[test]
fn node_direct_follows_the_option() {
    let options = Options {
        node_direct: false,
        ..Options::default()
    };
    let (_, c) = run(options, figures(1 << 20, 1 << 18), ONE_NODE).unwrap();
    assert!(!c.node_direct);
}

#[test]
fn alltoallv_whose_counts_do_not_fit_is_refused() {
    let mut f = figures(1 << 20, 1 << 20);
    f.counts_fit = false;
    let e = run(with(Alltoallv, PACK), f, ONE_NODE).unwrap_err();
    assert!(e.to_string().contains("2^31-1"), "{e}");
    // Other strategies need no such counts.
    assert!(run(with(Scheduled, PACK), f, ONE_NODE).is_ok());
}

fn flags(all_typed: bool, can_map: bool, can_stage: bool, differs: bool) -> SetUpFlags {
    SetUpFlags {
        all_typed,
        can_map,
        can_stage,
        differs,
    }
}

#[test]
fn settling_follows_what_every_rank_could_set_up() {
    let big = figures(1 << 20, 1 << 18);
    let (_, a) = run(Options::default(), big, ONE_NODE).unwrap();
    let s = settle(&a, Auto, flags(false, true, true, true)).unwrap();
    assert_eq!((s.strategy, s.node_direct, s.trial), (Async, true, true));
    // One rank cannot map: nobody copies node-direct. No rank's routes differ: no trial.
    let s = settle(&a, Auto, flags(false, false, true, false)).unwrap();
    assert_eq!((s.node_direct, s.trial), (false, false));
    // alltoallv runs typed only where every rank types every message.
    let (_, v) = run(with(Alltoallv, MinRun::Auto), big, ONE_NODE).unwrap();
    assert!(
        settle(&v, Alltoallv, flags(true, true, true, false))
            .unwrap()
            .typed
    );
    assert!(
        !settle(&v, Alltoallv, flags(false, true, true, false))
            .unwrap()
            .typed
    );
}

#[test]
fn combined_falls_back_to_async_only_where_auto_chose_it() {
    let small = figures(1 << 10, 1 << 8);
    let nodes = World {
        spans_nodes: true,
        ..ONE_NODE
    };
    let (_, c) = run(Options::default(), small, nodes).unwrap();
    assert_eq!(c.strategy, Combined);
    let ok = settle(&c, Auto, flags(false, true, true, false)).unwrap();
    assert_eq!(ok.strategy, Combined);
    let fallen = settle(&c, Auto, flags(false, true, false, false)).unwrap();
    assert_eq!(
        (fallen.strategy, fallen.node_direct, fallen.trial),
        (Async, false, false)
    );
    // Asked for by name, a rank that cannot stage is an error on every rank.
    let (_, c) = run(with(Combined, PACK), small, nodes).unwrap();
    let e = settle(&c, Combined, flags(false, true, false, false)).unwrap_err();
    assert!(e.to_string().contains("shared memory"), "{e}");
    // Where nothing moves there is nothing to stage: async, no error.
    let (_, c) = run(with(Combined, PACK), figures(0, 0), nodes).unwrap();
    let s = settle(&c, Combined, flags(false, true, false, false)).unwrap();
    assert_eq!(s.strategy, Async);
}

#[test]
fn the_table_of_batch_ways() {
    let settled = |strategy, node_direct| Settled {
        strategy,
        node_direct,
        typed: false,
        trial: false,
    };
    let direct = settled(Async, true);
    let plain = settled(Async, false);
    let group = BATCH_GROUP_BYTES;
    #[rustfmt::skip]
    let rows: &[(Settled, usize, bool, usize, BatchWay)] = &[
        // Shared sources under node-direct copies: one exchange, whatever the size.
        (direct, 1 << 30, false, 5, BatchWay::NodeDirect),
        // A private source: as without node-direct copies.
        (direct, BATCH_ALONE_BYTES, true, 5, BatchWay::OneByOne),
        (plain, BATCH_ALONE_BYTES, false, 5, BatchWay::OneByOne),
        (settled(Scheduled, false), 1 << 20, false, 5, BatchWay::OneByOne),
        // Small arrays: stacked, groups of about BATCH_GROUP_BYTES, at most k.
        (plain, BATCH_ALONE_BYTES - 1, false, 1000, BatchWay::Stacked(group / (BATCH_ALONE_BYTES - 1))),
        (plain, 8, false, 5, BatchWay::Stacked(5)),
        (plain, 0, false, 5, BatchWay::Stacked(5)),
        // Combined agrees as it goes: a batch agreed once moves stacked, even large.
        (settled(Combined, false), 1 << 30, false, 4, BatchWay::Stacked(1)),
        (settled(Alltoallv, false), 1 << 30, false, 4, BatchWay::OneByOne),
    ];
    for (i, &(s, per_array, private, k, way)) in rows.iter().enumerate() {
        assert_eq!(batch_way(&s, per_array, private, k), way, "row {i}");
    }
}

/// Runs a route trial on one rank whose executions take `time(other)`
/// seconds: the routes each execution ran (`true`: the other ones) up to
/// the verdict, and the verdict.
fn trial(time: impl Fn(bool) -> f64) -> (Vec<bool>, bool) {
    let (mut runs, mut ran, mut best) = (0u8, Vec::new(), [f64::INFINITY; 2]);
    loop {
        match route_trial(runs, || best) {
            TrialStep::Keep { other } => return (ran, other),
            TrialStep::Try { other } => {
                let b = &mut best[usize::from(other)];
                *b = b.min(time(other));
                ran.push(other);
                runs += 1;
            }
        }
        assert!(runs <= 8, "the trial did not end");
    }
}

#[test]
fn the_table_of_route_trials() {
    let clear = 1.1 * ROUTE_TRIAL_CLEAR;
    let close = 0.9 * ROUTE_TRIAL_CLEAR;
    let (f, t) = (false, true);
    #[rustfmt::skip]
    let rows: &[(f64, f64, &[bool], bool)] = &[
        // probe time, other time: the routes run, the routes kept.
        (clear, 1.0, &[f, t, t, f], t),
        (1.0, clear, &[f, t, t, f], f),
        (close, 1.0, &[f, t, t, f, f, t, t, f], t),
        (1.0, close, &[f, t, t, f, f, t, t, f], f),
        (1.0, 1.0, &[f, t, t, f, f, t, t, f], f),
    ];
    for (i, &(probe, other, ran, kept)) in rows.iter().enumerate() {
        let got = trial(|o| if o { other } else { probe });
        assert_eq!(got, (ran.to_vec(), kept), "row {i}");
    }
}

/// How messages are formed, by the options and the exchange the routes are
/// built for: datatypes from the asked minimum run, source runs and
/// pipelined pieces for `async` only.
#[test]
fn packing_is_one_value_from_the_options_and_the_exchange() {
    use super::{packing, Pieces};
    let elements = |n| Options {
        datatype_min_run: MinRun::Elements(n),
        ..Options::default()
    };
    let never = Options {
        datatype_min_run: MinRun::Never,
        direct_min_run: MinRun::Never,
        ..Options::default()
    };
    let updating = Options {
        updates: true,
        ..Options::default()
    };
    let auto_run = crate::tuning::DATATYPE_MIN_RUN_BYTES.div_ceil(8);
    let direct = crate::tuning::DIRECT_MIN_RUN;
    /// What a packing is expected to hold: typed min run, slow typed
    /// sends packed, source runs, pieces, updates.
    type Expected = (Option<usize>, bool, Option<usize>, Pieces, bool);
    #[rustfmt::skip]
    let rows: [(Options, Strategy, Expected); 6] = [
        // options, routes for: typed min run, slow typed sends packed, source runs, pieces, updates
        (Options::default(), Async, (Some(auto_run), true, Some(direct), Pieces::Pipelined, false)),
        (Options::default(), Alltoallv, (Some(auto_run), true, None, Pieces::Chunks, false)),
        (Options::default(), Scheduled, (Some(auto_run), true, None, Pieces::Chunks, false)),
        (elements(3), Async, (Some(3), false, Some(direct), Pieces::Pipelined, false)),
        (never, Async, (None, false, None, Pieces::Pipelined, false)),
        (updating, Async, (Some(auto_run), true, Some(direct), Pieces::Pipelined, true)),
    ];
    for (i, (options, strategy, expected)) in rows.iter().enumerate() {
        let p = packing(options, *strategy, 8);
        let got = (
            p.typed_min_run,
            p.packs_slow_typed_sends,
            p.source_min_run,
            p.pieces,
            p.updates,
        );
        assert_eq!(got, *expected, "row {i}");
        assert_eq!(
            (p.max_message_elements, p.elem_bytes),
            (options.max_message_elements, 8)
        );
    }
}

/// One row of the measured choices' table: options, figures, world, the
/// measured choice; then the questions asked, the strategy, whether the
/// messages are packed, whether a trial is set up, node-direct copies.
type MeasuredRow = (
    Options,
    Figures,
    World,
    Option<Measured>,
    &'static [Question],
    Strategy,
    bool,
    bool,
    bool,
);

/// A measured choice, as `"strategy,routes,node"`.
fn m(s: &str) -> Option<Measured> {
    Some(s.parse().unwrap())
}

#[test]
fn a_measured_choice_is_run_where_it_can_run_and_nothing_else_is_tried() {
    let big = figures(1 << 20, 1 << 18);
    let small = figures(1 << 10, 1 << 10);
    let across = World {
        spans_nodes: true,
        ..ONE_NODE
    };
    let no_fit = Figures {
        counts_fit: false,
        ..big
    };
    let auto = Options::default;
    // options, figures, world, measured; then the questions asked, the
    // strategy, whether messages are packed, trial, node-direct.
    #[rustfmt::skip]
    let rows: Vec<MeasuredRow> = vec![
        // The rules: probe, trial, node-direct.
        (auto(), big, ONE_NODE, None, &[Question::WouldType, Question::DatatypesPay], Async, false, true, true),
        // Measured: no probe, no trial, its routes and node copies.
        (auto(), big, ONE_NODE, m("async,packed,node-direct"), &[], Async, true, false, true),
        (auto(), big, ONE_NODE, m("async,typed,messages"), &[], Async, false, false, false),
        (auto(), big, ONE_NODE, m("alltoallv,packed,messages"), &[], Alltoallv, true, false, false),
        (auto(), big, ONE_NODE, m("alltoallv,typed,node-direct"), &[], Alltoallv, false, false, false),
        // alltoallv where its counts do not fit: the rules instead.
        (auto(), no_fit, ONE_NODE, m("alltoallv,packed,messages"), &[Question::WouldType, Question::DatatypesPay], Async, false, true, true),
        // combined only across nodes, packed always.
        (auto(), small, across, m("combined,typed,messages"), &[Question::SpansNodes], Combined, true, false, false),
        (auto(), big, ONE_NODE, m("combined,packed,messages"), &[Question::SpansNodes, Question::WouldType, Question::DatatypesPay], Async, false, true, true),
        // A strategy asked for by name wins over what was measured.
        (with(Alltoallv, MinRun::Auto), big, ONE_NODE, m("async,packed,node-direct"), &[Question::WouldType, Question::DatatypesPay], Alltoallv, false, false, false),
        (with(Scheduled, PACK), big, ONE_NODE, m("async,typed,node-direct"), &[], Scheduled, true, false, false),
        // Datatypes asked for by name or refused: the option holds.
        (with(Auto, PACK), big, ONE_NODE, m("async,typed,node-direct"), &[], Async, true, false, true),
        // node_direct off in the options stays off.
        (Options { node_direct: false, ..auto() }, big, ONE_NODE, m("async,packed,node-direct"), &[], Async, true, false, false),
    ];
    for (i, (options, figures, world, known, asked, s, packs, trial, direct)) in
        rows.into_iter().enumerate()
    {
        let (questions, c) = run_measured(options, figures, world, known).unwrap();
        let packed = c.messages.datatype_min_run == PACK;
        let got = (
            questions.as_slice(),
            c.strategy,
            packed,
            c.trial.is_some(),
            c.node_direct,
        );
        assert_eq!(got, (asked, s, packs, trial, direct), "row {i}");
    }
}

#[test]
fn measured_thresholds_are_the_options_thresholds() {
    let big = figures(1 << 20, 1 << 18);
    // measured choice; the threshold the messages are built with
    let rows = [
        ("async,typed,messages", MinRun::Auto),
        ("async,typed(8),messages", MinRun::Elements(8)),
        ("async,typed(300),node-direct", MinRun::Elements(300)),
        ("async,packed,messages", PACK),
        ("alltoallv,typed(2),messages", MinRun::Elements(2)),
    ];
    for (known, threshold) in rows {
        let (questions, c) = run_measured(Options::default(), big, ONE_NODE, m(known)).unwrap();
        assert!(questions.is_empty(), "{known}");
        assert_eq!(c.messages.datatype_min_run, threshold, "{known}");
        assert_eq!(c.messages.direct_min_run, MinRun::Auto, "{known}");
        assert!(c.trial.is_none(), "{known}");
    }
    // The direct-send threshold: measured where the options leave it to
    // auto; asked for by name, it holds.
    let rows = [
        (
            MinRun::Auto,
            "async,packed,messages,direct(2048)",
            MinRun::Elements(2048),
        ),
        (
            MinRun::Auto,
            "async,typed(8),messages,direct(8192)",
            MinRun::Elements(8192),
        ),
        (
            MinRun::Never,
            "async,packed,messages,direct(2048)",
            MinRun::Never,
        ),
        (
            MinRun::Elements(5),
            "async,packed,messages,direct(2048)",
            MinRun::Elements(5),
        ),
    ];
    for (asked, known, direct) in rows {
        let options = Options {
            direct_min_run: asked,
            ..Options::default()
        };
        let (_, c) = run_measured(options, big, ONE_NODE, m(known)).unwrap();
        assert_eq!(c.messages.direct_min_run, direct, "{known} asked {asked:?}");
    }
}
