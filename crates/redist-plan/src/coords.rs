//! Pure coordinate arithmetic: the bijection between grid coordinates and ranks.
//!
//! These functions touch no MPI state, so they are usable (and tested) without
//! a communicator. Layouts and process grids use them for every coordinate query.

use crate::error::PlanError;

/// How grid coordinates are linearised into ranks.
///
/// The same two choices BLACS offers for its process grids (`'R'` and `'C'`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// The last coordinate varies fastest (C order, BLACS `'R'`). The default.
    #[default]
    RowMajor,
    /// The first coordinate varies fastest (Fortran order, BLACS `'C'`).
    ColumnMajor,
}

/// Checks that `extents` describe a grid: at least one dimension, none zero,
/// and a product that fits in `usize`. Returns that product.
///
/// ```
/// use redist_plan::{check_extents, PlanError};
/// assert_eq!(check_extents(&[2, 3]), Ok(6));
/// assert!(matches!(check_extents(&[2, 0]), Err(PlanError::ZeroExtent { dim: 1, .. })));
/// ```
///
/// # Errors
///
/// - [`PlanError::NoGridDimensions`] when `extents` is empty;
/// - [`PlanError::ZeroExtent`] when an extent is 0 (the first such dimension);
/// - [`PlanError::ExtentOverflow`] when the product of the extents overflows `usize`.
pub fn check_extents(extents: &[usize]) -> Result<usize, PlanError> {
    if extents.is_empty() {
        return Err(PlanError::NoGridDimensions);
    }
    let mut size = 1usize;
    for (dim, &e) in extents.iter().enumerate() {
        if e == 0 {
            return Err(PlanError::ZeroExtent {
                dim,
                extents: extents.to_vec(),
            });
        }
        size = size
            .checked_mul(e)
            .ok_or_else(|| PlanError::ExtentOverflow {
                extents: extents.to_vec(),
            })?;
    }
    Ok(size)
}

/// Rank of `coords` on a grid of `extents` linearised in `order`.
///
/// ```
/// use redist_plan::{coords_to_rank, Order};
/// assert_eq!(coords_to_rank(&[1, 2], &[2, 3], Order::RowMajor), Ok(5));
/// assert_eq!(coords_to_rank(&[1, 2], &[2, 3], Order::ColumnMajor), Ok(5));
/// assert_eq!(coords_to_rank(&[1, 0], &[2, 3], Order::ColumnMajor), Ok(1));
/// assert!(coords_to_rank(&[2, 0], &[2, 3], Order::RowMajor).is_err());
/// ```
///
/// # Errors
///
/// - [`PlanError::DimensionCount`] when `coords` and `extents` have different lengths;
/// - [`PlanError::CoordinateOutOfRange`] when a coordinate is not below its extent.
///
/// `extents` itself is not checked (see [`check_extents`]).
pub fn coords_to_rank(
    coords: &[usize],
    extents: &[usize],
    order: Order,
) -> Result<usize, PlanError> {
    if coords.len() != extents.len() {
        return Err(PlanError::DimensionCount {
            what: "coordinates",
            expected: extents.len(),
            got: coords.len(),
        });
    }
    for (dim, (&c, &e)) in coords.iter().zip(extents).enumerate() {
        if c >= e {
            return Err(PlanError::CoordinateOutOfRange {
                dim,
                coord: c,
                extent: e,
            });
        }
    }
    let fold = |acc: usize, (&c, &e): (&usize, &usize)| acc * e + c;
    Ok(match order {
        Order::RowMajor => coords.iter().zip(extents).fold(0, fold),
        Order::ColumnMajor => coords.iter().zip(extents).rev().fold(0, fold),
    })
}

/// Coordinates of `rank` on a grid of `extents` linearised in `order`.
///
/// ```
/// use redist_plan::{rank_to_coords, Order};
/// assert_eq!(rank_to_coords(5, &[2, 3], Order::RowMajor), Ok(vec![1, 2]));
/// assert_eq!(rank_to_coords(1, &[2, 3], Order::ColumnMajor), Ok(vec![1, 0]));
/// assert!(rank_to_coords(6, &[2, 3], Order::RowMajor).is_err());
/// ```
///
/// # Errors
///
/// - [`PlanError::NoGridDimensions`], [`PlanError::ZeroExtent`] or
///   [`PlanError::ExtentOverflow`] when `extents` is not a grid ([`check_extents`]);
/// - [`PlanError::RankOutOfRange`] when `rank` is not below the product of the extents.
pub fn rank_to_coords(
    rank: usize,
    extents: &[usize],
    order: Order,
) -> Result<Vec<usize>, PlanError> {
    let size = check_extents(extents)?;
    if rank >= size {
        return Err(PlanError::RankOutOfRange { rank, size });
    }
    let mut coords = vec![0; extents.len()];
    let mut rest = rank;
    let mut peel = |d: usize| {
        coords[d] = rest % extents[d];
        rest /= extents[d];
    };
    match order {
        Order::RowMajor => (0..extents.len()).rev().for_each(&mut peel),
        Order::ColumnMajor => (0..extents.len()).for_each(&mut peel),
    }
    Ok(coords)
}

