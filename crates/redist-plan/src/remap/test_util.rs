//! Helpers shared by the tests of the remapping modules: 1-D plans,
//! permutations, and the unrestricted optimum that referees the closed
//! forms.

use super::{assign_max, kept};
use crate::layout::axis::AxisMap;
use crate::plan::AxisPlan;

pub(super) fn plan(
    n: usize,
    p: usize,
    s: usize,
    fs: usize,
    q: usize,
    t: usize,
    ft: usize,
) -> AxisPlan {
    AxisPlan::new(&AxisMap::new(n, p, s, fs), &AxisMap::new(n, q, t, ft)).unwrap()
}

pub(super) fn identity(q: usize) -> Vec<usize> {
    (0..q).collect()
}

pub(super) fn is_perm(a: &[usize], n: usize) -> bool {
    let mut s = a.to_vec();
    s.sort_unstable();
    s == identity(n)
}

/// The data `perm` keeps local in the 1-D plan `plan` (`kept` on its volumes).
pub(super) fn plan_kept(plan: &AxisPlan, perm: &[usize]) -> u64 {
    kept(|p, q| plan.volume(p, q) as u64, perm, plan.source().procs())
}

/// The square volume matrix of a 1-D plan over `R = max(P, Q)` physical ids:
/// `m[p][q] = plan.volume(p, q)`, zero for ids `p ≥ P` (no source data) and
/// for padding columns `q ≥ Q`.
fn volume_matrix(plan: &AxisPlan) -> Vec<Vec<u64>> {
    let (p, q) = (plan.source().procs(), plan.target().procs());
    let r = p.max(q);
    (0..r)
        .map(|x| {
            (0..r)
                .map(|j| {
                    if x < p && j < q {
                        plan.volume(x, j) as u64
                    } else {
                        0
                    }
                })
                .collect()
        })
        .collect()
}

/// The best relabelling of a 1-D target when target positions may be placed
/// on any of `max(P, Q)` physical processors (seed 003's model): `perm[q] <
/// max(P, Q)`, distinct. Equals `optimal` when `Q ≥ P`; when `Q < P` it may
/// name processors `≥ Q`. Always `Ok`: the matrix it builds is square, the
/// one thing `assign_max` checks.
pub(super) fn optimal_unrestricted(plan: &AxisPlan) -> Result<Vec<usize>, crate::PlanError> {
    let q = plan.target().procs();
    let mut a = assign_max(&volume_matrix(plan))?;
    a.truncate(q);
    Ok(a)
}
