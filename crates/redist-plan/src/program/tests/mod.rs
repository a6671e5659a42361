use super::*;
use crate::options::Remap;
use crate::plan::RankPlan;
use crate::testing::{Pair, Windowed};
use crate::whole::Plan;

/// The program of the message from `from` to `to` of a whole plan.
fn program(plan: &Plan, from: usize, to: usize, unit: usize) -> MessageProgram {
    MessageProgram::new(
        plan.axes(),
        plan.source(),
        plan.target(),
        from,
        to,
        to,
        unit,
    )
}

/// The programs of rank `r` of a whole plan, built as the rank builds them.
fn rank_program(plan: &Plan, r: usize, unit: usize) -> RankProgram {
    let mine = RankPlan::new(plan.source(), plan.target(), plan.window(), r).unwrap();
    RankProgram::new(&mine, unit, None, None, &Padding::default()).unwrap()
}
use crate::layout::Layout;
use crate::testing::all_indices;
use quickcheck::quickcheck;

mod padded;

/// Flat offset of local index `l` in the local storage of `rank`.
fn flat(layout: &Layout, rank: usize, l: &[usize]) -> usize {
    let shape = layout.local_shape(rank).unwrap();
    let s = strides(&shape, layout.storage());
    l.iter().zip(&s).map(|(i, s)| i * s).sum()
}

/// The oracle: for the message from `a` to `b`, every element as
/// (source flat offset, target flat offset), scanning every index of
/// the plan's window.
fn pairs(plan: &Plan, a: usize, b: usize) -> Vec<(usize, usize)> {
    let (s, t, w) = (plan.source(), plan.target(), plan.window());
    let mut out = vec![];
    for i in all_indices(w.shape()) {
        let at =
            |origin: &[usize]| -> Vec<usize> { i.iter().zip(origin).map(|(i, o)| i + o).collect() };
        let (ra, la) = s.global_to_local(&at(w.source_origin())).unwrap();
        let (rb, lb) = t.global_to_local(&at(w.target_origin())).unwrap();
        if (ra, rb) == (a, b) {
            out.push((flat(s, a, &la), flat(t, b, &lb)));
        }
    }
    out.sort();
    out
}

/// Pack, unpack and the direct copy of every message of a plan agree
/// with the oracle, and the runs cover exactly the message; with units
/// of parallel work of `unit` elements.
fn programs_match_scan(p: Pair, unit: usize) -> bool {
    plan_programs_match_scan(&Plan::new(&p.0, &p.1, Remap::None).unwrap(), unit)
}

/// [`programs_match_scan`] for any plan, windowed or whole.
fn plan_programs_match_scan(plan: &Plan, unit: usize) -> bool {
    plan.messages().iter().all(|m| {
        let want = pairs(plan, m.from, m.to);
        let tr = program(plan, m.from, m.to, unit);
        if tr.len != want.len() || tr.len != m.len {
            return false;
        }
        // The source holds its own flat offsets.
        let src: Vec<u64> = (0..plan.source().local_len(m.from).unwrap() as u64).collect();
        let n = plan.target().local_len(m.to).unwrap();
        let Some((buf, expect)) = copies_match(&tr, &want, &src, n) else {
            return false;
        };
        // Listed, where it is small enough: the same copies.
        let mut listed = tr.clone();
        if listed.list(usize::MAX, &mut Default::default()).0 > 0
            && (copies_match(&listed, &want, &src, n) != Some((buf.clone(), expect.clone()))
                || !portions_match(&listed, &src, &buf, &expect))
        {
            return false;
        }
        let Some(on_target) = trees_match(&tr, &buf, &expect, src.len(), n) else {
            return false;
        };
        target_runs_match(&tr, &on_target)
            && portions_match(&tr, &src, &buf, &expect)
            && runs_match(&tr, &want)
            && direct_runs_match(&tr, &src, &expect)
    })
}

