//! Every rank's update, run in one process over every rank's padded
//! storage, checked cell by cell against a naive oracle: each ghost cell's
//! global index from its padded index alone.

use super::*;
use crate::coords::Order;
use crate::layout::spec::{Dist, LayoutSpec};
use crate::layout::Layout;
use quickcheck::{Arbitrary, Gen};

/// A random layout of one block per rank on every axis (cyclic with many
/// blocks where an axis has one process), 1 to 4 axes, random first
/// processes, rank map and storage order, with a random ghost spec.
#[derive(Clone, Debug)]
struct Case(Layout, GhostSpec);

impl Arbitrary for Case {
    fn arbitrary(g: &mut Gen) -> Case {
        let ndim = usize::arbitrary(g) % 4 + 1;
        let mut shape = vec![];
        let (mut dists, mut grid) = (vec![], vec![]);
        let mut ranks = 1;
        for _ in 0..ndim {
            let n = usize::arbitrary(g) % 9 + usize::from(ndim < 3) * 3;
            let p = if ranks < 8 {
                usize::arbitrary(g) % 3 + 1
            } else {
                1
            };
            ranks *= p;
            let first = usize::arbitrary(g) % p;
            let least = n.div_ceil(p).max(1);
            dists.push(match u8::arbitrary(g) % 4 {
                0 if p == 1 => Dist::Collapsed,
                1 if p == 1 => Dist::cyclic(usize::arbitrary(g) % 3 + 1),
                0 | 1 => Dist::block().starting_at(first),
                _ => Dist::cyclic(least + usize::arbitrary(g) % 2).starting_at(first),
            });
            shape.push(n);
            grid.push(p);
        }
        let spec = LayoutSpec::new(dists, grid).unwrap();
        let mut l = Layout::new(&shape, &spec).unwrap();
        let mut map: Vec<usize> = (0..l.ranks()).collect();
        for i in (1..map.len()).rev() {
            map.swap(i, usize::arbitrary(g) % (i + 1));
        }
        l = l.with_rank_map(map).unwrap();
        if bool::arbitrary(g) {
            l = l.with_storage(Order::ColumnMajor);
        }
        let widths: Vec<usize> = shape
            .iter()
            .map(|&n| usize::arbitrary(g) % (n.min(3) + 1))
            .collect();
        let periodic: Vec<bool> = shape.iter().map(|_| bool::arbitrary(g)).collect();
        let corners = if bool::arbitrary(g) {
            Corners::Box
        } else {
            Corners::Star
        };
        Case(l, GhostSpec::new(&widths, &periodic, corners))
    }
}

/// The value a cell of global index `g` holds: its row-major position + 1
/// (0 marks a ghost no one wrote).
fn value(shape: &[usize], g: &[usize]) -> u64 {
    g.iter()
        .zip(shape)
        .fold(0u64, |v, (&i, &n)| v * n as u64 + i as u64)
        + 1
}

/// Every rank's padded storage: interiors hold their values, ghosts 0.
fn storages(layout: &Layout, widths: &[usize]) -> Vec<Vec<u64>> {
    (0..layout.ranks())
        .map(|r| {
            let padded = padded_shape(layout, r, widths);
            let strides = padded_strides(&padded, layout.storage());
            let mut s = vec![0u64; padded.iter().product()];
            let local = layout.local_shape(r).unwrap();
            for_each_index(&local, |l| {
                let g = layout.local_to_global(r, l).unwrap();
                let at: usize = (0..l.len()).map(|d| (l[d] + widths[d]) * strides[d]).sum();
                s[at] = value(layout.shape(), &g);
            });
            s
        })
        .collect()
}

fn for_each_index(shape: &[usize], mut f: impl FnMut(&[usize])) {
    if shape.contains(&0) {
        return;
    }
    let mut i = vec![0usize; shape.len()];
    loop {
        f(&i);
        let mut d = shape.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            i[d] += 1;
            if i[d] < shape[d] {
                break;
            }
            i[d] = 0;
        }
    }
}

/// What cell `p` of `rank`'s padded storage holds after the update, from
/// the layout's index maps alone.
fn expected(layout: &Layout, spec: &GhostSpec, rank: usize, p: &[usize]) -> u64 {
    let local = layout.local_shape(rank).unwrap();
    if local.contains(&0) {
        return 0;
    }
    let coords = layout.coords_of_rank(rank).unwrap();
    let mut g = vec![0usize; p.len()];
    let mut ghosts = 0;
    let mut interior = true;
    for d in 0..p.len() {
        let (w, m, n) = (spec.widths()[d], local[d], layout.shape()[d]);
        let lo = layout.axis(d).global_index(coords[d], 0) as i64;
        let gi = lo - w as i64 + p[d] as i64;
        if p[d] < w || p[d] >= w + m {
            ghosts += 1;
            interior = false;
        }
        if !(0..n as i64).contains(&gi) && !spec.periodic()[d] {
            return 0;
        }
        g[d] = usize::try_from(gi.rem_euclid(n as i64)).unwrap();
    }
    if interior {
        return value(layout.shape(), &g);
    }
    if spec.corners() == Corners::Star && ghosts > 1 {
        return 0;
    }
    value(layout.shape(), &g)
}

