//! A rank's ghosted block ([`GhostedBlock`]): its interior, its padding,
//! where each cell lies in storage, and who its neighbours are along each
//! axis — found with the layout's own index maps, so ragged extents, first
//! processes, empty parts and any rank map need no special case.

use super::error::HaloError;
use dist_array::{AxisMap, Layout, Order};
use mpi_extras::Datatype;
use redist::ghost::{Corners, GhostSpec};
use std::ops::Range;

/// One side of an axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Towards lower global indices.
    Low,
    /// Towards higher global indices.
    High,
}

/// The grid coordinate along `axis` holding the indices just beyond
/// coordinate `c`'s part on `side`: the owner of the index before its first
/// (`Low`) or after its last (`High`), going round when `periodic`. `None`
/// for an empty part, or at the array's edge of a non-periodic axis.
///
/// ```
/// use dist_array::AxisMap;
/// use redist_cli::halo_baseline::{axis_neighbour, Side};
/// // 9 indices in blocks of 3 over 4 processes: the last holds nothing.
/// let axis = AxisMap::new(9, 4, 3, 0);
/// assert_eq!(axis_neighbour(&axis, 0, Side::Low, true), Some(2));
/// assert_eq!(axis_neighbour(&axis, 2, Side::High, true), Some(0));
/// assert_eq!(axis_neighbour(&axis, 0, Side::Low, false), None);
/// assert_eq!(axis_neighbour(&axis, 3, Side::High, true), None);
/// ```
pub fn axis_neighbour(axis: &AxisMap, c: usize, side: Side, periodic: bool) -> Option<usize> {
    let m = axis.local_extent(c);
    if m == 0 {
        return None;
    }
    let first = axis.global_index(c, 0);
    let n = axis.extent();
    let beyond = match side {
        Side::Low if first > 0 => first - 1,
        Side::High if first + m < n => first + m,
        Side::Low if periodic => n - 1,
        Side::High if periodic => 0,
        _ => return None,
    };
    Some(axis.owner(beyond))
}

/// A rank's local part stored padded: `interior[d] + 2 · widths[d]` cells
/// along axis `d`, the interior at offset `widths[d]`, in the layout's
/// storage order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GhostedBlock {
    interior: Vec<usize>,
    widths: Vec<usize>,
    padded: Vec<usize>,
    /// Per axis, the global index of the first interior cell (0 for an
    /// empty part).
    first: Vec<usize>,
    coords: Vec<usize>,
    order: Order,
    /// Per axis, how far apart neighbouring cells lie in storage.
    strides: Vec<usize>,
    cells: usize,
}

impl GhostedBlock {
    /// `rank`'s block of `layout` padded by `widths`.
    ///
    /// ```
    /// use dist_array::Layout;
    /// use redist_cli::halo_baseline::GhostedBlock;
    /// let layout = Layout::parse(&[10, 7], "block,block@2x1").unwrap();
    /// let block = GhostedBlock::new(&layout, 1, &[2, 1]).unwrap();
    /// assert_eq!(block.interior(), &[5, 7]);
    /// assert_eq!(block.padded(), &[9, 9]);
    /// assert_eq!(block.first(), &[5, 0]);
    /// assert_eq!(block.offset(&[2, 1]), 2 * 9 + 1); // the first interior cell, row-major
    /// ```
    ///
    /// # Errors
    ///
    /// - [`HaloError::PerAxis`] when `widths` is not one per axis;
    /// - [`HaloError::NotOneBlockPerAxis`] when some rank of the layout
    ///   holds several blocks along an axis;
    /// - [`HaloError::Overflow`] when the padded storage overflows `usize`;
    /// - [`HaloError::Layout`] when `rank` is not a rank of the layout.
    pub fn new(layout: &Layout, rank: usize, widths: &[usize]) -> Result<GhostedBlock, HaloError> {
        check_ghosted(layout)?;
        per_axis(layout, widths.len(), "widths")?;
        let coords = layout.coords_of_rank(rank)?;
        let k = layout.ndim();
        let mut interior = Vec::with_capacity(k);
        let mut padded = Vec::with_capacity(k);
        let mut first = Vec::with_capacity(k);
        for d in 0..k {
            let axis = layout.axis(d);
            let m = axis.local_extent(coords[d]);
            let overflow = HaloError::Overflow {
                axis: d,
                extent: m,
                width: widths[d],
            };
            let p = widths[d]
                .checked_mul(2)
                .and_then(|w2| w2.checked_add(m))
                .ok_or(overflow)?;
            interior.push(m);
            padded.push(p);
            first.push(if m > 0 {
                axis.global_index(coords[d], 0)
            } else {
                0
            });
        }
        let mut strides = vec![0; k];
        let mut cells = 1usize;
        let axes: Vec<usize> = match layout.storage() {
            Order::RowMajor => (0..k).rev().collect(),
            Order::ColumnMajor => (0..k).collect(),
        };
        for d in axes {
            strides[d] = cells;
            cells = cells.checked_mul(padded[d]).ok_or(HaloError::Overflow {
                axis: d,
                extent: interior[d],
                width: widths[d],
            })?;
        }
        Ok(GhostedBlock {
            interior,
            widths: widths.to_vec(),
            padded,
            first,
            coords,
            order: layout.storage(),
            strides,
            cells,
        })
    }