/// The straight copy's runs, applied one by one, write `expect` from
/// `src`, and cover the message exactly once.
fn direct_runs_match(tr: &MessageProgram, src: &[u64], expect: &[u64]) -> bool {
    let mut dst = vec![u64::MAX; expect.len()];
    let mut moved = 0;
    tr.each_direct_run(|from, to, len| {
        dst[to..to + len].copy_from_slice(&src[from..from + len]);
        moved += len;
    });
    moved == tr.len && dst == expect
}

/// Packing, unpacking and the straight copy move each element where the
/// scan says; returns the packed buffer and the target as expected.
fn copies_match(
    tr: &MessageProgram,
    want: &[(usize, usize)],
    src: &[u64],
    n: usize,
) -> Option<(Vec<u64>, Vec<u64>)> {
    let mut buf = vec![u64::MAX; tr.len];
    tr.pack(src, tr.whole(), &mut buf);
    // The buffer is in source memory order.
    let mut sorted = want.iter().map(|&(a, _)| a as u64).collect::<Vec<_>>();
    sorted.sort();
    if buf != sorted {
        return None;
    }
    let mut dst = vec![u64::MAX; n];
    tr.unpack(tr.whole(), &buf, &mut dst);
    let mut direct = vec![u64::MAX; n];
    tr.copy(src, tr.whole(), &mut direct);
    let mut expect = vec![u64::MAX; n];
    for &(a, b) in want {
        expect[b] = a as u64;
    }
    (dst == expect && direct == expect).then_some((buf, expect))
}

/// The datatype trees list each side's offsets in message order: the
/// source side as packed, the target side as unpacked. Returns the target
/// side's offsets.
fn trees_match(
    tr: &MessageProgram,
    buf: &[u64],
    expect: &[u64],
    src_len: usize,
    n: usize,
) -> Option<Vec<usize>> {
    let mut on_source = vec![];
    let tree = tr.type_tree(true);
    tree.each_element(0, &mut |o| on_source.push(o as u64));
    if on_source != buf || tree.elements() != tr.len || tree.span() > src_len {
        return None;
    }
    let tree = tr.type_tree(false);
    let mut on_target = vec![];
    tree.each_element(0, &mut |o| on_target.push(o));
    if on_target.len() != tr.len || tree.span() > n {
        return None;
    }
    let agree = on_target.iter().zip(buf).all(|(&b, &a)| expect[b] == a);
    agree.then_some(on_target)
}

/// A piece of whole outer indices lies in target storage as one run
/// exactly when its elements' target offsets count up by one.
fn target_runs_match(tr: &MessageProgram, on_target: &[usize]) -> bool {
    let stride = tr.outer_stride();
    [stride, 3 * stride, tr.len.max(1)]
        .into_iter()
        .all(|per_piece| {
            (0..tr.len).step_by(per_piece).all(|o| {
                let n = per_piece.min(tr.len - o);
                let run = &on_target[o..o + n];
                let want = run
                    .iter()
                    .enumerate()
                    .all(|(j, &b)| b == run[0] + j)
                    .then_some(run[0]);
                tr.target_run(o..o + n) == want
            })
        })
}

/// Packing in portions, the local copy in portions: the same as whole.
fn portions_match(tr: &MessageProgram, src: &[u64], buf: &[u64], expect: &[u64]) -> bool {
    [1, 2, 5].into_iter().all(|portions| {
        let mut by_portions = vec![u64::MAX; tr.len];
        let mut direct_portions = vec![u64::MAX; expect.len()];
        let mut covered = 0;
        for k in 0..portions {
            let r = tr.portion(k, portions);
            covered += r.len();
            tr.pack(src, r.clone(), &mut by_portions[r.clone()]);
            tr.copy(src, r, &mut direct_portions);
        }
        by_portions == buf && direct_portions == expect && covered == tr.len
    })
}

