//! Padding: ghost layers around the local parts a redistribution reads and
//! writes.
//!
//! An array with ghost layers (for a stencil solver) stores each rank's
//! local part padded by `w_d` cells on both sides of axis `d`: per axis
//! the storage extent is `m_d + 2 w_d`, and the local part, its interior,
//! starts at `w_d` on every axis. The layout and its index maps do not
//! change, so a redistribution plans the same messages whatever the
//! padding; only its copy programs see it, as larger strides and offsets
//! into the interior (ScaLAPACK's leading dimension larger than the local
//! rows, in any number of dimensions). A [`Padding`] says so for both
//! sides, each in its own layout's axis order. Data only: the program
//! builder reads it (`program/`), and the engine compares it with the
//! arrays it is handed.

use crate::error::PlanError;
use crate::layout::Layout;

/// The ghost widths around the local parts of a redistribution's source
/// and target arrays: per axis of each side's layout, in that layout's
/// own axis order, the cells of padding on both sides of the local part.
/// Empty (or all zero) means a side stores its local part unpadded, the
/// default. The padding is the same on every rank of a layout; a rank
/// that holds no part of the layout holds no padding either.
///
/// ```
/// use redist_plan::{Layout, Padding};
/// let source = Layout::parse(&[10, 8], "block,*@2x1")?;
/// let target = Layout::parse(&[10, 8], "*,block@1x2")?;
/// let padding = Padding::new(&[1, 2], &[]);
/// padding.check(&source, &target)?;
/// // Rank 0 holds 5 x 8 source elements in (5 + 2) x (8 + 4) of storage.
/// assert_eq!(padding.source_len(&source, 0), Some(7 * 12));
/// assert_eq!(padding.target_len(&target, 0), Some(10 * 4));
/// assert!(Padding::new(&[0, 0], &[0, 0]).is_none());
/// # Ok::<(), redist_plan::PlanError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Padding {
    source: Vec<usize>,
    target: Vec<usize>,
}

impl Padding {
    /// `source[d]` ghost layers around the source's local parts on axis
    /// `d` of the source layout, `target[d]` around the target's on axis
    /// `d` of the target layout; an empty or all-zero side has none (and
    /// is kept as empty, so that paddings that store alike compare equal).
    pub fn new(source: &[usize], target: &[usize]) -> Padding {
        let side = |w: &[usize]| {
            if w.iter().all(|&x| x == 0) {
                Vec::new()
            } else {
                w.to_vec()
            }
        };
        Padding {
            source: side(source),
            target: side(target),
        }
    }

    /// The source's ghost widths per axis; empty where it has none.
    pub fn source(&self) -> &[usize] {
        &self.source
    }

    /// The target's ghost widths per axis; empty where it has none.
    pub fn target(&self) -> &[usize] {
        &self.target
    }

    /// Whether neither side is padded.
    pub fn is_none(&self) -> bool {
        self.source.is_empty() && self.target.is_empty()
    }

    /// The source's width on axis `d` (0 where unpadded).
    pub fn source_width(&self, d: usize) -> usize {
        self.source.get(d).copied().unwrap_or(0)
    }

    /// The target's width on axis `d` (0 where unpadded).
    pub fn target_width(&self, d: usize) -> usize {
        self.target.get(d).copied().unwrap_or(0)
    }

    /// Whether an array with ghost widths `widths` (one per axis, as
    /// `DistArray::ghost_widths` gives them) is stored as the source side
    /// says.
    pub fn source_is(&self, widths: &[usize]) -> bool {
        same_widths(&self.source, widths)
    }

    /// Whether an array with ghost widths `widths` is stored as the target
    /// side says.
    pub fn target_is(&self, widths: &[usize]) -> bool {
        same_widths(&self.target, widths)
    }

    /// The padding with the target's axes seen in another order: axis `d`
    /// of the result's target is the target's axis `axes[d]` (how a
    /// redistribution that permutes axes sees its target in the source's
    /// axis order). Where the target is unpadded, or `axes` names an axis
    /// it has no width for, the result's target is unpadded there.
    pub fn target_seen(&self, axes: &[usize]) -> Padding {
        let target: Vec<usize> = axes.iter().map(|&a| self.target_width(a)).collect();
        Padding::new(&self.source, &target)
    }