    /// The interior's extents (the rank's local shape).
    pub fn interior(&self) -> &[usize] {
        &self.interior
    }

    /// The ghost widths.
    pub fn widths(&self) -> &[usize] {
        &self.widths
    }

    /// The padded extents.
    pub fn padded(&self) -> &[usize] {
        &self.padded
    }

    /// The global index of the first interior cell along each axis (0 along
    /// an axis where the part is empty).
    pub fn first(&self) -> &[usize] {
        &self.first
    }

    /// The rank's grid coordinates.
    pub fn coords(&self) -> &[usize] {
        &self.coords
    }

    /// The storage order.
    pub fn order(&self) -> Order {
        self.order
    }

    /// Cells of the padded storage.
    pub fn cells(&self) -> usize {
        self.cells
    }

    /// Whether the interior is empty (along some axis): such a rank has no
    /// ghosts to fill and is nobody's neighbour.
    pub fn is_empty(&self) -> bool {
        self.interior.contains(&0)
    }

    /// Where padded index `p` lies in storage (in cells).
    pub fn offset(&self, p: &[usize]) -> usize {
        p.iter().zip(&self.strides).map(|(i, s)| i * s).sum()
    }

    /// The cells `region` (padded index ranges, one per axis, none empty)
    /// of this block's storage, as one MPI datatype over its first byte.
    pub(crate) fn region_type(
        &self,
        region: &[Range<usize>],
        element: &Datatype,
    ) -> Result<Datatype, HaloError> {
        let lens: Vec<usize> = region.iter().map(|r| r.len()).collect();
        let starts: Vec<usize> = region.iter().map(|r| r.start).collect();
        Ok(Datatype::subarray(
            &self.padded,
            &lens,
            &starts,
            self.order,
            element,
        )?)
    }

    /// Along axis `d`, the interior cells' padded indices.
    pub(crate) fn inside(&self, d: usize) -> Range<usize> {
        self.widths[d]..self.widths[d] + self.interior[d]
    }

    /// Along axis `d`, the ghost cells on `side`.
    pub(crate) fn ghosts(&self, d: usize, side: Side) -> Range<usize> {
        let (w, m) = (self.widths[d], self.interior[d]);
        match side {
            Side::Low => 0..w,
            Side::High => w + m..m + 2 * w,
        }
    }

    /// Along axis `d`, the interior cells the neighbour on `side` holds as
    /// its ghosts: the first `w` (`Low`) or the last `w` (`High`).
    pub(crate) fn edge(&self, d: usize, side: Side) -> Range<usize> {
        let (w, m) = (self.widths[d], self.interior[d]);
        match side {
            Side::Low => w..2 * w,
            Side::High => m..m + w,
        }
    }
}