/// Each side's runs, where the program lists them, cover exactly that
/// side's elements.
fn runs_match(tr: &MessageProgram, want: &[(usize, usize)]) -> bool {
    for source in [true, false] {
        if let Some(runs) = tr.runs(source, usize::MAX) {
            let mut covered: Vec<usize> = runs.iter().flat_map(|&(o, l)| o..o + l).collect();
            covered.sort();
            let mut side: Vec<usize> = want
                .iter()
                .map(|&(a, b)| if source { a } else { b })
                .collect();
            side.sort();
            if covered != side {
                return false;
            }
        }
    }
    true
}

quickcheck! {
    fn copy_programs_match_scan(p: Pair, unit: u8) -> bool {
        programs_match_scan(p, usize::from(unit % 16) + 1)
    }

    fn windowed_copy_programs_match_scan(w: Windowed, unit: u8) -> bool {
        let plan = Plan::with_window(&w.0, &w.1, &w.2, Remap::None).unwrap();
        plan_programs_match_scan(&plan, usize::from(unit % 16) + 1)
    }
}

#[test]
fn rank_program_splits_sends_receives_and_the_local_copy() {
    let s = Layout::parse(&[12], "block@3").unwrap();
    let t = Layout::parse(&[12], "cyclic@3").unwrap();
    let plan = Plan::new(&s, &t, Remap::None).unwrap();
    let p = rank_program(&plan, 1, 1 << 18);
    // Rank 1 holds 4..8 and keeps 4 and 7; 5 -> 2, 6 -> 0.
    assert_eq!(p.local.as_ref().map(|t| t.len), Some(2));
    assert_eq!(
        p.sends.iter().map(|t| (t.peer, t.len)).collect::<Vec<_>>(),
        vec![(0, 1), (2, 1)]
    );
    // It receives 1 from rank 0 and 10 from rank 2.
    assert_eq!(
        p.recvs.iter().map(|t| (t.peer, t.len)).collect::<Vec<_>>(),
        vec![(0, 1), (2, 1)]
    );
    assert!(programs_match_scan(Pair(s, t), 1 << 20));
}

/// Long extents against tiny blocks: periods of short stretches (copied
/// through offset tables), folded periods, repeated runs, ragged tails,
/// units of work that cut periods and lines anywhere.
#[test]
fn tiny_blocks_and_long_extents() {
    let mut tables = 0;
    for (shape, from, to) in [
        (vec![997], "cyclic@2", "cyclic(3)@3"),
        (vec![1000], "cyclic(5)@2", "cyclic(8)@2"),
        (vec![1201], "block@2", "cyclic@2"),
        (vec![1201], "cyclic(2)+1@3", "block@2"),
        (vec![600], "cyclic(100)@2", "cyclic(3)@2"),
        (
            vec![37, 41],
            "cyclic(2),cyclic(3)@2x1",
            "cyclic(3),cyclic@1x3",
        ),
        (vec![29, 53], "*,cyclic(5)@1x2", "cyclic(2),cyclic(8)@2x1"),
        (
            vec![9, 10, 11],
            "block,*,cyclic@2x1x2",
            "*,cyclic(2),block@1x2x2",
        ),
    ] {
        let s = Layout::parse(&shape, from).unwrap();
        for t in [
            Layout::parse(&shape, to).unwrap(),
            Layout::parse(&shape, to)
                .unwrap()
                .with_storage(Order::ColumnMajor),
        ] {
            let plan = Plan::new(&s, &t, Remap::None).unwrap();
            for m in plan.messages() {
                let tr = program(&plan, m.from, m.to, 1 << 18);
                tables += (0..tr.ndim())
                    .filter(|&d| tr.axis(d).offsets.is_some())
                    .count();
            }
            for unit in [1, 7, 64, 1 << 20] {
                assert!(
                    programs_match_scan(Pair(s.clone(), t.clone()), unit),
                    "{from} -> {t}, units of {unit}"
                );
            }
        }
    }
    assert!(tables > 0, "some periods go through offset tables");
}

