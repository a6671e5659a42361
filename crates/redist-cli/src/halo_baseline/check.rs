//! Checking a ghost update, whichever made it: [`fill_ghosted`] lays out a
//! rank's padded storage with `f(global index)` in the interior and a
//! sentinel in every ghost; after the update, [`check_ghosts`] visits every
//! cell and expects `f` of its global index where the update should write
//! and the sentinel (or the interior's own value) everywhere else.
//!
//! The cells to fill follow the definition alone (not the yardsticks'
//! limits): a ghost along axis `d` stands for the global index its offset
//! from the interior gives, taken round the extent where the axis is
//! periodic; beyond the edge of a non-periodic axis it is never written.
//! A cell outside the interior along several axes is filled only with
//! [`Corners::Box`], and only when it stands for an index of the array
//! along each of them. Widths wider than a neighbour's part need no
//! special case here, so the check serves ndcyclic's own update too.
//!
//! Give each rank a sentinel of its own: a ghost that should stay untouched
//! but was overwritten from another rank's untouched ghosts then shows the
//! other rank's sentinel instead of passing for its own.

use super::error::HaloError;
use super::geometry::{per_axis, GhostedBlock};
use dist_array::Layout;
use redist::ghost::{Corners, GhostSpec};
use std::fmt::Debug;

/// What one cell stands for along one axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AxisCell {
    /// An interior cell holding this global index.
    Inside(usize),
    /// A ghost holding this global index (after going round a periodic
    /// axis), or `None` beyond a non-periodic edge.
    Ghost(Option<usize>),
}

/// Per axis, what each padded index stands for.
fn axis_cells(layout: &Layout, block: &GhostedBlock, periodic: &[bool]) -> Vec<Vec<AxisCell>> {
    (0..layout.ndim())
        .map(|d| {
            let (w, m, first) = (block.widths()[d], block.interior()[d], block.first()[d]);
            let n = layout.shape()[d] as i128;
            (0..block.padded()[d])
                .map(|p| {
                    let g = first as i128 + p as i128 - w as i128;
                    if (w..w + m).contains(&p) {
                        // Inside: 0 <= g < n by construction.
                        AxisCell::Inside(usize::try_from(g).unwrap_or(0))
                    } else if (0..n).contains(&g) {
                        AxisCell::Ghost(usize::try_from(g).ok())
                    } else if periodic[d] && n > 0 {
                        AxisCell::Ghost(usize::try_from(g.rem_euclid(n)).ok())
                    } else {
                        AxisCell::Ghost(None)
                    }
                })
                .collect()
        })
        .collect()
}

/// Calls `visit(padded index, storage offset)` for every cell of `block`.
fn each_cell(block: &GhostedBlock, mut visit: impl FnMut(&[usize], usize)) {
    let padded = block.padded();
    if block.cells() == 0 {
        return;
    }
    let mut p = vec![0usize; padded.len()];
    loop {
        visit(&p, block.offset(&p));
        // The next index, the last axis fastest.
        let mut d = padded.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            p[d] += 1;
            if p[d] < padded[d] {
                break;
            }
            p[d] = 0;
        }
    }
}

/// The padded storage of `rank`'s block of `layout` with ghosts of
/// `widths`: `f(global index)` in every interior cell, `sentinel` in every
/// ghost (and everywhere for a rank whose part is empty). A rank beyond the
/// layout's holds nothing: an empty vector.
///
/// ```
/// use dist_array::Layout;
/// use redist_cli::halo_baseline::fill_ghosted;
/// let layout = Layout::parse(&[4], "block@2").unwrap();
/// let storage = fill_ghosted(&layout, 1, &[1], |g| g[0] as i32, -1).unwrap();
/// assert_eq!(storage, vec![-1, 2, 3, -1]);
/// ```
///
/// # Errors
///
/// As [`GhostedBlock::new`].
pub fn fill_ghosted<T: Copy>(
    layout: &Layout,
    rank: usize,
    widths: &[usize],
    f: impl Fn(&[usize]) -> T,
    sentinel: T,
) -> Result<Vec<T>, HaloError> {
    if rank >= layout.ranks() {
        per_axis(layout, widths.len(), "widths")?;
        return Ok(vec![]);
    }
    let block = GhostedBlock::new(layout, rank, widths)?;
    let mut storage = vec![sentinel; block.cells()];
    if block.is_empty() {
        return Ok(storage);
    }
    let first = block.first();
    let w = block.widths();
    let mut g = vec![0usize; layout.ndim()];
    each_cell(&block, |p, at| {
        let inside = (0..p.len()).all(|d| p[d] >= w[d] && p[d] < w[d] + block.interior()[d]);
        if inside {
            for d in 0..p.len() {
                g[d] = first[d] + p[d] - w[d];
            }
            storage[at] = f(&g);
        }
    });
    Ok(storage)
}

