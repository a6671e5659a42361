//! The closed forms of the papers, per dimension: block splits and merges
//! (seed 003), Kalns and Ni's `BLOCK` ↔ `CYCLIC(c)` (seed 004) and their
//! dispatch ([`closed_form_mapping`], [`closed_form`]); the tests also hold
//! seed 003's model of the data kept per global complete cycle. The
//! derivations, and what we found checking them against the exact optimum,
//! are in `docs/remapping.md`.

use crate::arith::{gcd, mul_div, mul_mod};
use crate::error::PlanError;
use crate::layout::axis::AxisMap;
use std::fmt;

/// The relabelling for splitting blocks, `BLOCK-CYCLIC(k·r)` over `P` →
/// `BLOCK-CYCLIC(r)` over `targets = Q` (first processes 0): processor `p < Q`
/// goes to position `(k·p + ⌊p·g/Q⌋) mod Q` with `g = gcd(k, Q)`.
///
/// Seed 003 (Hsu et al., 2001), eqs. 1, 2 and 5 re-derived (see
/// `docs/remapping.md`). The result is a permutation of `0..Q` and does not
/// depend on `P`: ids `≥ P` are processors without source data. `k = 0` is
/// read as 1.
///
/// ```
/// use redist_plan::remap::split_blocks;
/// assert_eq!(split_blocks(2, 5), vec![0, 3, 1, 4, 2]); // seed 003, Fig. 4
/// assert_eq!(split_blocks(2, 8), vec![0, 4, 1, 5, 2, 6, 3, 7]); // Fig. 5
/// ```
pub fn split_blocks(k: usize, targets: usize) -> Vec<usize> {
    let (k, q) = (k.max(1), targets);
    if q == 0 {
        return vec![];
    }
    let g = gcd(k, q);
    let mut perm = vec![0; q];
    for p in 0..q {
        let pos = (mul_mod(k, p, q) + mul_div(p, g, q)) % q;
        perm[pos] = p;
    }
    perm
}

/// [`split_blocks`] with first processes `fs` (source) and `ft` (target):
/// physical processor `x < Q` goes to position
/// `(k·x + ⌊x·g/Q⌋ − k·fs + ft) mod Q`, `g = gcd(k, Q)`.
///
/// Processor `x` holds the blocks of logical source rank `y = (x − fs) mod P`,
/// which start on logical positions `k·y + (multiples of h) mod Q`, with
/// `h = gcd(k·P, Q)`; since `k·P ≡ 0 (mod h)`, `k·y ≡ k·(x − fs) (mod h)`, and
/// over whole cycles only the position modulo `h` matters. Shifting
/// [`split_blocks`]'s positions by `ft − k·fs` therefore keeps every processor
/// in its best class while the ids stay `0..Q` — even when `Q < P`, where
/// rotating the ids instead would name processors `≥ Q`.
fn split_with_offsets(k: usize, q: usize, fs: usize, ft: usize) -> Vec<usize> {
    let k = k.max(1);
    if q == 0 {
        return vec![];
    }
    let shift = (ft % q + q - mul_mod(k, fs, q)) % q;
    let mut perm = vec![0; q];
    for (pos, x) in split_blocks(k, q).into_iter().enumerate() {
        perm[(pos + shift) % q] = x;
    }
    perm
}

/// The relabelling for merging blocks, `BLOCK-CYCLIC(r)` over `sources = P` →
/// `BLOCK-CYCLIC(k·r)` over `targets = Q` (first processes 0): position
/// `j < min(P, Q)` goes to processor `(k·j + ⌊j·g/P⌋) mod P` with
/// `g = gcd(k, P)`, positions `P ≤ j < Q` to processor `j`.
///
/// Seed 003 (Hsu et al., 2001), eqs. 3, 4 and 6 re-derived (see
/// `docs/remapping.md`). Ids are distinct and below `max(P, Q)`; when
/// `Q < P` some may be `≥ Q`. `k = 0` is read as 1.
///
/// ```
/// use redist_plan::remap::merge_blocks;
/// assert_eq!(merge_blocks(2, 5, 5), vec![0, 2, 4, 1, 3]); // seed 003, Fig. 6
/// assert_eq!(merge_blocks(2, 4, 2), vec![0, 2]); // position 1 wants processor 2
/// ```
pub fn merge_blocks(k: usize, sources: usize, targets: usize) -> Vec<usize> {
    let (k, p, q) = (k.max(1), sources, targets);
    if p == 0 {
        return (0..q).collect();
    }
    let g = gcd(k, p);
    (0..q)
        .map(|j| {
            if j < p {
                (mul_mod(k, j, p) + mul_div(j, g, p)) % p
            } else {
                j
            }
        })
        .collect()
}