/// A rank lists the lines of its small messages, within the budget, and
/// copies from the list what the walk copies; large messages, and messages
/// through offset tables, are walked.
#[test]
fn small_messages_are_listed_within_the_budget() {
    use crate::tuning::{LISTED_LINES, LISTED_MESSAGE_LINES};
    let listed = |p: &RankProgram| -> Vec<usize> {
        (p.local.iter().chain(&p.recvs).chain(&p.sends))
            .map(|t| t.listed.as_ref().map_or(0, |l| l.len()))
            .collect()
    };
    // 64 x 64 cyclic(16)^2 on 1 x 2 -> cyclic(8), cyclic(32) on 2 x 1:
    // each message is 32 columns of one line of four stretches.
    let s = Layout::parse(&[64, 64], "cyclic(16),cyclic(16)@1x2")
        .unwrap()
        .with_storage(Order::ColumnMajor);
    let t = Layout::parse(&[64, 64], "cyclic(8),cyclic(32)@2x1")
        .unwrap()
        .with_storage(Order::ColumnMajor);
    let plan = Plan::new(&s, &t, Remap::None).unwrap();
    let mut p = rank_program(&plan, 0, 1 << 18);
    assert_eq!(listed(&p), [0, 0, 0], "nothing listed before asked");
    p.list_small();
    assert_eq!(listed(&p), [32, 32, 32]);
    assert!(programs_match_scan(Pair(s, t), 1 << 18));
    // Units of work of one element: nothing is one unit, nothing listed.
    let plan = Plan::new(
        &Layout::parse(&[64, 64], "cyclic(16),cyclic(16)@1x2").unwrap(),
        &Layout::parse(&[64, 64], "cyclic(8),cyclic(32)@2x1").unwrap(),
        Remap::None,
    )
    .unwrap();
    let mut p = rank_program(&plan, 1, 1);
    p.list_small();
    assert_eq!(listed(&p), [0, 0, 0]);
    // Many lines per message: the budget holds.
    let s = Layout::parse(&[4096, 8], "cyclic(2),*@2x1").unwrap();
    let t = Layout::parse(&[4096, 8], "cyclic(3),*@3x1").unwrap();
    let plan = Plan::new(&s, &t, Remap::None).unwrap();
    for r in 0..3 {
        let mut p = rank_program(&plan, r, 1 << 18);
        p.list_small();
        let n = listed(&p);
        assert!(n.iter().sum::<usize>() <= LISTED_LINES, "{n:?}");
        assert!(n.iter().all(|&k| k <= LISTED_MESSAGE_LINES), "{n:?}");
    }
}

/// What a rank holds for a redistribution does not grow with the extent.
#[test]
fn program_size_does_not_grow_with_the_extent() {
    for (from, to) in [
        ("block@2", "cyclic@2"),
        ("cyclic(5)@3", "cyclic(8)@2"),
        ("cyclic(100)@2", "cyclic(3)@2"),
        ("cyclic@4", "block@4"),
    ] {
        let size = |n: usize| {
            let s = Layout::parse(&[n], from).unwrap();
            let t = Layout::parse(&[n], to).unwrap();
            let plan = Plan::new(&s, &t, Remap::None).unwrap();
            (0..plan.source().ranks())
                .map(|r| rank_program(&plan, r, 1 << 18).heap_bytes())
                .max()
                .unwrap()
        };
        let small = size(1_000_000);
        for n in [1_000_000_000, 1_000_000_000_000] {
            assert!(
                size(n) <= small,
                "{from} -> {to}: {} bytes at n = {n}, {small} at 10^6",
                size(n)
            );
        }
    }
}