/// What [`check_ghosts`] found in one rank's storage.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GhostCheck {
    /// Ghost cells the update should fill.
    pub to_fill: usize,
    /// Ghost cells it should leave alone (beyond a non-periodic edge, or
    /// edges and corners of a star update; every cell of an empty part).
    pub to_keep: usize,
    /// Interior cells (which no update writes).
    pub interior: usize,
    /// Cells holding another value than expected.
    pub wrong: usize,
    /// The first of them (in storage order of the padded index, the last
    /// axis fastest): where, what was expected and what was found.
    pub first_wrong: Option<String>,
}

impl GhostCheck {
    /// Whether every cell holds what it should.
    pub fn is_right(&self) -> bool {
        self.wrong == 0
    }
}

/// Checks `rank`'s padded `storage` after a ghost update of `halo` that
/// started from [`fill_ghosted`]`(layout, rank, halo.widths(), f,
/// sentinel)`: every ghost the update should fill holds `f` of the global
/// index it stands for, every other ghost still holds `sentinel`, and every
/// interior cell still holds `f` of its own index. A rank beyond the
/// layout's must hand over empty storage.
///
/// ```
/// use dist_array::Layout;
/// use redist::ghost::{Corners, GhostSpec};
/// use redist_cli::halo_baseline::{check_ghosts, fill_ghosted};
/// let layout = Layout::parse(&[4], "block@2").unwrap();
/// let halo = GhostSpec::new(&[1], &[false], Corners::Star);
/// let mut storage = fill_ghosted(&layout, 1, halo.widths(), |g| g[0] as i32, -1).unwrap();
/// // What rank 1's update does: index 1 from rank 0; nothing beyond the edge.
/// storage[0] = 1;
/// let verdict = check_ghosts(&layout, 1, &halo, &storage, |g| g[0] as i32, -1).unwrap();
/// assert!(verdict.is_right());
/// assert_eq!((verdict.to_fill, verdict.to_keep, verdict.interior), (1, 1, 2));
/// storage[3] = 0;
/// let verdict = check_ghosts(&layout, 1, &halo, &storage, |g| g[0] as i32, -1).unwrap();
/// assert_eq!(verdict.wrong, 1);
/// ```
///
/// # Errors
///
/// - [`HaloError::PerAxis`] when widths or periodic flags are not one per
///   axis;
/// - [`HaloError::StorageSize`] when `storage` is not the rank's padded
///   block;
/// - as [`GhostedBlock::new`].
pub fn check_ghosts<T: Copy + PartialEq + Debug>(
    layout: &Layout,
    rank: usize,
    halo: &GhostSpec,
    storage: &[T],
    f: impl Fn(&[usize]) -> T,
    sentinel: T,
) -> Result<GhostCheck, HaloError> {
    per_axis(layout, halo.widths().len(), "widths")?;
    per_axis(layout, halo.periodic().len(), "periodic flags")?;
    if rank >= layout.ranks() {
        super::storage_size(rank, storage, 0)?;
        return Ok(GhostCheck::default());
    }
    let block = GhostedBlock::new(layout, rank, halo.widths())?;
    super::storage_size(
        rank,
        storage,
        block.cells().saturating_mul(std::mem::size_of::<T>()),
    )?;
    let mut verdict = GhostCheck::default();
    if block.is_empty() {
        for (at, &found) in storage.iter().enumerate() {
            verdict.to_keep += 1;
            if found != sentinel {
                wrong(
                    &mut verdict,
                    &format!("storage offset {at} of an empty part"),
                    sentinel,
                    found,
                );
            }
        }
        return Ok(verdict);
    }
    let cells = axis_cells(layout, &block, halo.periodic());
    let mut g = vec![0usize; layout.ndim()];
    each_cell(&block, |p, at| {
        let mut ghost_axes = 0;
        let mut beyond = false;
        for d in 0..p.len() {
            match cells[d][p[d]] {
                AxisCell::Inside(i) => g[d] = i,
                AxisCell::Ghost(Some(i)) => {
                    g[d] = i;
                    ghost_axes += 1;
                }
                AxisCell::Ghost(None) => {
                    ghost_axes += 1;
                    beyond = true;
                }
            }
        }
        let (expected, kind) = if ghost_axes == 0 {
            verdict.interior += 1;
            (f(&g), "an interior cell")
        } else if !beyond && (ghost_axes == 1 || halo.corners() == Corners::Box) {
            verdict.to_fill += 1;
            (f(&g), "a ghost to fill")
        } else {
            verdict.to_keep += 1;
            (sentinel, "a ghost to leave alone")
        };
        let found = storage[at];
        if found != expected {
            let place = if beyond {
                format!("padded index {p:?} ({kind})")
            } else {
                format!("padded index {p:?}, global index {g:?} ({kind})")
            };
            wrong(&mut verdict, &place, expected, found);
        }
    });
    Ok(verdict)
}

