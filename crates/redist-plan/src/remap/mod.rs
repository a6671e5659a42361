//! Processor remapping: choosing where each target process lives so that as
//! much data as possible stays where it already is.
//!
//! A redistribution fixes *which* indices each target process owns, but the
//! target's processes are only logical: target position `q` may be placed on
//! any physical processor. A **relabelling** of a 1-D target with `Q`
//! processes is a vector `perm` of length `Q`, where `perm[q]` is the physical
//! processor on which logical target process `q` is placed. Physical ids below
//! the source process count `P` coincide with source processes; the data kept
//! local is `Σ_q volume(perm[q], q)`, where ids `≥ P` hold no source data and
//! contribute nothing ([`kept`]).
//!
//! Two tools live here:
//!
//! - the exact referee, [`assign_max`]: a maximum-weight perfect assignment
//!   (Hungarian method with potentials, O(n³)), used on the volume matrix of
//!   one dimension ([`optimal`]) or of whole ranks;
//! - the closed forms of the papers, per dimension ([`fn@closed_form`]): a
//!   relabelling computed in O(Q) from the block sizes and process counts.
//!
//! # Closed forms
//!
//! Per dimension, with the source `BLOCK-CYCLIC(s)` over `P` processes and
//! the target `BLOCK-CYCLIC(t)` over `Q`: splitting blocks, `s = k·t`
//! ([`split_blocks`]), and merging them, `t = k·s` ([`merge_blocks`]), after
//! Hsu, Chung, Yang and Dow (IEEE TPDS 12(7), 2001, seed 003); `BLOCK` ↔
//! `CYCLIC(c)` on `P` processes on both sides ([`block_to_cyclic`],
//! [`cyclic_to_block`]) after Kalns and Ni (IEEE TPDS 6(12), 1995, seed 004);
//! other first processes by rotating the relabelling or shifting its
//! positions. The printed formulas of seed 003 are damaged; ours are
//! re-derived from its figures and proofs, with the exact optimum as
//! referee. Over a whole number of global complete cycles the closed forms
//! reach that optimum (also where seed 003 claims only a reduction); they
//! can fall short on partial cycles, and a merge onto fewer processes may
//! need processors outside `0..Q`, which [`fn@closed_form`] refuses. The
//! formulas, the errata of seed 003 and how they were checked against the
//! figures of seeds 003 and 004, and where the closed forms are optimal or
//! fall short: see `docs/remapping.md`.

mod assignment;
mod axis;
mod closed_form;
mod relabel;
mod sparse;
#[cfg(test)]
mod test_util;

pub use assignment::assign_max;
pub use axis::{kept, optimal};
pub use closed_form::{
    block_to_cyclic, closed_form, closed_form_mapping, cyclic_to_block, merge_blocks, split_blocks,
    ClosedForm, ClosedFormRule,
};
pub use relabel::{optimal_relabelling, Method, Relabelling, SPARSE_PER_RANK};

use crate::coords::{coords_to_rank, rank_to_coords, Order};
use crate::error::PlanError;
use crate::layout::Layout;
use crate::options::Remap;
use crate::plan::{AxisPlan, Window};

/// Most target ranks for which [`Remap::Optimal`] solves the dense
/// assignment, O(R³) (seconds at 4096); above, it solves on the volume
/// matrix's non-zeros, or per dimension ([`optimal_relabelling`]).
pub const OPTIMAL_RANKS_MAX: usize = 1 << 12;

/// How many (source rank, target position) pairs exchange data, counted
/// from the per-dimension volumes without listing them: O(ranks × dims +
/// pairs per dimension).
pub(crate) fn message_count(source: &Layout, axes: &[AxisPlan]) -> usize {
    // Per dimension and source coordinate: target coordinates receiving anything.
    let partners: Vec<Vec<usize>> = axes
        .iter()
        .map(|plan| {
            let mut count = vec![0; plan.source().procs()];
            for (p, _, _) in plan.pairs() {
                count[p] += 1;
            }
            count
        })
        .collect();
    (0..source.ranks())
        .map(|a| {
            let coords = source.coords_of_rank(a).unwrap_or_default();
            coords
                .iter()
                .zip(&partners)
                .map(|(&p, list)| list.get(p).copied().unwrap_or(0))
                .fold(1usize, usize::saturating_mul)
        })
        .fold(0usize, usize::saturating_add)
}