/// A message's datatype trees hold what the per-dimension programs hold:
/// the lines of one period and a ragged tail, whatever the extent (the
/// tail's shape depends on n modulo the period, not on n).
#[test]
fn type_trees_do_not_grow_with_the_extent() {
    let nodes = |n: usize, from: &str, to: &str| {
        let s = Layout::parse(&[n, 64], from).unwrap();
        let t = Layout::parse(&[n, 64], to).unwrap();
        let plan = Plan::new(&s, &t, Remap::None).unwrap();
        let tr = program(&plan, 0, 1, usize::MAX);
        tr.type_tree(true).nodes() + tr.type_tree(false).nodes()
    };
    for (from, to, most) in [
        ("cyclic(64),*@2x1", "cyclic(100),*@2x1", 100),
        ("block,*@2x1", "cyclic,*@2x1", 10),
        ("cyclic(5),*@2x1", "cyclic(8),*@2x1", 60),
    ] {
        for n in [10_000, 10_007, 1_000_000, 999_999_937, 1_000_000_000_000] {
            let got = nodes(n, from, to);
            assert!(got <= most, "{from} -> {to} at n = {n}: {got} nodes");
        }
    }
}

/// A rank's programs, built from its rows and columns, are the programs
/// of the whole plan's messages of that rank.
fn rank_programs_agree(plan: &Plan) -> bool {
    let ranks = plan.source().ranks().max(plan.target().ranks());
    (0..ranks).all(|r| {
        let mine = rank_program(plan, r, 1 << 18);
        let whole = |from, to| program(plan, from, to, 1 << 18);
        let peer = |mut t: MessageProgram, peer| {
            t.peer = peer;
            t
        };
        // A rank lists its small messages' lines; the whole plan's
        // programs list nothing.
        let unlisted = |t: &MessageProgram| MessageProgram {
            listed: None,
            ..t.clone()
        };
        mine.sends.iter().all(|t| unlisted(t) == whole(r, t.peer))
            && mine
                .recvs
                .iter()
                .all(|t| unlisted(t) == peer(whole(t.peer, r), t.peer))
            && mine.local.iter().all(|t| unlisted(t) == whole(r, r))
    })
}

quickcheck! {
    fn rank_programs_are_the_whole_plans(p: Pair) -> bool {
        rank_programs_agree(&Plan::new(&p.0, &p.1, Remap::None).unwrap())
    }

    fn rank_programs_of_windows(w: Windowed) -> bool {
        rank_programs_agree(&Plan::with_window(&w.0, &w.1, &w.2, Remap::None).unwrap())
    }
}

/// Every rank's programs for the target's axes permuted as `perm`, the
/// plan seeing the target `p.1` in the source's axis order: a whole
/// redistribution done in memory (each rank packs its sends, each rank
/// unpacks its receives from the sender's buffer, each does its local
/// copy, and once more straight from source to target) puts every source
/// element where the real target holds `B[π(i)] = A[i]`. Sender and
/// receiver walk each message alike.
fn permuted_programs_match_scan(p: &Pair, perm: &[usize], unit: usize) -> bool {
    let (source, seen) = (&p.0, &p.1);
    let mut inverse = vec![0; perm.len()];
    for (d, &a) in perm.iter().enumerate() {
        inverse[a] = d;
    }
    let target = seen.select_axes(&inverse).unwrap();
    let window = crate::Window::whole(source.shape());
    let ranks = source.ranks().max(seen.ranks());
    let programs: Vec<RankProgram> = (0..ranks)
        .map(|r| {
            let plan = RankPlan::new(source, seen, &window, r).unwrap();
            let mut p =
                RankProgram::new(&plan, unit, None, Some(perm), &Padding::default()).unwrap();
            // Odd ranks list their small messages' lines.
            if r % 2 == 1 {
                p.list_small();
            }
            p
        })
        .collect();
    let local_len = |l: &Layout, r: usize| {
        if r < l.ranks() {
            l.local_len(r).unwrap()
        } else {
            0
        }
    };
    // Source rank r's element at flat offset f holds r << 32 | f.
    let src: Vec<Vec<u64>> = (0..ranks)
        .map(|r| {
            (0..local_len(source, r) as u64)
                .map(|f| (r as u64) << 32 | f)
                .collect()
        })
        .collect();
    let mut expect: Vec<Vec<u64>> = (0..ranks)
        .map(|r| vec![u64::MAX; local_len(&target, r)])
        .collect();
    for i in all_indices(source.shape()) {
        let (ra, la) = source.global_to_local(&i).unwrap();
        let mut j = vec![0; i.len()];
        for (d, &a) in perm.iter().enumerate() {
            j[a] = i[d];
        }
        let (rb, lb) = target.global_to_local(&j).unwrap();
        expect[rb][flat(&target, rb, &lb)] = src[ra][flat(source, ra, &la)];
    }
    for direct in [false, true] {
        let mut dst: Vec<Vec<u64>> = (0..ranks)
            .map(|r| vec![u64::MAX; local_len(&target, r)])
            .collect();
        for (b, pb) in programs.iter().enumerate() {
            if let Some(t) = &pb.local {
                t.copy(&src[b], t.whole(), &mut dst[b]);
            }
            for t in &pb.recvs {
                let Some(s) = programs[t.peer].sends.iter().find(|s| s.peer == b) else {
                    return false;
                };
                if s.len != t.len {
                    return false;
                }
                if direct {
                    // The receiver's program reads the sender's storage:
                    // as a copy, and as plain runs (written twice, alike).
                    t.copy(&src[t.peer], t.whole(), &mut dst[b]);
                    let from = &src[t.peer];
                    t.each_direct_run(|f, to, len| {
                        dst[b][to..to + len].copy_from_slice(&from[f..f + len]);
                    });
                } else {
                    let mut buf = vec![0; s.len];
                    s.pack(&src[t.peer], s.whole(), &mut buf);
                    t.unpack(t.whole(), &buf, &mut dst[b]);
                }
            }
        }
        if dst != expect {
            return false;
        }
    }
    true
}