    /// Checks that each padded side has one width per axis of its layout,
    /// and that every rank's padded storage can be counted in `usize`.
    ///
    /// # Errors
    ///
    /// - [`PlanError::InvalidArgument`] when a side's widths are neither
    ///   empty nor one per axis of its layout;
    /// - [`PlanError::Limit`] when some rank's padded local storage would
    ///   hold more than `usize::MAX` elements.
    pub fn check(&self, source: &Layout, target: &Layout) -> Result<(), PlanError> {
        check_side("source ghost widths", &self.source, source)?;
        check_side("target ghost widths", &self.target, target)
    }

    /// Elements of `rank`'s padded storage of the source laid out as
    /// `layout` (its local part and the ghosts around it); `None` for a
    /// rank outside the layout, or widths that do not fit it.
    pub fn source_len(&self, layout: &Layout, rank: usize) -> Option<usize> {
        padded_len(layout, rank, &self.source)
    }

    /// Elements of `rank`'s padded storage of the target laid out as
    /// `layout`; `None` as for [`source_len`](Self::source_len).
    pub fn target_len(&self, layout: &Layout, rank: usize) -> Option<usize> {
        padded_len(layout, rank, &self.target)
    }
}

/// Whether planned `widths` (empty: none) are an array's `got`.
fn same_widths(widths: &[usize], got: &[usize]) -> bool {
    if widths.is_empty() {
        got.iter().all(|&w| w == 0)
    } else {
        widths == got
    }
}

/// Elements of `rank`'s local part of `layout` padded by `widths` (empty:
/// none), or `None` for a rank outside the layout or widths that are not
/// one per axis.
fn padded_len(layout: &Layout, rank: usize, widths: &[usize]) -> Option<usize> {
    let shape = layout.local_shape(rank).ok()?;
    if widths.is_empty() {
        return Some(shape.iter().product());
    }
    if widths.len() != shape.len() {
        return None;
    }
    (shape.iter().zip(widths)).try_fold(1usize, |n, (&m, &w)| {
        n.checked_mul(w.checked_mul(2)?.checked_add(m)?)
    })
}

/// [`Padding::check`] of one side: `what` names it.
fn check_side(what: &'static str, widths: &[usize], layout: &Layout) -> Result<(), PlanError> {
    if widths.is_empty() {
        return Ok(());
    }
    if widths.len() != layout.ndim() {
        return Err(PlanError::InvalidArgument {
            what,
            value: format!("{widths:?}"),
            expected: format!(
                "one width per axis of {layout} ({} of them), or none",
                layout.ndim()
            ),
        });
    }
    // The first process of an axis holds the most of it: the largest
    // padded storage of any rank is the product of those extents.
    let most = (layout.axes().iter().zip(widths)).fold(1u128, |n, (a, &w)| {
        let extent = a.local_extent(a.first()) as u128 + 2 * w as u128;
        n.saturating_mul(extent)
    });
    if most > usize::MAX as u128 {
        return Err(PlanError::Limit {
            what,
            value: most,
            limit: usize::MAX as u128,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_zero_widths_are_no_padding() {
        assert_eq!(Padding::new(&[0, 0], &[]), Padding::default());
        assert!(Padding::new(&[0], &[0, 0, 0]).is_none());
        let p = Padding::new(&[0, 1], &[0, 0]);
        assert_eq!((p.source(), p.target()), (&[0, 1][..], &[][..]));
        assert!(p.source_is(&[0, 1]) && !p.source_is(&[0, 0]));
        assert!(p.target_is(&[0, 0]) && !p.target_is(&[1, 0]));
    }

    #[test]
    fn padded_lengths_and_checks() {
        let l = Layout::parse(&[10, 7], "block,cyclic(2)@3x2").unwrap();
        let p = Padding::new(&[2, 1], &[1, 0]);
        p.check(&l, &l).unwrap();
        for r in 0..l.ranks() {
            let s = l.local_shape(r).unwrap();
            assert_eq!(p.source_len(&l, r), Some((s[0] + 4) * (s[1] + 2)));
            assert_eq!(p.target_len(&l, r), Some((s[0] + 2) * s[1]));
        }
        assert_eq!(p.source_len(&l, 6), None);
        assert!(matches!(
            Padding::new(&[1], &[]).check(&l, &l),
            Err(PlanError::InvalidArgument { .. })
        ));
        assert!(matches!(
            Padding::new(&[], &[usize::MAX / 4, 1]).check(&l, &l),
            Err(PlanError::Limit { .. })
        ));
        // The target of a transpose, seen in the source's axis order.
        let seen = Padding::new(&[], &[3, 1]).target_seen(&[1, 0]);
        assert_eq!(seen.target(), &[1, 3]);
    }
}