/// Kalns and Ni's relabelling for `BLOCK` → `CYCLIC(c)` on `procs = P`
/// processes with `z = b / c` cyclic blocks per `BLOCK` block: the process
/// owning block `i` takes cyclic place holder `i·z mod P`, the `g = gcd(z, P)`
/// processes sharing a place holder spread over the next `g` ones in
/// increasing order. Returns `perm[place holder] = process`.
///
/// Seed 004 (Kalns and Ni, 1995), eq. 1 and Lemma 5. It reaches their maximum
/// hit ratio `c·P·⌈z/P⌉ / N` when `N = b·P`. `z = 0` is read as 1.
///
/// ```
/// use redist_plan::remap::block_to_cyclic;
/// // Seed 004, Fig. 5: 16 elements, BLOCK (b = 2) -> CYCLIC on 8 processors.
/// assert_eq!(block_to_cyclic(8, 2), vec![0, 4, 1, 5, 2, 6, 3, 7]);
/// ```
pub fn block_to_cyclic(procs: usize, z: usize) -> Vec<usize> {
    let (z, p) = (z.max(1), procs);
    if p == 0 {
        return vec![];
    }
    let g = gcd(z, p);
    let mut perm = vec![0; p];
    for i in 0..p {
        // f(i) = i·z mod P is a multiple of g; the group index ⌊i·g/P⌋ < g.
        perm[mul_mod(i, z, p) + mul_div(i, g, p)] = i;
    }
    perm
}

/// Kalns and Ni's relabelling for `CYCLIC(c)` → `BLOCK` on `procs = P`
/// processes, `z = b / c`: the inverse of [`block_to_cyclic`] (the process
/// holding cyclic place holder `f(i)` receives `BLOCK` block `i`).
///
/// ```
/// use redist_plan::remap::cyclic_to_block;
/// assert_eq!(cyclic_to_block(8, 2), vec![0, 2, 4, 6, 1, 3, 5, 7]);
/// ```
pub fn cyclic_to_block(procs: usize, z: usize) -> Vec<usize> {
    let forward = block_to_cyclic(procs, z);
    let mut perm = vec![0; forward.len()];
    for (place, &i) in forward.iter().enumerate() {
        perm[i] = place;
    }
    perm
}

/// Which closed form a dimension falls under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClosedFormRule {
    /// One process on both sides (a `*` dimension): nothing to choose.
    Identity,
    /// `BLOCK` → `CYCLIC(c)` on the same process count, `z = b / c`
    /// ([`block_to_cyclic`]).
    BlockToCyclic {
        /// Cyclic blocks per `BLOCK` block.
        z: usize,
    },
    /// `CYCLIC(c)` → `BLOCK` on the same process count, `z = b / c`
    /// ([`cyclic_to_block`]).
    CyclicToBlock {
        /// Cyclic blocks per `BLOCK` block.
        z: usize,
    },
    /// `BLOCK-CYCLIC(k·r)` → `BLOCK-CYCLIC(r)` ([`split_blocks`]).
    Split {
        /// Ratio of the source block to the target block.
        k: usize,
    },
    /// `BLOCK-CYCLIC(r)` → `BLOCK-CYCLIC(k·r)` ([`merge_blocks`]).
    Merge {
        /// Ratio of the target block to the source block.
        k: usize,
    },
}

impl fmt::Display for ClosedFormRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ClosedFormRule::Identity => write!(f, "identity (one process)"),
            ClosedFormRule::BlockToCyclic { z } => write!(f, "block -> cyclic (z = {z})"),
            ClosedFormRule::CyclicToBlock { z } => write!(f, "cyclic -> block (z = {z})"),
            ClosedFormRule::Split { k } => write!(f, "block split (k = {k})"),
            ClosedFormRule::Merge { k } => write!(f, "block merge (k = {k})"),
        }
    }
}