quickcheck! {
    fn permuted_programs_put_every_element_in_place(p: Pair, seed: u64, unit: u8) -> bool {
        let k = p.0.ndim();
        let mut perm: Vec<usize> = (0..k).collect();
        let mut s = seed;
        for i in (1..k).rev() {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            perm.swap(i, (s >> 33) as usize % (i + 1));
        }
        permuted_programs_match_scan(&p, &perm, usize::from(unit % 16) + 1)
    }
}

#[test]
fn a_3d_permutation_walks_tiles_and_lands_every_element() {
    // The target's fastest dimension is the source's slowest: its loop
    // dimension moves next to the innermost and copies go tile by tile.
    let s = Layout::parse(&[7, 5, 9], "cyclic(2),*,block@2x1x2").unwrap();
    let seen = Layout::parse(&[7, 5, 9], "block,cyclic(3),block@1x2x2").unwrap();
    for perm in [[2, 0, 1], [1, 2, 0], [2, 1, 0], [0, 2, 1]] {
        assert!(permuted_programs_match_scan(
            &Pair(s.clone(), seen.clone()),
            &perm,
            1 << 20
        ));
        let cm = Pair(
            s.clone(),
            seen.clone().with_storage(crate::Order::ColumnMajor),
        );
        assert!(permuted_programs_match_scan(&cm, &perm, 3));
    }
}

/// Every message into target rank `b` copied together, merged in target
/// order in `portions` portions ([`MessageProgram::copy_merged_with`]),
/// lands every element where the scan says, and nothing else is written.
fn merged_copies_match_scan(plan: &Plan, portions: usize) -> bool {
    let code = |a: usize, offset: usize| ((a as u64) << 40) | offset as u64;
    let ranks = plan.source().ranks();
    let sources: Vec<Vec<u64>> = (0..ranks)
        .map(|a| {
            let n = plan.source().local_len(a).unwrap();
            (0..n).map(|o| code(a, o)).collect()
        })
        .collect();
    let mut scratch = MergeScratch::default();
    (0..plan.target().ranks()).all(|b| {
        let n = plan.target().local_len(b).unwrap();
        let mut expect = vec![u64::MAX; n];
        let programs: Vec<(MessageProgram, usize)> = (0..ranks)
            .filter_map(|a| {
                let want = pairs(plan, a, b);
                for &(s, t) in &want {
                    expect[t] = code(a, s);
                }
                (!want.is_empty()).then(|| (program(plan, a, b, usize::MAX), a))
            })
            .collect();
        let list: Vec<(&MessageProgram, &[u64])> = (programs.iter())
            .map(|(t, a)| (t, sources[*a].as_slice()))
            .collect();
        let mut dst = vec![u64::MAX; n];
        for k in 0..portions {
            MessageProgram::copy_merged_with(&list, k, portions, &mut dst, Plain, &mut scratch);
        }
        dst == expect
    })
}

