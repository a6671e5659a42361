use super::*;
use quickcheck::quickcheck;

fn arb(n: u16, p: u8, b: u8, f: u8) -> AxisMap {
    let p = (p % 7) as usize + 1;
    AxisMap::new(n as usize % 400, p, (b % 12) as usize + 1, f as usize % p)
}

/// Scan every index: the (src local, dst local) pairs per process pair.
fn oracle(src: &AxisMap, dst: &AxisMap) -> Vec<Vec<(usize, usize)>> {
    let mut out = vec![vec![]; src.procs() * dst.procs()];
    for g in 0..src.extent() {
        out[src.owner(g) * dst.procs() + dst.owner(g)]
            .push((src.local_index(g), dst.local_index(g)));
    }
    out
}

quickcheck! {
    fn plan_matches_scan(n: u16, p: u8, s: u8, pf: u8, q: u8, t: u8, qf: u8) -> bool {
        let src = arb(n, p, s, pf);
        let dst = AxisMap::new(src.extent(), (q % 7) as usize + 1, (t % 12) as usize + 1, 0);
        let dst = AxisMap::new(dst.extent(), dst.procs(), dst.block(), qf as usize % dst.procs());
        let plan = AxisPlan::new(&src, &dst).unwrap();
        let want = oracle(&src, &dst);
        (0..src.procs()).all(|p| (0..dst.procs()).all(|q| {
            let got: Vec<(usize, usize)> = plan
                .segments(p, q)
                .flat_map(|(a, b, len)| (0..len).map(move |i| (a + i, b + i)))
                .collect();
            got == want[p * dst.procs() + q] && plan.volume(p, q) == got.len()
        }))
    }

    fn segments_are_maximal(n: u16, p: u8, s: u8, pf: u8, t: u8) -> bool {
        let src = arb(n, p, s, pf);
        let dst = AxisMap::new(src.extent(), src.procs(), (t % 12) as usize + 1, 0);
        let plan = AxisPlan::new(&src, &dst).unwrap();
        (0..src.procs()).all(|p| (0..dst.procs()).all(|q| {
            let segs: Vec<_> = plan.segments(p, q).collect();
            segs.windows(2).all(|w| !(w[0].0 + w[0].2 == w[1].0 && w[0].1 + w[0].2 == w[1].1))
        }))
    }
}

/// Scan every index of a window: the (src local, dst local) pairs per process pair.
fn window_oracle(
    src: &AxisMap,
    so: usize,
    dst: &AxisMap,
    to: usize,
    len: usize,
) -> Vec<Vec<(usize, usize)>> {
    let mut out = vec![vec![]; src.procs() * dst.procs()];
    for g in 0..len {
        out[src.owner(so + g) * dst.procs() + dst.owner(to + g)]
            .push((src.local_index(so + g), dst.local_index(to + g)));
    }
    out
}

fn check_window(src: &AxisMap, so: usize, dst: &AxisMap, to: usize, len: usize) -> bool {
    let plan = AxisPlan::window(src, so, dst, to, len).unwrap();
    let want = window_oracle(src, so, dst, to, len);
    (0..src.procs()).all(|p| {
        (0..dst.procs()).all(|q| {
            let got: Vec<(usize, usize)> = plan
                .segments(p, q)
                .flat_map(|(a, b, n)| (0..n).map(move |i| (a + i, b + i)))
                .collect();
            got == want[p * dst.procs() + q] && plan.volume(p, q) == got.len()
        })
    })
}

quickcheck! {
    fn window_plan_matches_scan(
        from: (u16, u8, u8, u8), to: (u16, u8, u8, u8), a: u16, b: u16, len: u16
    ) -> bool {
        let src = arb(from.0, from.1, from.2, from.3);
        let dst = arb(to.0, to.1, to.2, to.3);
        let len = len as usize % (src.extent().min(dst.extent()) + 1);
        let so = a as usize % (src.extent() - len + 1);
        let to = b as usize % (dst.extent() - len + 1);
        check_window(&src, so, &dst, to, len)
    }
}

#[test]
fn windows_starting_inside_blocks() {
    // Long blocks on one side (repeated runs) with origins in mid-block,
    // mid-cycle and on boundaries, windows ending anywhere.
    for (s, p, fs) in [(1, 3, 2), (3, 2, 0), (5, 4, 1), (64, 2, 0)] {
        for (t, q, ft) in [(2, 2, 1), (7, 3, 0), (40, 1, 0), (150, 2, 1)] {
            let (a, b) = (AxisMap::new(700, p, s, fs), AxisMap::new(650, q, t, ft));
            for (so, to) in [(0, 0), (1, 0), (0, 3), (5, 17), (127, 149), (301, 1)] {
                for len in [0, 1, 2, 13, 97, 300, 349] {
                    assert!(
                        check_window(&a, so, &b, to, len),
                        "{a:?}+{so} -> {b:?}+{to}, {len}"
                    );
                    assert!(
                        check_window(&b, to, &a, so, len),
                        "{b:?}+{to} -> {a:?}+{so}, {len}"
                    );
                }
            }
        }
    }
}

