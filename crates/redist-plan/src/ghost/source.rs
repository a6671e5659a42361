//! Which global index a padded cell holds after an update, computed cell by
//! cell from the layout's index maps: the check of an update, never the way
//! one moves data (that is [`RankGhosts`](super::RankGhosts), box by box).

use super::spec::{Corners, GhostSpec};
use crate::layout::Layout;

/// The global index that cell `padded` (an index into `rank`'s padded
/// storage) holds after an update `spec` on `layout`: an interior cell its
/// own, a ghost its neighbour's; `None` for a cell no update writes (beyond
/// the end of a non-periodic axis, an edge or corner of a star update, any
/// cell of an empty part or of a rank outside the layout).
///
/// ```
/// use redist_plan::ghost::{cell_source, Corners, GhostSpec};
/// use redist_plan::Layout;
/// let layout = Layout::parse(&[8], "block@2")?;
/// let spec = GhostSpec::new(&[1], &[true], Corners::Box);
/// assert_eq!(cell_source(&layout, &spec, 0, &[0]), Some(vec![7])); // wrapped round
/// assert_eq!(cell_source(&layout, &spec, 0, &[5]), Some(vec![4])); // rank 1's first
/// let open = GhostSpec::new(&[1], &[false], Corners::Box);
/// assert_eq!(cell_source(&layout, &open, 0, &[0]), None); // the boundary
/// # Ok::<(), redist_plan::PlanError>(())
/// ```
pub fn cell_source(
    layout: &Layout,
    spec: &GhostSpec,
    rank: usize,
    padded: &[usize],
) -> Option<Vec<usize>> {
    let local = layout.local_shape(rank).ok()?;
    let coords = layout.coords_of_rank(rank).ok()?;
    if local.contains(&0) || padded.len() != local.len() {
        return None;
    }
    let mut g = vec![0; padded.len()];
    let mut ghosts = 0;
    for d in 0..padded.len() {
        let (w, m, p) = (spec.widths()[d], local[d], padded[d]);
        let axis = layout.axis(d);
        if p >= w && p < w + m {
            // Inside: the layout's own map (several blocks where w is 0).
            g[d] = axis.global_index(coords[d], p - w);
            continue;
        }
        // A ghost: the rank's indices along d are one range.
        ghosts += 1;
        let n = axis.extent() as i128;
        let at = axis.global_index(coords[d], 0) as i128 - w as i128 + p as i128;
        if !(0..n).contains(&at) && !spec.periodic()[d] {
            return None;
        }
        g[d] = usize::try_from(at.rem_euclid(n)).ok()?;
    }
    if spec.corners() == Corners::Star && ghosts > 1 {
        return None;
    }
    Some(g)
}