quickcheck! {
    fn merged_copies_land_every_element(p: Pair, portions: u8) -> bool {
        let plan = Plan::new(&p.0, &p.1, Remap::None).unwrap();
        merged_copies_match_scan(&plan, usize::from(portions % 5) + 1)
    }

    fn merged_copies_of_windows(w: Windowed, portions: u8) -> bool {
        let plan = Plan::with_window(&w.0, &w.1, &w.2, Remap::None).unwrap();
        merged_copies_match_scan(&plan, usize::from(portions % 5) + 1)
    }
}

/// The seeds' block-size change: kept elements and a peer's interleave in
/// runs of 40 in the target; merged, every element lands.
#[test]
fn merged_copies_of_a_block_size_change() {
    let n = 40 * 300 * 4 + 17;
    let a = Layout::parse(&[n], "cyclic(40)@2").unwrap();
    let b = Layout::parse(&[n], "cyclic(300)@2").unwrap();
    let plan = Plan::new(&a, &b, Remap::None).unwrap();
    for portions in [1, 2, 7] {
        assert!(merged_copies_match_scan(&plan, portions));
    }
}

/// Every message out of source rank `a` copied together into its target,
/// merged in source order in `portions` portions
/// ([`MessageProgram::push_merged_with`]), streamed or not, lands every
/// element where the scan says, and nothing else is written.
fn pushed_copies_match_scan(plan: &Plan, portions: usize, stream: bool) -> bool {
    let code = |a: usize, offset: usize| ((a as u64) << 40) | offset as u64;
    let targets = plan.target().ranks();
    let mut scratch = MergeScratch::default();
    (0..plan.source().ranks()).all(|a| {
        let n = plan.source().local_len(a).unwrap();
        let src: Vec<u64> = (0..n).map(|o| code(a, o)).collect();
        let mut expect: Vec<Vec<u64>> = (0..targets)
            .map(|b| vec![u64::MAX; plan.target().local_len(b).unwrap()])
            .collect();
        let mut dsts = expect.clone();
        let mut programs = Vec::new();
        for (b, e) in expect.iter_mut().enumerate() {
            let want = pairs(plan, a, b);
            for &(s, t) in &want {
                e[t] = code(a, s);
            }
            if !want.is_empty() {
                programs.push((program(plan, a, b, usize::MAX), b));
            }
        }
        let mut list: Vec<(&MessageProgram, &mut [u64])> = Vec::new();
        for (b, dst) in dsts.iter_mut().enumerate() {
            if let Some((t, _)) = programs.iter().find(|(_, to)| *to == b) {
                list.push((t, dst.as_mut_slice()));
            }
        }
        for k in 0..portions {
            let pass = PushPass {
                portion: k,
                portions,
                stream,
                store: Plain,
            };
            MessageProgram::push_merged_with(&src, &mut list, pass, &mut scratch);
        }
        MessageProgram::fence(stream);
        dsts == expect
    })
}

quickcheck! {
    fn pushed_copies_land_every_element(p: Pair, portions: u8, stream: bool) -> bool {
        let plan = Plan::new(&p.0, &p.1, Remap::None).unwrap();
        pushed_copies_match_scan(&plan, usize::from(portions % 5) + 1, stream)
    }

    fn pushed_copies_of_windows(w: Windowed, portions: u8) -> bool {
        let plan = Plan::with_window(&w.0, &w.1, &w.2, Remap::None).unwrap();
        pushed_copies_match_scan(&plan, usize::from(portions % 5) + 1, true)
    }
}