#[test]
fn windows_of_huge_extents_stay_small() {
    let n = 1usize << 40;
    let cyclic = AxisMap::new(n, 4, 64, 0);
    let block = AxisMap::new(n, 2, n.div_ceil(2), 0);
    let plan = AxisPlan::window(&cyclic, 1_000_003, &block, 77, n - 2_000_000).unwrap();
    assert!(plan.stored_runs() <= 80, "{} runs", plan.stored_runs());
    let total: usize = (0..4)
        .flat_map(|p| (0..2).map(move |q| (p, q)))
        .map(|(p, q)| plan.volume(p, q))
        .sum();
    assert_eq!(total, n - 2_000_000);
}

#[test]
fn windows_outside_the_extent_are_refused() {
    let a = AxisMap::new(10, 2, 1, 0);
    let b = AxisMap::new(20, 2, 3, 0);
    assert!(AxisPlan::window(&a, 0, &b, 10, 10).is_ok());
    for (so, to, len) in [(1, 0, 10), (0, 11, 10), (usize::MAX, 0, 1), (0, 0, 11)] {
        let err = AxisPlan::window(&a, so, &b, to, len).unwrap_err();
        assert!(
            matches!(err, PlanError::InvalidArgument { what: "window", .. }),
            "{err}"
        );
    }
}

