//! What a ghost update is asked for: ghost widths per axis, which axes are
//! periodic, and whether edges and corners are filled too.

use crate::error::PlanError;
use crate::layout::Layout;
use std::fmt;
use std::str::FromStr;

/// Which ghost cells an update fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Corners {
    /// Faces only: the cells outside the interior along exactly one axis
    /// (what a 5-point or 7-point stencil reads).
    Star,
    /// Faces, edges and corners: every ghost cell (what a 9-point or
    /// 27-point stencil reads).
    #[default]
    Box,
}

impl fmt::Display for Corners {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Corners::Star => "star",
            Corners::Box => "box",
        })
    }
}

impl FromStr for Corners {
    type Err = PlanError;

    fn from_str(s: &str) -> Result<Corners, PlanError> {
        match s {
            "star" => Ok(Corners::Star),
            "box" => Ok(Corners::Box),
            _ => Err(PlanError::Ghosts {
                message: format!("corners {s:?}: expected \"box\" or \"star\""),
            }),
        }
    }
}

/// A ghost update's parameters: `widths[d]` ghost layers on both sides of
/// axis `d` (0 allowed), whether axis `d` wraps round (`periodic[d]`), and
/// which ghost cells are filled.
///
/// ```
/// use redist_plan::ghost::{Corners, GhostSpec};
/// let spec = GhostSpec::new(&[1, 2], &[true, false], Corners::Star);
/// assert_eq!(spec.widths(), &[1, 2]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GhostSpec {
    widths: Vec<usize>,
    periodic: Vec<bool>,
    corners: Corners,
}

impl GhostSpec {
    /// Widths, periodic flags per axis, and corners.
    pub fn new(widths: &[usize], periodic: &[bool], corners: Corners) -> GhostSpec {
        GhostSpec {
            widths: widths.to_vec(),
            periodic: periodic.to_vec(),
            corners,
        }
    }

    /// Ghost widths per axis.
    pub fn widths(&self) -> &[usize] {
        &self.widths
    }

    /// Whether each axis is periodic.
    pub fn periodic(&self) -> &[bool] {
        &self.periodic
    }

    /// Which ghost cells are filled.
    pub fn corners(&self) -> Corners {
        self.corners
    }

    /// Checks the spec against `layout`: one width and one flag per axis,
    /// no width above its axis's extent, and at most one block per rank on
    /// every axis with a width (a rank's indices along it are then one
    /// range, and its ghosts lie on either side; along an axis without
    /// ghosts any distribution will do).
    ///
    /// # Errors
    ///
    /// - [`PlanError::RankMismatch`] when widths or flags are not one per
    ///   axis;
    /// - [`PlanError::Ghosts`] when a width exceeds its axis's extent;
    /// - [`PlanError::SeveralBlocksPerRank`] when an axis deals a rank more
    ///   than one block.
    pub fn check(&self, layout: &Layout) -> Result<(), PlanError> {
        let n = layout.ndim();
        for (what, got) in [
            ("ghost widths", self.widths.len()),
            ("periodic flags", self.periodic.len()),
        ] {
            if got != n {
                return Err(PlanError::RankMismatch {
                    what,
                    expected: n,
                    got,
                });
            }
        }
        for (d, (axis, &w)) in layout.axes().iter().zip(&self.widths).enumerate() {
            if w > axis.extent() && axis.extent() > 0 {
                return Err(PlanError::Ghosts {
                    message: format!(
                        "ghost width {w} on axis {d} exceeds its extent {}: at most the extent expected",
                        axis.extent()
                    ),
                });
            }
            // One process holds every block in global order: one block.
            let blocks = axis.global_blocks();
            if w > 0 && axis.procs() > 1 && blocks > axis.procs() {
                return Err(PlanError::SeveralBlocksPerRank {
                    dim: d,
                    layout: layout.to_string(),
                    blocks: blocks.div_ceil(axis.procs()),
                });
            }
        }
        Ok(())
    }
}