/// The seeds' block-size change pushed: every element of both targets
/// lands, streamed and not.
#[test]
fn pushed_copies_of_a_block_size_change() {
    let n = 40 * 300 * 4 + 17;
    let a = Layout::parse(&[n], "cyclic(40)@2").unwrap();
    let b = Layout::parse(&[n], "cyclic(300)@2").unwrap();
    let plan = Plan::new(&a, &b, Remap::None).unwrap();
    for portions in [1, 2, 7] {
        assert!(pushed_copies_match_scan(&plan, portions, true));
        assert!(pushed_copies_match_scan(&plan, portions, false));
    }
}

/// How an in-memory redistribution moves each message
/// ([`redistribute_in_memory`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Way {
    /// The sender packs, the receiver unpacks.
    Packed,
    /// The receiver copies straight from the sender's storage.
    Direct,
    /// The same, as plain runs ([`MessageProgram::each_direct_run`]).
    DirectRuns,
    /// Through the datatype trees of both sides.
    Trees,
    /// Every message into a target merged in target order, in 3 portions.
    Merged,
    /// Every message out of a source merged in source order, in 2 portions.
    Pushed,
}

/// A whole redistribution done in memory: every rank's local copy and
/// every message of `programs` (one rank's programs each) moved `way`,
/// from the sources `src` into the targets `dst`. `false` when a sender
/// and its receiver disagree on a message.
fn redistribute_in_memory(
    programs: &[RankProgram],
    src: &[Vec<u64>],
    dst: &mut [Vec<u64>],
    way: Way,
) -> bool {
    let sent = |a: usize, b: usize| programs[a].sends.iter().find(|s| s.peer == b);
    let mut scratch = MergeScratch::default();
    if way == Way::Pushed {
        for (a, pa) in programs.iter().enumerate() {
            let mut list: Vec<(&MessageProgram, &mut [u64])> = Vec::new();
            for (b, d) in dst.iter_mut().enumerate() {
                let m = if a == b {
                    pa.local.as_ref()
                } else {
                    sent(a, b)
                };
                if let Some(m) = m {
                    list.push((m, d.as_mut_slice()));
                }
            }
            for portion in 0..2 {
                let pass = PushPass {
                    portion,
                    portions: 2,
                    stream: false,
                    store: Plain,
                };
                MessageProgram::push_merged_with(&src[a], &mut list, pass, &mut scratch);
            }
        }
        return true;
    }
    for (b, pb) in programs.iter().enumerate() {
        let mut merged: Vec<(&MessageProgram, &[u64])> =
            pb.local.iter().map(|t| (t, src[b].as_slice())).collect();
        for t in pb.recvs.iter().chain(&pb.local) {
            let from = &src[t.peer];
            let sender = if t.peer == b {
                Some(t)
            } else {
                sent(t.peer, b)
            };
            let Some(s) = sender.filter(|s| s.len == t.len) else {
                return false;
            };
            match way {
                Way::Packed => {
                    let mut buf = vec![0; s.len];
                    s.pack(from, s.whole(), &mut buf);
                    t.unpack(t.whole(), &buf, &mut dst[b]);
                }
                Way::Direct => t.copy(from, t.whole(), &mut dst[b]),
                Way::DirectRuns => t.each_direct_run(|f, to, len| {
                    dst[b][to..to + len].copy_from_slice(&from[f..f + len]);
                }),
                Way::Trees => {
                    let mut buf = Vec::with_capacity(s.len);
                    s.type_tree(true)
                        .each_element(0, &mut |o| buf.push(from[o]));
                    let mut k = 0;
                    t.type_tree(false).each_element(0, &mut |o| {
                        dst[b][o] = buf[k];
                        k += 1;
                    });
                }
                Way::Merged if t.peer != b => merged.push((t, from.as_slice())),
                Way::Merged | Way::Pushed => {}
            }
        }
        if way == Way::Merged {
            for k in 0..3 {
                MessageProgram::copy_merged_with(&merged, k, 3, &mut dst[b], Plain, &mut scratch);
            }
        }
    }
    true
}