/// A closed-form relabelling of one dimension, before checking that it suits
/// a caller that needs a permutation of `0..Q`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosedForm {
    /// The rule that produced it.
    pub rule: ClosedFormRule,
    /// `perm[q]`: the physical processor of target position `q`; distinct ids
    /// below `max(P, Q)`, where ids `< P` are the source processes.
    pub perm: Vec<usize>,
}

impl ClosedForm {
    /// Whether `perm` is a permutation of `0..Q`, usable as a target rank map.
    /// False only when `Q < P` and the rule names a processor `≥ Q`.
    pub fn is_permutation(&self) -> bool {
        let q = self.perm.len();
        let mut seen = vec![false; q];
        self.perm
            .iter()
            .all(|&x| x < q && !std::mem::replace(&mut seen[x], true))
    }
}

/// The closed form that applies to `src` → `dst`, with the physical ids it
/// names, or `None` when no closed form covers the pair (neither block size
/// divides the other).
///
/// Dispatch: one process on both sides → identity; the same process count
/// with one side `BLOCK`-like (every process holds at most one block) and its
/// block a multiple of the other's → Kalns–Ni ([`block_to_cyclic`],
/// [`cyclic_to_block`]); otherwise a source block a multiple of the target's →
/// [`split_blocks`], a target block a multiple of the source's →
/// [`merge_blocks`]. First processes `≠ 0` are handled by rotating the
/// relabelling (Kalns–Ni, merges) or shifting its positions (splits); see
/// `docs/remapping.md`.
///
/// # Errors
///
/// - [`PlanError::ExtentMismatch`] when the two extents differ.
pub fn closed_form_mapping(src: &AxisMap, dst: &AxisMap) -> Result<Option<ClosedForm>, PlanError> {
    let n = src.extent();
    if dst.extent() != n {
        return Err(PlanError::ExtentMismatch {
            source_extent: n,
            target_extent: dst.extent(),
        });
    }
    let (p, q) = (src.procs(), dst.procs());
    let (s, t) = (src.block().max(1), dst.block().max(1));
    // A process holds at most one block: HPF BLOCK (block = ceil(n / P)).
    let one_block = |a: &AxisMap| a.block().checked_mul(a.procs()).is_none_or(|x| x >= n);
    let (fs, ft) = (src.first() % p.max(1), dst.first() % q.max(1));
    let (rule, logical) = if p == 1 && q == 1 {
        (ClosedFormRule::Identity, vec![0])
    } else if p == q && one_block(src) && s % t == 0 {
        let z = s / t;
        (ClosedFormRule::BlockToCyclic { z }, block_to_cyclic(p, z))
    } else if p == q && one_block(dst) && t % s == 0 {
        let z = t / s;
        (ClosedFormRule::CyclicToBlock { z }, cyclic_to_block(p, z))
    } else if s % t == 0 {
        let k = s / t;
        let perm = split_with_offsets(k, q, fs, ft);
        return Ok(Some(ClosedForm {
            rule: ClosedFormRule::Split { k },
            perm,
        }));
    } else if t % s == 0 {
        let k = t / s;
        (ClosedFormRule::Merge { k }, merge_blocks(k, p, q))
    } else {
        return Ok(None);
    };
    // Rotate: logical source x is physical (x + fs) mod P; physical position
    // j is logical position (j - ft) mod Q.
    let perm = (0..q)
        .map(|j| {
            let x = logical[(j + q - ft) % q];
            if x < p {
                (x + fs) % p
            } else {
                x
            }
        })
        .collect();
    Ok(Some(ClosedForm { rule, perm }))
}