/// `Err` unless `given` (of `what`) is one per axis of `layout`.
pub(crate) fn per_axis(layout: &Layout, given: usize, what: &'static str) -> Result<(), HaloError> {
    if given != layout.ndim() {
        return Err(HaloError::PerAxis {
            what,
            given,
            ndim: layout.ndim(),
        });
    }
    Ok(())
}

/// `Err` unless every process holds at most one block along every axis.
pub(crate) fn check_ghosted(layout: &Layout) -> Result<(), HaloError> {
    for (d, axis) in layout.axes().iter().enumerate() {
        if axis.global_blocks() > axis.procs() {
            return Err(HaloError::NotOneBlockPerAxis {
                layout: layout.spec().to_string(),
                axis: d,
                blocks: axis.global_blocks(),
                procs: axis.procs(),
            });
        }
    }
    Ok(())
}

/// Checks what the hand-written updates need beyond a ghosted layout:
/// widths and periodic flags one per axis, every padded extent within MPI's
/// `int` and the largest padded block of `element_bytes`-byte elements
/// within `usize`, and every width at most the local extent of every part
/// that is some part's neighbour along its axis. Depends on the layout and
/// halo alone, so every rank decides alike (and none is left waiting in a
/// collective the others never reach).
pub(crate) fn check_baseline(
    layout: &Layout,
    halo: &GhostSpec,
    element_bytes: usize,
) -> Result<(), HaloError> {
    check_ghosted(layout)?;
    per_axis(layout, halo.widths().len(), "widths")?;
    per_axis(layout, halo.periodic().len(), "periodic flags")?;
    let mut cells = 1usize;
    for (d, axis) in layout.axes().iter().enumerate() {
        // The first process holds a whole block (or the whole extent).
        let largest = axis.local_extent(axis.first());
        let w = halo.widths()[d];
        let padded = w
            .checked_mul(2)
            .and_then(|w2| w2.checked_add(largest))
            .filter(|&p| i32::try_from(p).is_ok())
            .ok_or(HaloError::Overflow {
                axis: d,
                extent: largest,
                width: w,
            })?;
        cells = cells
            .checked_mul(padded)
            .filter(|c| c.checked_mul(element_bytes).is_some())
            .ok_or(HaloError::StorageOverflow {
                cells: usize::MAX,
                element_bytes,
            })?;
    }
    for (d, axis) in layout.axes().iter().enumerate() {
        let w = halo.widths()[d];
        if w == 0 {
            continue;
        }
        for c in 0..axis.procs() {
            for side in [Side::Low, Side::High] {
                if let Some(nb) = axis_neighbour(axis, c, side, halo.periodic()[d]) {
                    let extent = axis.local_extent(nb);
                    if extent < w {
                        return Err(HaloError::WidthBeyondNeighbour {
                            axis: d,
                            width: w,
                            coordinate: nb,
                            extent,
                        });
                    }
                }
            }
        }
    }
    Ok(())
}

/// The directions of a neighbour (or a ghost region) an update fills: per
/// axis -1 (low side), 0 (the interior) or +1 (high side), never all 0;
/// `Star` keeps those with one non-zero axis. Directions along an axis of
/// width 0 are left out (no cell lies there). In a fixed order, the first
/// axis slowest, -1 before 0 before +1.
pub(crate) fn directions(widths: &[usize], corners: Corners) -> Vec<Vec<i8>> {
    let mut all: Vec<Vec<i8>> = vec![vec![]];
    for &w in widths {
        let steps: &[i8] = if w == 0 { &[0] } else { &[-1, 0, 1] };
        all = all
            .into_iter()
            .flat_map(|v| {
                steps.iter().map(move |&s| {
                    let mut v = v.clone();
                    v.push(s);
                    v
                })
            })
            .collect();
    }
    all.retain(|s| {
        let moved = s.iter().filter(|&&x| x != 0).count();
        moved > 0 && (corners == Corners::Box || moved == 1)
    });
    all
}

/// The side a direction's component names (`None` for 0).
pub(crate) fn side_of(step: i8) -> Option<Side> {
    match step {
        -1 => Some(Side::Low),
        1 => Some(Side::High),
        _ => None,
    }
}

