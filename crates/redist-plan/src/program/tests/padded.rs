//! Programs of padded storage (ghost layers on either side): they copy
//! what the unpadded programs copy, every way, and leave ghosts alone.

use super::*;

/// Every rank's programs of `window` of `source` onto `seen` (the target
/// seen in the source's axis order where `perm` permutes the axes), the
/// local parts padded as `padding` says; odd ranks list their small
/// messages' lines.
fn every_rank(
    (source, seen, window): (&Layout, &Layout, &crate::Window),
    perm: Option<&[usize]>,
    unit: usize,
    padding: &Padding,
) -> Vec<RankProgram> {
    let ranks = source.ranks().max(seen.ranks());
    (0..ranks)
        .map(|r| {
            let plan = RankPlan::new(source, seen, window, r).unwrap();
            let mut p = RankProgram::new(&plan, unit, None, perm, padding).unwrap();
            if r % 2 == 1 {
                p.list_small();
            }
            p
        })
        .collect()
}

/// Where each element of `rank`'s local part of `layout` lies in storage
/// padded by `widths` (empty: none), in the unpadded storage's order.
fn padded_offsets(layout: &Layout, rank: usize, widths: &[usize]) -> Vec<usize> {
    let Ok(shape) = layout.local_shape(rank) else {
        return vec![];
    };
    let w = |d: usize| widths.get(d).copied().unwrap_or(0);
    let padded: Vec<usize> = (0..shape.len()).map(|d| shape[d] + 2 * w(d)).collect();
    let plain = strides(&shape, layout.storage());
    let wide = strides(&padded, layout.storage());
    let mut out = vec![0; shape.iter().product()];
    for l in all_indices(&shape) {
        let f: usize = l.iter().zip(&plain).map(|(i, s)| i * s).sum();
        out[f] = (l.iter().enumerate())
            .map(|(d, &i)| (i + w(d)) * wide[d])
            .sum();
    }
    out
}

/// Ghost widths 0 to 2 per axis of an array of `ndim` axes, from `seed`.
fn random_widths(seed: &mut u64, ndim: usize) -> Vec<usize> {
    (0..ndim)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*seed >> 33) as usize % 3
        })
        .collect()
}

