//! 1-D relabellings over an [`AxisPlan`]: the data a relabelling keeps
//! ([`kept`]) and the exact optimum ([`optimal`]).

use super::assign_max;
use crate::error::PlanError;
use crate::plan::AxisPlan;

/// The data a relabelling keeps local: `Σ_q volume(perm[q], q)` over the
/// positions `q` whose physical id `perm[q]` is a source process
/// (`perm[q] < sources`); other ids hold no source data.
///
/// ```
/// use redist_plan::AxisMap;
/// use redist_plan::{remap::kept, AxisPlan};
/// // Seed 003, Fig. 4: BLOCK-CYCLIC(10) -> BLOCK-CYCLIC(5) on 5 processors, n = 100.
/// let plan = AxisPlan::new(&AxisMap::new(100, 5, 10, 0), &AxisMap::new(100, 5, 5, 0)).unwrap();
/// let v = |p, q| plan.volume(p, q) as u64;
/// assert_eq!(kept(v, &[0, 1, 2, 3, 4], 5), 20);
/// assert_eq!(kept(v, &[0, 3, 1, 4, 2], 5), 50);
/// ```
pub fn kept(volume: impl Fn(usize, usize) -> u64, perm: &[usize], sources: usize) -> u64 {
    perm.iter()
        .enumerate()
        .filter(|&(_, &x)| x < sources)
        .map(|(q, &x)| volume(x, q))
        .sum()
}

/// The best relabelling of a 1-D target that is a permutation of `0..Q`: the
/// exact optimum of [`kept`] over all of them (an assignment on the `Q × Q`
/// volume matrix, rows `≥ P` zero).
///
/// ```
/// use redist_plan::AxisMap;
/// use redist_plan::{remap::{kept, optimal}, AxisPlan};
/// // block+1@3 -> block@3 on 9 indices: a rotation, nothing needs to move.
/// let plan = AxisPlan::new(&AxisMap::new(9, 3, 3, 1), &AxisMap::new(9, 3, 3, 0)).unwrap();
/// let perm = optimal(&plan).unwrap();
/// assert_eq!(perm, vec![1, 2, 0]);
/// assert_eq!(kept(|p, q| plan.volume(p, q) as u64, &perm, 3), 9);
/// ```
///
/// # Errors
///
/// None: it always returns `Ok` (the matrix it builds is square, the one thing
/// [`assign_max`] checks).
pub fn optimal(plan: &AxisPlan) -> Result<Vec<usize>, PlanError> {
    let (p, q) = (plan.source().procs(), plan.target().procs());
    let w: Vec<Vec<u64>> = (0..q)
        .map(|x| {
            (0..q)
                .map(|j| if x < p { plan.volume(x, j) as u64 } else { 0 })
                .collect()
        })
        .collect();
    assign_max(&w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remap::closed_form_mapping;
    use crate::remap::test_util::{identity, is_perm, optimal_unrestricted, plan, plan_kept};
    use quickcheck::quickcheck;

    quickcheck! {
        fn optimum_beats_identity_and_closed_forms(n: u16, p: u8, s: u8, fs: u8, q: u8, t: u8, ft: u8) -> bool {
            let (p, q) = (p as usize % 6 + 1, q as usize % 6 + 1);
            let pl = plan(n as usize % 200, p, s as usize % 8 + 1, fs as usize % p, q, t as usize % 8 + 1, ft as usize % q);
            let best = optimal(&pl).unwrap();
            let free = optimal_unrestricted(&pl).unwrap();
            let ok = is_perm(&best, q)
                && plan_kept(&pl, &best) >= plan_kept(&pl, &identity(q))
                && plan_kept(&pl, &free) >= plan_kept(&pl, &best);
            ok && match closed_form_mapping(pl.source(), pl.target()).unwrap() {
                None => true,
                Some(cf) => {
                    let mut ids = cf.perm.clone();
                    ids.sort_unstable();
                    ids.dedup();
                    ids.len() == q
                        && ids.iter().all(|&x| x < p.max(q))
                        && plan_kept(&pl, &cf.perm) <= plan_kept(&pl, &free)
                        && (!cf.is_permutation() || plan_kept(&pl, &cf.perm) <= plan_kept(&pl, &best))
                }
            }
        }
    }
}