/// Non-zero volumes `(source rank, target position, elements)` of an n-D
/// redistribution, target positions being row-major indices of the target's
/// grid coordinates (before any rank map).
pub(crate) fn position_volumes(
    source: &Layout,
    target: &Layout,
    axes: &[AxisPlan],
) -> Vec<(usize, usize, usize)> {
    let grid = target.grid_extents();
    let mut out = vec![];
    for a in 0..source.ranks() {
        let coords = source.coords_of_rank(a).expect("rank within layout");
        // Per dimension, the target coordinates receiving anything, with volumes.
        let per_dim: Vec<Vec<(usize, usize)>> = axes
            .iter()
            .zip(&coords)
            .map(|(plan, &p)| plan.targets_of(p).collect())
            .collect();
        let mut partial: Vec<(Vec<usize>, usize)> = vec![(vec![], 1)];
        for list in &per_dim {
            partial = partial
                .into_iter()
                .flat_map(|(c, v)| {
                    list.iter().map(move |&(q, w)| {
                        let mut c = c.clone();
                        c.push(q);
                        (c, v * w)
                    })
                })
                .collect();
        }
        for (c, v) in partial {
            let position =
                coords_to_rank(&c, grid, Order::RowMajor).expect("coordinates within grid");
            out.push((a, position, v));
        }
    }
    out
}

/// The target layout with the rank map `remap` chooses for moving `window`
/// of arrays laid out as `source` onto arrays laid out as `target` (with
/// [`Remap::None`], `target` itself), and for [`Remap::Optimal`] what the
/// relabelling keeps and how close to the optimum it is. Pure: every rank
/// computes the same.
pub(crate) fn target_for(
    source: &Layout,
    target: &Layout,
    window: &Window,
    remap: Remap,
) -> Result<(Layout, Option<Relabelling>), PlanError> {
    crate::plan::check_window(source, target, window, remap)?;
    match remap {
        Remap::None => Ok((target.clone(), None)),
        Remap::ClosedForm => {
            let map = closed_form_rank_map(source, target)?;
            Ok((target.clone().with_rank_map(map)?, None))
        }
        Remap::Optimal => {
            let r = optimal_relabelling(source, target, window)?;
            Ok((target.clone().with_rank_map(r.map.clone())?, Some(r)))
        }
    }
}

/// The composition of per-dimension closed-form relabellings.
fn closed_form_rank_map(source: &Layout, target: &Layout) -> Result<Vec<usize>, PlanError> {
    let refuse = |reason: String| PlanError::Remap {
        remap: Remap::ClosedForm.to_string(),
        reason,
    };
    if source.grid_extents() != target.grid_extents() {
        return Err(refuse(format!(
            "closed forms relabel each dimension separately and need grids of the same shape, \
             not {:?} and {:?}; use Remap::Optimal",
            source.grid_extents(),
            target.grid_extents()
        )));
    }
    let mut perms = vec![];
    for (d, (s, t)) in source.axes().iter().zip(target.axes()).enumerate() {
        match closed_form(s, t)? {
            Some(p) => perms.push(p),
            None => {
                return Err(refuse(format!(
                    "no closed form covers dimension {d} ({} -> {}); they cover block sizes \
                     where one divides the other; use Remap::Optimal",
                    source.spec().dists()[d],
                    target.spec().dists()[d]
                )))
            }
        }
    }
    let grid = target.grid_extents();
    (0..target.ranks())
        .map(|position| {
            let c = rank_to_coords(position, grid, Order::RowMajor).expect("position within grid");
            let physical: Vec<usize> = c.iter().zip(&perms).map(|(&x, p)| p[x]).collect();
            source.rank_of_coords(&physical)
        })
        .collect()
}