/// The rank whose part lies in direction `dir` of `block`'s, or `None` when
/// some axis of the direction has no neighbour there.
pub(crate) fn neighbour_rank(
    layout: &Layout,
    block: &GhostedBlock,
    dir: &[i8],
    periodic: &[bool],
) -> Result<Option<usize>, HaloError> {
    let mut coords = block.coords().to_vec();
    for (d, &step) in dir.iter().enumerate() {
        if let Some(side) = side_of(step) {
            match axis_neighbour(layout.axis(d), coords[d], side, periodic[d]) {
                Some(c) => coords[d] = c,
                None => return Ok(None),
            }
        }
    }
    Ok(Some(layout.rank_of_coords(&coords)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_of_star_and_box() {
        assert_eq!(directions(&[1, 1], Corners::Star).len(), 4);
        assert_eq!(directions(&[1, 1], Corners::Box).len(), 8);
        assert_eq!(directions(&[1, 2, 1], Corners::Box).len(), 26);
        assert_eq!(directions(&[1, 0, 1], Corners::Box).len(), 8);
        assert_eq!(directions(&[0, 0], Corners::Box).len(), 0);
        assert_eq!(
            directions(&[1, 1], Corners::Star),
            vec![vec![-1, 0], vec![0, -1], vec![0, 1], vec![1, 0]]
        );
    }

    #[test]
    fn neighbours_go_round_empty_parts() {
        // 10 over 4 in blocks of 3 starting at process 2: process 1 holds 1 index.
        let axis = AxisMap::new(10, 4, 3, 2);
        assert_eq!(axis.local_extent(1), 1);
        let order: Vec<usize> = (0..4).map(|k| (2 + k) % 4).collect(); // 2, 3, 0, 1
        for (i, &c) in order.iter().enumerate() {
            let next = order[(i + 1) % 4];
            assert_eq!(axis_neighbour(&axis, c, Side::High, true), Some(next));
            assert_eq!(axis_neighbour(&axis, next, Side::Low, true), Some(c));
        }
        assert_eq!(axis_neighbour(&axis, 2, Side::Low, false), None);
        assert_eq!(axis_neighbour(&axis, 1, Side::High, false), None);
    }

    #[test]
    fn widths_beyond_a_neighbour_are_refused() {
        let layout = Layout::parse(&[10, 4], "block,block@4x1").unwrap(); // 3, 3, 3, 1
        let halo =
            |w: usize, periodic: bool| GhostSpec::new(&[w, 1], &[periodic, false], Corners::Box);
        assert!(check_baseline(&layout, &halo(1, true), 8).is_ok());
        assert!(matches!(
            check_baseline(&layout, &halo(2, false), 8),
            Err(HaloError::WidthBeyondNeighbour {
                axis: 0,
                width: 2,
                coordinate: 3,
                extent: 1
            })
        ));
        let cyclic = Layout::parse(&[10, 4], "cyclic(2),block@2x1").unwrap();
        assert!(matches!(
            check_baseline(&cyclic, &halo(1, true), 8),
            Err(HaloError::NotOneBlockPerAxis {
                axis: 0,
                blocks: 5,
                procs: 2,
                ..
            })
        ));
        assert!(matches!(
            GhostedBlock::new(&layout, 0, &[1]),
            Err(HaloError::PerAxis {
                given: 1,
                ndim: 2,
                ..
            })
        ));
    }

    #[test]
    fn column_major_offsets() {
        let layout = Layout::parse(&[4, 6], "block,block@2x2")
            .unwrap()
            .with_storage(Order::ColumnMajor);
        let b = GhostedBlock::new(&layout, 3, &[1, 2]).unwrap();
        assert_eq!(b.interior(), &[2, 3]);
        assert_eq!(b.padded(), &[4, 7]);
        assert_eq!(b.offset(&[1, 0]), 1);
        assert_eq!(b.offset(&[0, 1]), 4);
        assert_eq!(b.cells(), 28);
        assert_eq!(b.first(), &[2, 3]);
    }
}