/// The programs of storage padded by random ghost widths (0 to 2 per axis
/// of each side, the target's in its own axis order) copy exactly what the
/// unpadded programs copy: every way of moving the messages leaves each
/// padded target's interior as the unpadded redistribution leaves its
/// target, and every ghost cell of it untouched. Their size stays within
/// a factor of the unpadded programs'.
fn padded_programs_match_unpadded(
    (source, seen, window): (&Layout, &Layout, &crate::Window),
    perm: Option<&[usize]>,
    seed: u64,
    unit: usize,
) -> bool {
    const GHOST: u64 = u64::MAX - 1;
    let target = match perm {
        Some(perm) => {
            let mut inverse = vec![0; perm.len()];
            for (d, &a) in perm.iter().enumerate() {
                inverse[a] = d;
            }
            seen.select_axes(&inverse).unwrap()
        }
        None => seen.clone(),
    };
    let mut seed = seed;
    let widths = (
        random_widths(&mut seed, source.ndim()),
        random_widths(&mut seed, target.ndim()),
    );
    let padding = Padding::new(&widths.0, &widths.1);
    let sides = (source, seen, window);
    let plain = every_rank(sides, perm, unit, &Padding::default());
    let padded = every_rank(sides, perm, unit, &padding);
    let bytes = |p: &[RankProgram]| p.iter().map(RankProgram::heap_bytes).collect::<Vec<_>>();
    // Padding changes strides and offsets, never the runs: what a program
    // holds stays within a factor of the unpadded one's (not equal: which
    // messages can share one shape depends on the strides, e.g. a stride
    // that never advances along an extent of one).
    let bounded = bytes(&plain)
        .iter()
        .zip(bytes(&padded))
        .all(|(&a, b)| b <= 2 * a + 1024 && a <= 2 * b + 1024);
    if !bounded {
        return false;
    }
    let ranks = plain.len();
    let len = |l: &Layout, r: usize| l.local_len(r).unwrap_or(0);
    let src: Vec<Vec<u64>> = (0..ranks)
        .map(|r| {
            (0..len(source, r) as u64)
                .map(|f| (r as u64) << 32 | f)
                .collect()
        })
        .collect();
    let mut expect: Vec<Vec<u64>> = (0..ranks)
        .map(|r| vec![u64::MAX; len(&target, r)])
        .collect();
    if !redistribute_in_memory(&plain, &src, &mut expect, Way::Packed) {
        return false;
    }
    let at_source: Vec<Vec<usize>> = (0..ranks)
        .map(|r| padded_offsets(source, r, &widths.0))
        .collect();
    let at_target: Vec<Vec<usize>> = (0..ranks)
        .map(|r| padded_offsets(&target, r, &widths.1))
        .collect();
    let padded_src: Vec<Vec<u64>> = (0..ranks)
        .map(|r| {
            let mut s = vec![GHOST; padding.source_len(source, r).unwrap_or(0)];
            for (f, &p) in at_source[r].iter().enumerate() {
                s[p] = src[r][f];
            }
            s
        })
        .collect();
    let ways = [
        Way::Packed,
        Way::Direct,
        Way::DirectRuns,
        Way::Trees,
        Way::Merged,
        Way::Pushed,
    ];
    ways.into_iter().all(|way| {
        let mut dst: Vec<Vec<u64>> = (0..ranks)
            .map(|r| {
                let mut d = vec![GHOST; padding.target_len(&target, r).unwrap_or(0)];
                for &p in &at_target[r] {
                    d[p] = u64::MAX;
                }
                d
            })
            .collect();
        redistribute_in_memory(&padded, &padded_src, &mut dst, way)
            && (0..ranks).all(|r| {
                let interior = at_target[r].iter().map(|&p| dst[r][p]);
                let ghosts = dst[r].iter().filter(|&&x| x == GHOST).count();
                interior.eq(expect[r].iter().copied())
                    && ghosts == dst[r].len() - at_target[r].len()
            })
    })
}

quickcheck! {
    fn padded_programs_copy_what_unpadded_ones_do(p: Pair, seed: u64, unit: u8) -> bool {
        let k = p.0.ndim();
        // Half the cases permute the axes.
        let perm = (seed % 2 == 1).then(|| {
            let mut perm: Vec<usize> = (0..k).collect();
            let mut s = seed;
            for i in (1..k).rev() {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                perm.swap(i, (s >> 33) as usize % (i + 1));
            }
            perm
        });
        let window = crate::Window::whole(p.0.shape());
        let unit = usize::from(unit % 16) + 1;
        padded_programs_match_unpadded((&p.0, &p.1, &window), perm.as_deref(), seed, unit)
    }

    fn padded_programs_of_windows(w: Windowed, seed: u64, unit: u8) -> bool {
        let unit = usize::from(unit % 16) + 1;
        padded_programs_match_unpadded((&w.0, &w.1, &w.2), None, seed, unit)
    }
}

/// Padding that is not one width per axis is refused, on either side and
/// through a permutation.
#[test]
fn padding_of_the_wrong_rank_is_refused() {
    let s = Layout::parse(&[6, 4], "block,*@2x1").unwrap();
    let t = Layout::parse(&[6, 4], "*,block@1x2").unwrap();
    let plan = RankPlan::new(&s, &t, &crate::Window::whole(&[6, 4]), 0).unwrap();
    for (padding, perm) in [
        (Padding::new(&[1], &[]), None),
        (Padding::new(&[], &[1, 1, 1]), None),
        (Padding::new(&[], &[1]), Some(&[1, 0][..])),
    ] {
        let got = RankProgram::new(&plan, 1, None, perm, &padding);
        assert!(
            matches!(got, Err(crate::error::PlanError::InvalidArgument { .. })),
            "{padding:?}"
        );
    }
}