/// Coordinate reached from `coord` by moving `disp` steps along an axis of
/// length `extent`: wrapped when `periodic`, `None` when it falls off the edge.
///
/// ```
/// use redist_plan::shifted;
/// assert_eq!(shifted(0, -1, 4, true), Some(3));
/// assert_eq!(shifted(0, -1, 4, false), None);
/// assert_eq!(shifted(1, 2, 4, false), Some(3));
/// ```
pub fn shifted(coord: usize, disp: i64, extent: usize, periodic: bool) -> Option<usize> {
    let target = coord as i128 + disp as i128;
    let extent = extent as i128;
    if periodic {
        Some(target.rem_euclid(extent) as usize)
    } else if (0..extent).contains(&target) {
        Some(target as usize)
    } else {
        None
    }
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation, reason = "test extents are small")]
mod tests {
    use super::*;

    fn shapes() -> Vec<Vec<usize>> {
        vec![
            vec![1],
            vec![7],
            vec![2, 3],
            vec![3, 2],
            vec![1, 5],
            vec![4, 1],
            vec![2, 3, 4],
            vec![3, 1, 2, 2],
            vec![5, 5],
        ]
    }

    #[test]
    fn bijection_both_orders() {
        for extents in shapes() {
            let size: usize = extents.iter().product();
            for order in [Order::RowMajor, Order::ColumnMajor] {
                let mut seen = std::collections::HashSet::new();
                for r in 0..size {
                    let c = rank_to_coords(r, &extents, order).unwrap();
                    assert_eq!(coords_to_rank(&c, &extents, order).unwrap(), r);
                    assert!(seen.insert(c), "coordinates repeat");
                }
            }
        }
    }

    #[test]
    fn orders_agree_with_reversed_extents() {
        // Column-major on extents e equals row-major on reversed extents with reversed coordinates.
        for extents in shapes() {
            let size: usize = extents.iter().product();
            let rev: Vec<usize> = extents.iter().rev().copied().collect();
            for r in 0..size {
                let mut c = rank_to_coords(r, &extents, Order::ColumnMajor).unwrap();
                c.reverse();
                assert_eq!(coords_to_rank(&c, &rev, Order::RowMajor).unwrap(), r);
            }
        }
    }

    #[test]
    fn row_major_last_fastest() {
        assert_eq!(
            rank_to_coords(1, &[2, 3, 4], Order::RowMajor).unwrap(),
            vec![0, 0, 1]
        );
        assert_eq!(
            rank_to_coords(1, &[2, 3, 4], Order::ColumnMajor).unwrap(),
            vec![1, 0, 0]
        );
        assert_eq!(
            rank_to_coords(23, &[2, 3, 4], Order::RowMajor).unwrap(),
            vec![1, 2, 3]
        );
    }

    #[test]
    fn errors() {
        assert_eq!(check_extents(&[]), Err(PlanError::NoGridDimensions));
        assert!(matches!(
            check_extents(&[3, 0, 2]),
            Err(PlanError::ZeroExtent { dim: 1, .. })
        ));
        assert!(matches!(
            check_extents(&[usize::MAX, 2]),
            Err(PlanError::ExtentOverflow { .. })
        ));
        assert!(matches!(
            coords_to_rank(&[0], &[2, 2], Order::RowMajor),
            Err(PlanError::DimensionCount {
                expected: 2,
                got: 1,
                ..
            })
        ));
        assert!(matches!(
            coords_to_rank(&[0, 2], &[2, 2], Order::RowMajor),
            Err(PlanError::CoordinateOutOfRange {
                dim: 1,
                coord: 2,
                extent: 2
            })
        ));
        assert!(matches!(
            rank_to_coords(4, &[2, 2], Order::RowMajor),
            Err(PlanError::RankOutOfRange { rank: 4, size: 4 })
        ));
    }

    #[test]
    fn shifts() {
        for extent in 1..6 {
            for c in 0..extent {
                for d in -7i64..=7 {
                    let p = shifted(c, d, extent, true).unwrap();
                    assert_eq!(p as i64, (c as i64 + d).rem_euclid(extent as i64));
                    let np = shifted(c, d, extent, false);
                    let t = c as i64 + d;
                    if t >= 0 && t < extent as i64 {
                        assert_eq!(np, Some(t as usize));
                    } else {
                        assert_eq!(np, None);
                    }
                }
            }
        }
    }
}