/// Runs every rank's update over `storages`, by direct copies or through
/// packed buffers, and checks each send against its receive.
fn update(layout: &Layout, spec: &GhostSpec, before: &[Vec<u64>], packed: bool) -> Vec<Vec<u64>> {
    let copy = BoxCopy::new(layout.storage());
    let parts: Vec<RankGhosts> = (0..layout.ranks())
        .map(|r| RankGhosts::new(layout, spec, r).unwrap())
        .collect();
    let mut after = before.to_vec();
    for (r, part) in parts.iter().enumerate() {
        let strides = padded_strides(part.padded(), layout.storage());
        for b in part.own() {
            copy.copy_within(b, &mut after[r], &strides);
        }
        for m in part.recvs() {
            let theirs = parts[m.peer].sends().iter().find(|s| s.peer == r);
            let theirs = theirs.expect("the owner sends what the reader receives");
            assert_eq!(theirs.boxes, m.boxes, "rank {r} from {}", m.peer);
            assert_eq!(&*m.peer_padded, parts[m.peer].padded());
            let peer_strides = padded_strides(&m.peer_padded, layout.storage());
            if packed {
                let mut buf = vec![0u64; m.cells];
                let sent = copy.pack(&theirs.boxes, &before[m.peer], &peer_strides, &mut buf);
                assert_eq!(sent, m.cells);
                copy.unpack(&m.boxes, &buf, &mut after[r], &strides);
            } else {
                for b in &m.boxes {
                    copy.copy(b, &before[m.peer], &peer_strides, &mut after[r], &strides);
                }
            }
        }
        for s in part.sends() {
            assert!(
                parts[s.peer].recvs().iter().any(|m| m.peer == r),
                "rank {r}'s send to {} is received",
                s.peer
            );
        }
    }
    after
}

fn check(case: &Case, packed: bool) -> Result<(), String> {
    let Case(layout, spec) = case;
    let before = storages(layout, spec.widths());
    let after = update(layout, spec, &before, packed);
    for (r, storage) in after.iter().enumerate() {
        let padded = padded_shape(layout, r, spec.widths());
        let strides = padded_strides(&padded, layout.storage());
        let mut bad = None;
        for_each_index(&padded, |p| {
            let at: usize = p.iter().zip(&strides).map(|(i, s)| i * s).sum();
            let want = expected(layout, spec, r, p);
            let source = cell_source(layout, spec, r, p);
            let told = source.map_or(0, |g| value(layout.shape(), &g));
            if told != want && bad.is_none() {
                bad = Some(format!(
                    "rank {r} cell {p:?}: cell_source says {told}, expected {want}"
                ));
            }
            if storage[at] != want && bad.is_none() {
                bad = Some(format!(
                    "rank {r} cell {p:?}: {} expected {want}",
                    storage[at]
                ));
            }
        });
        if let Some(b) = bad {
            return Err(format!("{layout} {spec:?}: {b}"));
        }
    }
    Ok(())
}

#[test]
fn every_ghost_holds_its_global_value() {
    fn prop(case: Case) -> bool {
        check(&case, false).map_err(|e| eprintln!("{e}")).is_ok()
            && check(&case, true).map_err(|e| eprintln!("{e}")).is_ok()
    }
    quickcheck::QuickCheck::new()
        .tests(600)
        .quickcheck(prop as fn(Case) -> bool);
}

/// Fixed cases: a periodic axis of one process (the rank is its own
/// neighbour), ghosts wider than a neighbour's part, a ragged last block.
#[test]
fn fixed_cases() {
    for (shape, spec, widths, periodic, corners) in [
        (
            vec![6, 5],
            "block,block@1x1",
            vec![2, 1],
            vec![true, true],
            Corners::Box,
        ),
        (vec![7], "block@4", vec![3], vec![true], Corners::Box),
        (
            vec![10, 3],
            "block,*@4x1",
            vec![4, 1],
            vec![true, false],
            Corners::Star,
        ),
        (
            vec![5, 4, 3],
            "block,block,block@2x2x2",
            vec![1, 2, 1],
            vec![false, true, true],
            Corners::Box,
        ),
        (
            vec![9, 8],
            "cyclic(4)+1,block+1@3x2",
            vec![2, 3],
            vec![true, true],
            Corners::Box,
        ),
        (
            vec![4, 4],
            "cyclic,block@1x2",
            vec![1, 1],
            vec![true, true],
            Corners::Box,
        ),
    ] {
        let layout = Layout::parse(&shape, spec).unwrap();
        let case = Case(layout, GhostSpec::new(&widths, &periodic, corners));
        check(&case, false).unwrap();
        check(&case, true).unwrap();
    }
}

#[test]
fn refused_layouts_and_specs() {
    let layout = Layout::parse(&[12, 4], "cyclic(2),block@2x2").unwrap();
    let spec = GhostSpec::new(&[1, 1], &[true, true], Corners::Box);
    let e = RankGhosts::new(&layout, &spec, 0).unwrap_err();
    assert!(e.to_string().contains("axis 0"), "{e}");
    // Without ghosts along it, any distribution does.
    let spec = GhostSpec::new(&[0, 1], &[true, true], Corners::Box);
    assert!(RankGhosts::new(&layout, &spec, 0).is_ok());
    let spec = GhostSpec::new(&[1], &[true, true], Corners::Box);
    assert!(RankGhosts::new(&layout, &spec, 0).is_err());
    let spec = GhostSpec::new(&[1, 5], &[true, true], Corners::Box);
    assert!(RankGhosts::new(&layout, &spec, 0).is_err());
}

/// A plan holds boxes, not cells: 256³ and 1024³ plan to the same bytes.
#[test]
fn plans_do_not_grow_with_the_array() {
    for spec in ["block,block,block@2x2x2", "block,block,*@4x2x1"] {
        let bytes = |n: usize| {
            let layout = Layout::parse(&[n, n, n], spec).unwrap();
            let g = GhostSpec::new(&[2, 2, 2], &[true, true, true], Corners::Box);
            (0..8)
                .map(|r| RankGhosts::new(&layout, &g, r).unwrap().heap_bytes())
                .collect::<Vec<_>>()
        };
        assert_eq!(bytes(256), bytes(1024), "{spec}");
    }
}