#[test]
fn exhaustive_small_cases_with_long_blocks() {
    // Long blocks on one side exercise repeated runs, ragged tails their clipping.
    for n in [0, 1, 7, 24, 37, 60, 61] {
        for (s, p, fs) in [(1, 1, 0), (1, 3, 2), (2, 2, 1), (3, 4, 0), (5, 2, 0)] {
            for (t, q, ft) in [
                (1, 2, 1),
                (4, 3, 0),
                (7, 2, 1),
                (13, 1, 0),
                (20, 3, 2),
                (31, 2, 0),
            ] {
                for (a, b) in [
                    (AxisMap::new(n, p, s, fs), AxisMap::new(n, q, t, ft)),
                    (AxisMap::new(n, q, t, ft), AxisMap::new(n, p, s, fs)),
                ] {
                    let plan = AxisPlan::new(&a, &b).unwrap();
                    let want = oracle(&a, &b);
                    for x in 0..a.procs() {
                        for y in 0..b.procs() {
                            let got: Vec<(usize, usize)> = plan
                                .segments(x, y)
                                .flat_map(|(u, v, len)| (0..len).map(move |i| (u + i, v + i)))
                                .collect();
                            assert_eq!(
                                got,
                                want[x * b.procs() + y],
                                "{a:?} -> {b:?}, pair {x},{y}"
                            );
                            assert_eq!(plan.volume(x, y), got.len());
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn block_against_cyclic_stays_small_for_huge_extents() {
    for n in [1_000usize, 1_000_000, 1_000_000_000, 1 << 40] {
        let cyclic = AxisMap::new(n, 4, 64, 0);
        let block = AxisMap::new(n, 2, n.div_ceil(2), 0);
        for plan in [
            AxisPlan::new(&cyclic, &block).unwrap(),
            AxisPlan::new(&block, &cyclic).unwrap(),
        ] {
            assert!(
                plan.stored_runs() <= 64,
                "n = {n}: {} runs",
                plan.stored_runs()
            );
            let total: usize = (0..plan.source().procs())
                .flat_map(|p| (0..plan.target().procs()).map(move |q| (p, q)))
                .map(|(p, q)| plan.volume(p, q))
                .sum();
            assert_eq!(total, n);
        }
    }
}

#[test]
fn identity_is_one_run_per_process() {
    let a = AxisMap::new(1000, 4, 7, 1);
    let plan = AxisPlan::new(&a, &a).unwrap();
    for p in 0..4 {
        let segs: Vec<_> = plan.segments(p, p).collect();
        assert_eq!(segs, vec![(0, 0, a.local_extent(p))]);
        for q in (0..4).filter(|&q| q != p) {
            assert_eq!(plan.volume(p, q), 0);
        }
    }
}

#[test]
fn plan_size_does_not_depend_on_extent() {
    let small = AxisPlan::new(
        &AxisMap::new(1_000, 72, 5, 0),
        &AxisMap::new(1_000, 72, 8, 0),
    )
    .unwrap();
    let big = AxisPlan::new(
        &AxisMap::new(1 << 40, 72, 5, 0),
        &AxisMap::new(1 << 40, 72, 8, 0),
    )
    .unwrap();
    // lcm(5·72, 8·72) = 2880 indices per period.
    assert_eq!(big.period(), 2880);
    assert!(big.stored_runs() <= 2880 / 5 + 2880 / 8);
    assert!(small.stored_runs() <= big.stored_runs());
    let total: usize = (0..72)
        .flat_map(|p| (0..72).map(move |q| (p, q)))
        .map(|(p, q)| big.volume(p, q))
        .sum();
    assert_eq!(total, 1 << 40);
}

#[test]
fn mismatched_extents_are_refused() {
    assert!(matches!(
        AxisPlan::new(&AxisMap::new(10, 2, 1, 0), &AxisMap::new(11, 2, 1, 0)),
        Err(PlanError::ExtentMismatch {
            source_extent: 10,
            target_extent: 11
        })
    ));
}

/// The view `view` holds exactly the pairs of `whole` it covers, with the
/// same runs and volumes, and nothing else.
fn view_agrees(whole: &AxisPlan, view: &AxisPlan) -> bool {
    let covered = |p: usize, q: usize| match view.covers() {
        AxisView::All => true,
        AxisView::Source(x) => p == x,
        AxisView::Target(y) => q == y,
        AxisView::Pair(x, y) => (p, q) == (x, y),
    };
    let expected: Vec<_> = whole.pairs().filter(|&(p, q, _)| covered(p, q)).collect();
    expected == view.pairs().collect::<Vec<_>>()
        && expected
            .iter()
            .all(|&(p, q, _)| view.runs(p, q) == whole.runs(p, q))
        && (view.period(), view.periods(), view.tail(), view.span())
            == (whole.period(), whole.periods(), whole.tail(), whole.span())
}

/// Every row and every column of a window's plan, each found alone.
fn views_agree(src: &AxisMap, so: usize, dst: &AxisMap, to: usize, len: usize) -> bool {
    let whole = AxisPlan::window(src, so, dst, to, len).unwrap();
    let view = |v| AxisPlan::view(src, so, dst, to, len, v).unwrap();
    (0..src.procs()).all(|p| view_agrees(&whole, &view(AxisView::Source(p))))
        && (0..dst.procs()).all(|q| view_agrees(&whole, &view(AxisView::Target(q))))
        && (0..src.procs())
            .all(|p| (0..dst.procs()).all(|q| view_agrees(&whole, &view(AxisView::Pair(p, q)))))
}

quickcheck! {
    fn rows_and_columns_are_the_whole_plans(
        from: (u16, u8, u8, u8), to: (u16, u8, u8, u8), a: u16, b: u16, len: u16
    ) -> bool {
        let src = arb(from.0, from.1, from.2, from.3);
        let dst = arb(to.0, to.1, to.2, to.3);
        let len = len as usize % (src.extent().min(dst.extent()) + 1);
        let so = a as usize % (src.extent() - len + 1);
        let to = b as usize % (dst.extent() - len + 1);
        views_agree(&src, so, &dst, to, len)
    }
}

/// Views where one side's blocks are much longer than the other side's
/// cycle, where they are shorter than it, with windows starting inside
/// blocks and cycles, and many processes.
#[test]
fn rows_and_columns_of_long_and_short_blocks() {
    for (n, (p, s, fs), (q, t, ft)) in [
        (4000, (3, 1000, 1), (5, 7, 2)),
        (4000, (5, 7, 2), (3, 1000, 1)),
        (5000, (40, 3, 0), (9, 11, 4)),
        (5000, (9, 11, 4), (40, 3, 0)),
        (3000, (7, 64, 0), (13, 64, 5)),
        (3000, (64, 1, 0), (2, 1500, 1)),
        (7777, (17, 5, 3), (19, 6, 0)),
    ] {
        let (a, b) = (AxisMap::new(n, p, s, fs), AxisMap::new(n, q, t, ft));
        for (so, to, len) in [(0, 0, n), (1, 0, n - 1), (333, 77, 2500), (13, 1, 17)] {
            assert!(
                views_agree(&a, so, &b, to, len),
                "{a:?}+{so} -> {b:?}+{to}, {len}"
            );
        }
    }
}

/// A view costs its own runs: a BLOCK source against a CYCLIC(7) target on
/// 131072 processes has up to three runs per process pair in a row (the
/// pieces before the first whole target cycle of a block, the whole cycles
/// as one repeated run, the pieces after), one per pair in a column, and
/// 2^34 pairs in all.
#[test]
fn a_view_costs_its_own_runs() {
    let n = 1usize << 40;
    let procs = 1 << 17;
    let block = AxisMap::new(n, procs, n / procs, 0);
    let cyclic = AxisMap::new(n, procs, 7, 0);
    let start = std::time::Instant::now();
    for v in [
        AxisView::Source(0),
        AxisView::Source(procs - 1),
        AxisView::Target(12345),
    ] {
        let plan = AxisPlan::view(&block, 0, &cyclic, 0, n, v).unwrap();
        assert!(
            plan.stored_runs() <= 3 * procs + 2,
            "{v:?}: {} runs",
            plan.stored_runs()
        );
        let moved: usize = plan.pairs().map(|(_, _, vol)| vol).sum();
        let expected = match v {
            AxisView::Source(p) => block.local_extent(p),
            AxisView::Target(q) => cyclic.local_extent(q),
            AxisView::All | AxisView::Pair(..) => n,
        };
        assert_eq!(moved, expected, "{v:?}");
    }
    assert!(
        start.elapsed().as_secs() < 10,
        "views took {:?}",
        start.elapsed()
    );
    // A view names a process of its side.
    assert!(AxisPlan::view(&block, 0, &cyclic, 0, n, AxisView::Target(procs)).is_err());
}