/// The closed-form relabelling of one dimension as a permutation of `0..Q`
/// (`perm[q]` = physical processor of target position `q`), or `None` when no
/// closed form covers `src` → `dst` (see [`closed_form_mapping`] for the
/// dispatch).
///
/// ```
/// use redist_plan::AxisMap;
/// use redist_plan::remap::closed_form;
/// // Seed 003, Fig. 4: cyclic(10) -> cyclic(5) on 5 processors.
/// let perm = closed_form(&AxisMap::new(100, 5, 10, 0), &AxisMap::new(100, 5, 5, 0)).unwrap();
/// assert_eq!(perm, Some(vec![0, 3, 1, 4, 2]));
/// // block+1@3 -> block@3: a rotation.
/// let perm = closed_form(&AxisMap::new(9, 3, 3, 1), &AxisMap::new(9, 3, 3, 0)).unwrap();
/// assert_eq!(perm, Some(vec![1, 2, 0]));
/// // cyclic(2) -> cyclic(3): no closed form.
/// assert_eq!(closed_form(&AxisMap::new(12, 2, 2, 0), &AxisMap::new(12, 2, 3, 0)).unwrap(), None);
/// ```
///
/// # Errors
///
/// - [`PlanError::ExtentMismatch`] when the two extents differ;
/// - [`PlanError::Remap`] when the closed form applies but names a processor outside
///   `0..Q` (a block merge onto fewer processes, or a rotated source with `Q < P`);
///   [`closed_form_mapping`] returns it anyway.
pub fn closed_form(src: &AxisMap, dst: &AxisMap) -> Result<Option<Vec<usize>>, PlanError> {
    match closed_form_mapping(src, dst)? {
        None => Ok(None),
        Some(cf) if cf.is_permutation() => Ok(Some(cf.perm)),
        Some(cf) => {
            let q = cf.perm.len();
            let (j, x) = cf
                .perm
                .iter()
                .copied()
                .enumerate()
                .find(|&(_, x)| x >= q)
                .expect("distinct ids that are not a permutation of 0..Q include one >= Q");
            Err(PlanError::Remap {
                remap: "closed-form".to_string(),
                reason: format!(
                    "the {} relabelling places target position {j} on processor {x}, \
                     outside the {q} target processes; use optimal",
                    cf.rule
                ),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::AxisPlan;
    use crate::remap::optimal;
    use crate::remap::test_util::{identity, is_perm, optimal_unrestricted, plan, plan_kept};

    /// The closed form's kept data and the unrestricted optimum's.
    fn closed_vs_best(pl: &AxisPlan) -> (u64, u64) {
        let cf = closed_form_mapping(pl.source(), pl.target())
            .unwrap()
            .unwrap();
        let best = optimal_unrestricted(pl).unwrap();
        (plan_kept(pl, &cf.perm), plan_kept(pl, &best))
    }

    // --- seed 003's model of the data kept per global complete cycle -------

    /// Elements kept local per global complete cycle (GCC = `r·lcm(k·P, Q)`) by
    /// the identity relabelling of `BLOCK-CYCLIC(k·r)` over `P` →
    /// `BLOCK-CYCLIC(r)` over `Q` (first processes 0).
    ///
    /// Seed 003, eqs. 7–9 (`P = Q`) and 12–14, corrected: the cycle holds `m·P`
    /// source blocks (`m = lcm(k·P, Q)/(k·P)`); source block `i`, on processor
    /// `i mod P`, keeps `r·⌊k/Q⌋` plus `r` more when
    /// `((i mod P) − i·k) mod Q < k mod Q` — counted only when `i mod P < Q` (a
    /// processor without a target position keeps nothing). For
    /// `BLOCK-CYCLIC(r)` over `P` → `BLOCK-CYCLIC(k·r)` over `Q`, swap `P` and
    /// `Q` (the volume matrix is the transpose). Zero when `P` or `Q` is zero.
    /// Costs O(m·P).
    fn kept_per_cycle_unmapped(k: usize, r: usize, p: usize, q: usize) -> u64 {
        if p == 0 || q == 0 {
            return 0;
        }
        let k = k.max(1);
        let kp = k * p;
        let blocks = kp / gcd(kp, q) * q / k; // m·P source blocks per cycle
        let full = (k / q) as u64;
        let extra = k % q;
        let mut total = 0u64;
        for i in 0..blocks {
            let owner = i % p;
            if owner >= q {
                continue;
            }
            let start = mul_mod(i, k, q);
            let hit = (owner + q - start) % q < extra;
            total += full + u64::from(hit);
        }
        total * r as u64
    }

    /// Elements kept local per global complete cycle by `split_blocks` for
    /// `BLOCK-CYCLIC(k·r)` over `P` → `BLOCK-CYCLIC(r)` over `Q`, in seed 003's
    /// "optimal type" (`Q` divides `k·P`, i.e. `LCC_s = k·r`): `⌈k/Q⌉·min(P, Q)·r`,
    /// which is also the maximum over all relabellings. `None` outside the
    /// optimal type, where the paper gives no closed count.
    ///
    /// Seed 003, eqs. 10 and 15, corrected (`⌈k/M⌉`, not `⌊k/M⌋`; `min(P, Q)`,
    /// not `P`). For merges, swap `P` and `Q`.
    fn kept_per_cycle_mapped(k: usize, r: usize, p: usize, q: usize) -> Option<u64> {
        let k = k.max(1);
        if p == 0 || q == 0 || !(k * p).is_multiple_of(q) {
            return None;
        }
        Some((k.div_ceil(q) * p.min(q) * r) as u64)
    }

    // --- seed 003 -----------------------------------------------------------

    #[test]
    fn seed003_fig4_cyclic10_to_cyclic5() {
        let pl = plan(100, 5, 10, 0, 5, 5, 0);
        assert_eq!(plan_kept(&pl, &identity(5)), 20);
        let perm = closed_form(pl.source(), pl.target()).unwrap().unwrap();
        assert_eq!(perm, vec![0, 3, 1, 4, 2]);
        assert_eq!(plan_kept(&pl, &perm), 50);
        assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 50);
    }

    #[test]
    fn seed003_fig6_cyclic5_to_cyclic10() {
        let pl = plan(100, 5, 5, 0, 5, 10, 0);
        assert_eq!(plan_kept(&pl, &identity(5)), 20);
        let perm = closed_form(pl.source(), pl.target()).unwrap().unwrap();
        assert_eq!(perm, vec![0, 2, 4, 1, 3]);
        assert_eq!(plan_kept(&pl, &perm), 50);
        assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 50);
    }

    #[test]
    fn seed003_fifty_processors() {
        // §6.2: M = 50, r = 2. A global complete cycle is lcm(k·r·M, r·M) = k·r·M
        // indices: 200 for k = 2, where 4 stay without mapping and 100 with it.
        // The text's "k = 4 … GCC = 500" is k = 5 (12 and 100 of 500).
        for (k, gcc, unmapped) in [(2, 200, 4), (5, 500, 12)] {
            for (s, t) in [(k * 2, 2), (2, k * 2)] {
                let pl = plan(gcc, 50, s, 0, 50, t, 0);
                assert_eq!(pl.period(), gcc);
                assert_eq!(plan_kept(&pl, &identity(50)), unmapped);
                let perm = closed_form(pl.source(), pl.target()).unwrap().unwrap();
                assert_eq!(plan_kept(&pl, &perm), 100);
                assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 100);
            }
            assert_eq!(kept_per_cycle_unmapped(k, 2, 50, 50), unmapped);
            assert_eq!(kept_per_cycle_mapped(k, 2, 50, 50), Some(100));
        }
    }

    #[test]
    fn seed003_fig2_block_to_cyclic() {
        // BLOCK -> BLOCK-CYCLIC(r) on 5 processors: (a) r = 10, n = 100: 20 -> 50;
        // (b) r = 10, n = 500 and (c) r = 4, n = 100: mapping gains nothing.
        for (n, r, unmapped, mapped) in [(100, 10, 20, 50), (500, 10, 100, 100), (100, 4, 20, 20)] {
            let pl = plan(n, 5, n / 5, 0, 5, r, 0);
            assert_eq!(plan_kept(&pl, &identity(5)), unmapped);
            let perm = closed_form(pl.source(), pl.target()).unwrap().unwrap();
            assert_eq!(plan_kept(&pl, &perm), mapped);
            assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), mapped);
        }
    }

    #[test]
    fn seed003_different_processor_sets() {
        // Fig. 5: k = 2, r = 5, n = 120, P = 4 -> Q = 8 (optimal type, GCC = 40):
        // 20 kept per cycle, the maximum ratio 1 : 2.
        let pl = plan(120, 4, 10, 0, 8, 5, 0);
        let cf = closed_form_mapping(pl.source(), pl.target())
            .unwrap()
            .unwrap();
        assert_eq!(cf.perm, vec![0, 4, 1, 5, 2, 6, 3, 7]);
        assert_eq!(plan_kept(&pl, &cf.perm), 60);
        assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 60);
        assert_eq!(kept_per_cycle_mapped(2, 5, 4, 8), Some(20));
        // Fig. 8: P = 3 -> Q = 12 (LCC_s = 2kr): the mapping sequence
        // 0 6 1 7 2 8 3 9 4 10 5 11 beats the normal one, and is optimal here.
        let pl = plan(120, 3, 10, 0, 12, 5, 0);
        let cf = closed_form_mapping(pl.source(), pl.target())
            .unwrap()
            .unwrap();
        assert_eq!(cf.perm, vec![0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11]);
        let (closed, best) = closed_vs_best(&pl);
        assert!(closed > plan_kept(&pl, &identity(12)));
        assert_eq!((closed, best), (30, 30));
        // Fig. 7: P = 4 -> Q = 6 (LCC_s = 3kr, general type): mapping and normal
        // sequence keep the same, as the paper says — and that is the optimum.
        let pl = plan(120, 4, 10, 0, 6, 5, 0);
        let cf = closed_form_mapping(pl.source(), pl.target())
            .unwrap()
            .unwrap();
        assert_eq!(cf.perm, vec![0, 3, 1, 4, 2, 5]);
        assert_eq!(plan_kept(&pl, &cf.perm), plan_kept(&pl, &identity(6)));
        assert_eq!(closed_vs_best(&pl), (20, 20));
        // The general type has no closed count.
        assert_eq!(kept_per_cycle_mapped(2, 5, 4, 6), None);
    }

    #[test]
    fn printed_split_formula_breaks_where_derived_one_holds() {
        // Seed 003's eq. 1/2 as repaired from its figures: (j mod k)·⌈Q/k⌉ + ⌊j/k⌋.
        let printed = |k: usize, q: usize| -> Vec<usize> {
            (0..q).map(|j| (j % k) * q.div_ceil(k) + j / k).collect()
        };
        assert_eq!(printed(2, 5), split_blocks(2, 5));
        assert_eq!(printed(2, 8), split_blocks(2, 8));
        assert_eq!(printed(2, 12), split_blocks(2, 12));
        // Q = 7, k = 3: not a permutation.
        assert_eq!(printed(3, 7), vec![0, 3, 6, 1, 4, 7, 2]);
        assert!(is_perm(&split_blocks(3, 7), 7));
        // k > Q: it is the identity, which misses the optimum.
        let pl = plan(15, 3, 5, 0, 3, 1, 0);
        assert_eq!(printed(5, 3), identity(3));
        assert_eq!(plan_kept(&pl, &identity(3)), 5);
        assert_eq!(closed_vs_best(&pl), (6, 6));
        // Where Q mod k is 0 or k - 1 the two agree.
        for k in 1..6 {
            for q in 1..20 {
                if q % k == 0 || q % k == k - 1 {
                    assert_eq!(printed(k, q), split_blocks(k, q), "k {k} q {q}");
                }
            }
        }
    }

    #[test]
    fn kept_per_cycle_model_matches_plans() {
        for k in 1..7 {
            for r in 1..4 {
                for p in 1..8 {
                    for q in 1..8 {
                        let kp = k * p;
                        let gcc = r * (kp / gcd(kp, q) * q);
                        // Split, identity relabelling.
                        let pl = plan(gcc, p, k * r, 0, q, r, 0);
                        assert_eq!(pl.period(), gcc);
                        let id: Vec<usize> = (0..q).collect();
                        assert_eq!(
                            plan_kept(&pl, &id),
                            kept_per_cycle_unmapped(k, r, p, q),
                            "{k} {r} {p} {q}"
                        );
                        if let Some(m) = kept_per_cycle_mapped(k, r, p, q) {
                            let (closed, best) = closed_vs_best(&pl);
                            assert_eq!((closed, best), (m, m), "split k {k} r {r} P {p} Q {q}");
                        }
                        // Merge: swap P and Q.
                        let pl = plan(gcc, q, r, 0, p, k * r, 0);
                        let id: Vec<usize> = (0..p).collect();
                        assert_eq!(plan_kept(&pl, &id), kept_per_cycle_unmapped(k, r, p, q));
                        if let Some(m) = kept_per_cycle_mapped(k, r, p, q) {
                            let (closed, best) = closed_vs_best(&pl);
                            assert_eq!((closed, best), (m, m), "merge k {k} r {r} P {q} Q {p}");
                        }
                    }
                }
            }
        }
    }

    // --- seed 004 -----------------------------------------------------------

    #[test]
    fn seed004_fig5_block_to_cyclic_sixteen_elements() {
        // 16 elements on 8 processors: BLOCK (b = 2) -> CYCLIC. The usual order
        // keeps 2 elements, the permutation 0 4 1 5 2 6 3 7 keeps 8 (one per
        // processor), the maximum hit ratio c/b = 1/2.
        let pl = plan(16, 8, 2, 0, 8, 1, 0);
        assert_eq!(plan_kept(&pl, &identity(8)), 2);
        let cf = closed_form_mapping(pl.source(), pl.target())
            .unwrap()
            .unwrap();
        assert_eq!(cf.rule, ClosedFormRule::BlockToCyclic { z: 2 });
        assert_eq!(cf.perm, vec![0, 4, 1, 5, 2, 6, 3, 7]);
        assert_eq!(plan_kept(&pl, &cf.perm), 8);
        assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 8);
        // And back: CYCLIC -> BLOCK keeps the same 8.
        let back = plan(16, 8, 1, 0, 8, 2, 0);
        let cf = closed_form_mapping(back.source(), back.target())
            .unwrap()
            .unwrap();
        assert_eq!(cf.rule, ClosedFormRule::CyclicToBlock { z: 2 });
        assert_eq!(plan_kept(&back, &cf.perm), 8);
    }

    #[test]
    fn seed004_fig6_shared_place_holders() {
        // z = 4, P = 6: f(i) = 4i mod 6 sends processes 0 and 3 to q0, 2 and 5 to
        // q2, 1 and 4 to q4; each pair spreads over two place holders.
        let perm = block_to_cyclic(6, 4);
        assert_eq!(perm, vec![0, 3, 2, 5, 1, 4]);
        // n = b·P = 24, c = 1: hit ratio c·P·⌈z/P⌉ / N = 6 / 24.
        let pl = plan(24, 6, 4, 0, 6, 1, 0);
        assert_eq!(plan_kept(&pl, &perm), 6);
        assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 6);
    }

    #[test]
    fn kalns_ni_is_the_split_with_equal_counts_and_optimal_when_n_is_b_p() {
        for p in 1..10 {
            for z in 1..14 {
                assert_eq!(block_to_cyclic(p, z), split_blocks(z, p));
                for c in 1..4 {
                    let b = z * c;
                    for (fs, ft) in [(0, 0), (p / 2, p - 1)] {
                        let pl = plan(b * p, p, b, fs, p, c, ft);
                        let (closed, best) = closed_vs_best(&pl);
                        // Max hit ratio: c·⌈z/P⌉ per process.
                        assert_eq!(
                            (closed, best),
                            ((c * z.div_ceil(p) * p) as u64, best),
                            "P {p} z {z} c {c}"
                        );
                        assert_eq!(closed, best);
                        let back = plan(b * p, p, c, ft, p, b, fs);
                        assert_eq!(
                            plan_kept(
                                &back,
                                &closed_form(back.source(), back.target()).unwrap().unwrap()
                            ),
                            best
                        );
                    }
                }
            }
        }
    }

    // --- optimality sweeps and gaps ----------------------------------------

    /// Every split and merge over a whole number of global complete cycles,
    /// with first processes, in seed 003's optimal type (where it claims
    /// optimality) and in its general type (where it does not): the derived
    /// closed forms reach the exact optimum in every case.
    #[test]
    fn closed_forms_are_optimal_on_whole_cycles() {
        let mut general = 0;
        for k in 1..9 {
            for p in 1..9 {
                for q in 1..9 {
                    for r in [1, 3] {
                        for (fs, ft) in [(0, 0), (p - 1, 0), (0, q / 2), (p / 2, q - 1)] {
                            let kp = k * p;
                            let split_cycle = r * (kp / gcd(kp, q) * q);
                            let pl = plan(split_cycle, p, k * r, fs, q, r, ft);
                            let (closed, best) = closed_vs_best(&pl);
                            assert_eq!(
                                closed, best,
                                "split k {k} P {p} Q {q} r {r} first {fs},{ft}"
                            );
                            let cf = closed_form_mapping(pl.source(), pl.target())
                                .unwrap()
                                .unwrap();
                            assert!(cf.is_permutation(), "split k {k} P {p} Q {q}");
                            if p > q || k > 1 {
                                // The best permutation of 0..Q is as good.
                                assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), best);
                            }
                            general += usize::from(kp % q != 0);

                            let kq = k * q;
                            let merge_cycle = r * (kq / gcd(kq, p) * p);
                            let pl = plan(2 * merge_cycle, p, r, fs, q, k * r, ft);
                            let (closed, best) = closed_vs_best(&pl);
                            assert_eq!(
                                closed, best,
                                "merge k {k} P {p} Q {q} r {r} first {fs},{ft}"
                            );
                            general += usize::from(kq % p != 0);
                        }
                    }
                }
            }
        }
        assert!(general > 1000);
    }

    #[test]
    fn closed_forms_fall_short_on_partial_cycles() {
        // BLOCK over 4 processes with the last block short: n = 13 and 14
        // (b = 4) -> CYCLIC(2). The closed form keeps 6 where the optimum keeps
        // 7 and 8: it aims at the blocks of a whole cycle, and the short last
        // block changes which position is best for its processor.
        assert_eq!(closed_vs_best(&plan(13, 4, 4, 0, 4, 2, 0)), (6, 7));
        assert_eq!(closed_vs_best(&plan(14, 4, 4, 0, 4, 2, 0)), (6, 8));
        // The same with n = b·P = 16 is optimal (Kalns–Ni's assumption).
        assert_eq!(closed_vs_best(&plan(16, 4, 4, 0, 4, 2, 0)), (8, 8));
        // Over many ragged extents the closed form is sometimes short, never better.
        let (mut short, mut cases) = (0, 0);
        for k in 1..6 {
            for p in 1..7 {
                for q in 1..7 {
                    for n in [7, 20, 45, 64, 99] {
                        let pl = plan(n, p, 2 * k, 0, q, 2, 0);
                        let (closed, best) = closed_vs_best(&pl);
                        assert!(closed <= best);
                        cases += 1;
                        short += usize::from(closed < best);
                    }
                }
            }
        }
        assert!(short > 0 && short < cases, "{short} of {cases}");
    }

    #[test]
    fn merge_onto_fewer_processes_may_not_be_a_permutation() {
        let src = AxisMap::new(8, 4, 1, 0);
        let dst = AxisMap::new(8, 2, 2, 0);
        let cf = closed_form_mapping(&src, &dst).unwrap().unwrap();
        assert_eq!(cf.rule, ClosedFormRule::Merge { k: 2 });
        assert_eq!(cf.perm, vec![0, 2]);
        assert!(!cf.is_permutation());
        assert!(matches!(
            closed_form(&src, &dst),
            Err(PlanError::Remap { .. })
        ));
        // The unrestricted optimum agrees; the best permutation of 0..2 keeps less.
        let pl = AxisPlan::new(&src, &dst).unwrap();
        assert_eq!(plan_kept(&pl, &cf.perm), 4);
        assert_eq!(plan_kept(&pl, &optimal_unrestricted(&pl).unwrap()), 4);
        assert_eq!(plan_kept(&pl, &optimal(&pl).unwrap()), 2);
        // A split onto fewer processes stays within 0..Q.
        let cf = closed_form_mapping(&dst, &src).unwrap().unwrap();
        assert!(cf.is_permutation());
    }

    #[test]
    fn design_md_rotation_moves_nothing() {
        // block+1@3 -> block@3: the first process differs (1 vs 0).
        for n in [3usize, 9, 10, 100] {
            let b = n.div_ceil(3);
            let pl = plan(n, 3, b, 1, 3, b, 0);
            assert_eq!(plan_kept(&pl, &identity(3)), 0);
            let best = optimal(&pl).unwrap();
            assert_eq!(plan_kept(&pl, &best), n as u64);
            let cf = closed_form_mapping(pl.source(), pl.target())
                .unwrap()
                .unwrap();
            assert_eq!(cf.perm, vec![1, 2, 0]);
            assert_eq!(plan_kept(&pl, &cf.perm), n as u64);
        }
    }

    #[test]
    fn collapsed_and_uncovered_dimensions() {
        // `*`: one process on both sides.
        let a = AxisMap::new(10, 1, 10, 0);
        let cf = closed_form_mapping(&a, &a).unwrap().unwrap();
        assert_eq!((cf.rule, cf.perm), (ClosedFormRule::Identity, vec![0]));
        // cyclic(2) -> cyclic(3): neither block divides the other.
        assert_eq!(
            closed_form(&AxisMap::new(30, 3, 2, 0), &AxisMap::new(30, 3, 3, 0)).unwrap(),
            None
        );
        // Extents must agree.
        assert!(matches!(
            closed_form(&AxisMap::new(30, 3, 2, 0), &AxisMap::new(31, 3, 2, 0)),
            Err(PlanError::ExtentMismatch { .. })
        ));
    }
}
