//! One axis of a rank's padded storage as segments: its interior, and the
//! runs of ghost cells each owned by one coordinate of the grid's axis.

use crate::layout::axis::AxisMap;

/// Which part of a padded axis a segment lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    /// The rank's own indices.
    Interior,
    /// Ghosts before (low) or after (high) them.
    Ghost,
}

/// A run of consecutive padded indices of one rank along one axis, all
/// owned by one coordinate, whose local indices there are consecutive too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Segment {
    pub side: Side,
    /// First padded index (interior indices start at the width).
    pub at: usize,
    pub len: usize,
    /// The coordinate owning the run.
    pub owner: usize,
    /// The owner's local index of the run's first cell (not padded).
    pub from: usize,
}

/// The segments of coordinate `c` along `axis` with `width` ghosts on
/// each side, `periodic` or not, in padded order. None where `c` holds no
/// index (it has no ghosts to fill). Beyond a non-periodic axis's ends no
/// segment: those ghosts are the caller's. The axis holds one block per
/// coordinate (checked by the spec), so `c`'s indices are one range.
pub(super) fn segments(axis: &AxisMap, c: usize, width: usize, periodic: bool) -> Vec<Segment> {
    let m = axis.local_extent(c);
    if m == 0 {
        return Vec::new();
    }
    let lo = axis.global_index(c, 0);
    let mut out = Vec::with_capacity(3);
    // Low ghosts: global indices lo - width .. lo.
    ghost_runs(
        axis,
        0,
        lo as i128 - width as i128,
        width,
        periodic,
        &mut out,
    );
    out.push(Segment {
        side: Side::Interior,
        at: width,
        len: m,
        owner: c,
        from: 0,
    });
    // High ghosts: global indices lo + m .. lo + m + width.
    ghost_runs(axis, width + m, (lo + m) as i128, width, periodic, &mut out);
    debug_assert!(out
        .iter()
        .all(|s| s.len > 0 && s.at + s.len <= m + 2 * width));
    out
}

/// The ghost runs of `count` padded indices from `at`, which hold global
/// indices from `first` on (negative or past the end before wrapping).
fn ghost_runs(
    axis: &AxisMap,
    at: usize,
    first: i128,
    count: usize,
    periodic: bool,
    out: &mut Vec<Segment>,
) {
    let n = axis.extent() as i128;
    let mut k = 0;
    while k < count {
        let g = first + k as i128;
        let inside = (0..n).contains(&g);
        if !inside && !periodic {
            // The caller's boundary: skip to the next index inside, if any.
            k += if g < 0 { (-g) as usize } else { count - k };
            continue;
        }
        let g = g.rem_euclid(n) as usize;
        let owner = axis.owner(g);
        let from = axis.local_index(g);
        // To the end of the owner's block, of the axis, and of the ghosts.
        let len = (axis.local_extent(owner) - from)
            .min(axis.extent() - g)
            .min(count - k);
        out.push(Segment {
            side: Side::Ghost,
            at: at + k,
            len,
            owner,
            from,
        });
        k += len;
    }
}