/// Counts a wrong cell, describing the first.
fn wrong<T: Debug>(verdict: &mut GhostCheck, place: &str, expected: T, found: T) {
    verdict.wrong += 1;
    if verdict.first_wrong.is_none() {
        verdict.first_wrong = Some(format!("{place}: expected {expected:?}, found {found:?}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(g: &[usize]) -> i64 {
        g.iter().fold(0, |v, &i| 100 * v + i as i64)
    }

    /// Rank `rank`'s storage with every ghost a right update fills set to
    /// the value of its global index, read straight off the definition.
    fn updated_by_hand(layout: &Layout, rank: usize, halo: &GhostSpec) -> Vec<i64> {
        let block = GhostedBlock::new(layout, rank, halo.widths()).unwrap();
        let cells = axis_cells(layout, &block, halo.periodic());
        let mut storage = fill_ghosted(layout, rank, halo.widths(), value, -1).unwrap();
        each_cell(&block, |p, at| {
            let mut g = vec![];
            let mut ghost_axes = 0;
            for d in 0..p.len() {
                match cells[d][p[d]] {
                    AxisCell::Inside(i) => g.push(i),
                    AxisCell::Ghost(Some(i)) => {
                        g.push(i);
                        ghost_axes += 1;
                    }
                    AxisCell::Ghost(None) => return,
                }
            }
            if ghost_axes == 1 || (ghost_axes > 1 && halo.corners() == Corners::Box) {
                storage[at] = value(&g);
            }
        });
        storage
    }

    #[test]
    fn a_corner_of_a_periodic_box() {
        let layout = Layout::parse(&[4, 6], "block,block@2x2").unwrap();
        let halo = GhostSpec::new(&[1, 2], &[true, false], Corners::Box);
        // Rank 0 holds rows 0..2, columns 0..3: its low ghost row is row 3.
        let storage = updated_by_hand(&layout, 0, &halo);
        let block = GhostedBlock::new(&layout, 0, halo.widths()).unwrap();
        assert_eq!(storage[block.offset(&[0, 2])], value(&[3, 0]));
        assert_eq!(storage[block.offset(&[0, 5])], value(&[3, 3])); // a corner
        assert_eq!(storage[block.offset(&[0, 0])], -1); // beyond the column edge
        let verdict = check_ghosts(&layout, 0, &halo, &storage, value, -1).unwrap();
        assert!(verdict.is_right(), "{verdict:?}");
        // 4 x 7 padded, 2 x 3 interior; columns 0 and 1 lie beyond the edge.
        assert_eq!(verdict.interior, 6);
        assert_eq!(verdict.to_keep, 8);
        assert_eq!(verdict.to_fill, 4 * 7 - 6 - 8);
        // The same storage is wrong for a star update: it filled corners.
        let star = GhostSpec::new(halo.widths(), halo.periodic(), Corners::Star);
        let verdict = check_ghosts(&layout, 0, &star, &storage, value, -1).unwrap();
        assert_eq!(verdict.wrong, 2 * 2);
        assert!(verdict.first_wrong.unwrap().contains("leave alone"));
    }

    #[test]
    fn empty_parts_and_ranks_beyond_the_layout() {
        let layout = Layout::parse(&[9, 2], "block,block@4x1").unwrap(); // 3, 3, 3, 0
        let halo = GhostSpec::new(&[1, 1], &[true, true], Corners::Box);
        let storage = fill_ghosted(&layout, 3, halo.widths(), value, -1).unwrap();
        assert_eq!(storage, vec![-1; 2 * 4]);
        let verdict = check_ghosts(&layout, 3, &halo, &storage, value, -1).unwrap();
        assert_eq!((verdict.to_keep, verdict.wrong), (8, 0));
        assert!(fill_ghosted(&layout, 4, halo.widths(), value, -1)
            .unwrap()
            .is_empty());
        assert!(check_ghosts(&layout, 4, &halo, &[] as &[i64], value, -1)
            .unwrap()
            .is_right());
        assert!(matches!(
            check_ghosts(&layout, 0, &halo, &storage, value, -1),
            Err(HaloError::StorageSize { rank: 0, .. })
        ));
        for rank in 0..3 {
            let storage = updated_by_hand(&layout, rank, &halo);
            assert!(check_ghosts(&layout, rank, &halo, &storage, value, -1)
                .unwrap()
                .is_right());
        }
    }

    #[test]
    fn widths_wider_than_the_array_go_round_more_than_once() {
        let layout = Layout::parse(&[3], "block@1").unwrap();
        let halo = GhostSpec::new(&[4], &[true], Corners::Star);
        let storage = updated_by_hand(&layout, 0, &halo);
        assert_eq!(storage, vec![2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
        assert!(check_ghosts(&layout, 0, &halo, &storage, value, -1)
            .unwrap()
            .is_right());
    }
}
