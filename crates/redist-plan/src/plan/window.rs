//! Windows: a rectangular sub-array of the source array moved onto a
//! rectangular sub-array of the target array of the same shape.
//!
//! A windowed plan moves the `shape` elements starting at `source_origin`
//! of the source array to the elements starting at `target_origin` of the
//! target array; the two arrays may have different shapes, and the rest of
//! the target is left as it was. This is what ScaLAPACK's `p?gemr2d` does
//! for sub-matrices (`IA, JA` of `A` onto `IB, JB` of `B`, `M × N`), for any
//! number of dimensions, with 0-based origins.

use crate::error::PlanError;

/// A rectangular window moved from one array to another.
///
/// ```
/// use redist_plan::Window;
/// // The 3x4 elements from (1, 2) of the source onto (0, 5) of the target.
/// let w = Window::new(&[1, 2], &[0, 5], &[3, 4]).unwrap();
/// assert_eq!(w.len(), 12);
/// assert!(Window::new(&[1], &[0, 5], &[3, 4]).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Window {
    source_origin: Vec<usize>,
    target_origin: Vec<usize>,
    shape: Vec<usize>,
}

impl Window {
    /// The window of `shape` elements from `source_origin` of the source
    /// array onto `target_origin` of the target array (0-based, one entry
    /// per dimension).
    ///
    /// # Errors
    ///
    /// [`PlanError::InvalidArgument`] when the three lists have different
    /// lengths. Whether the window fits inside the arrays is checked against
    /// their layouts, by [`Plan::with_window`](crate::Plan::with_window).
    pub fn new(
        source_origin: &[usize],
        target_origin: &[usize],
        shape: &[usize],
    ) -> Result<Window, PlanError> {
        if source_origin.len() != shape.len() || target_origin.len() != shape.len() {
            return Err(PlanError::InvalidArgument {
                what: "window",
                value: format!(
                    "source origin {source_origin:?}, target origin {target_origin:?}, \
                     shape {shape:?}"
                ),
                expected: "one origin entry per dimension of the shape on each side".to_string(),
            });
        }
        Ok(Window {
            source_origin: source_origin.to_vec(),
            target_origin: target_origin.to_vec(),
            shape: shape.to_vec(),
        })
    }

    /// The whole of an array of `shape` onto the whole of another.
    pub fn whole(shape: &[usize]) -> Window {
        Window {
            source_origin: vec![0; shape.len()],
            target_origin: vec![0; shape.len()],
            shape: shape.to_vec(),
        }
    }

    /// First index of the window in the source array.
    pub fn source_origin(&self) -> &[usize] {
        &self.source_origin
    }

    /// First index of the window in the target array.
    pub fn target_origin(&self) -> &[usize] {
        &self.target_origin
    }

    /// Extent of the window per dimension.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements in the window (saturating at `usize::MAX`).
    pub fn len(&self) -> usize {
        self.shape
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
            .unwrap_or(usize::MAX)
    }

    /// Whether the window holds no element.
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }

    /// The source index whose element lands on target index `target`, or
    /// `None` when `target` lies outside the window (or has another number
    /// of dimensions).
    ///
    /// ```
    /// use redist_plan::Window;
    /// let w = Window::new(&[1, 2], &[0, 5], &[3, 4]).unwrap();
    /// assert_eq!(w.source_index_of(&[2, 5]), Some(vec![3, 2]));
    /// assert_eq!(w.source_index_of(&[3, 5]), None);
    /// ```
    pub fn source_index_of(&self, target: &[usize]) -> Option<Vec<usize>> {
        if target.len() != self.shape.len() {
            return None;
        }
        (0..target.len())
            .map(|d| {
                let i = target[d].checked_sub(self.target_origin[d])?;
                (i < self.shape[d]).then(|| self.source_origin[d] + i)
            })
            .collect()
    }

    /// Whether the window is the whole of both arrays of `source_shape` and
    /// `target_shape`.
    pub fn is_whole(&self, source_shape: &[usize], target_shape: &[usize]) -> bool {
        self.source_origin.iter().all(|&o| o == 0)
            && self.target_origin.iter().all(|&o| o == 0)
            && self.shape == source_shape
            && self.shape == target_shape
    }
}

impl std::fmt::Display for Window {
    /// `shape from source_origin to target_origin`, e.g. `3x4 from (1,2) to (0,5)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join =
            |v: &[usize], sep: &str| v.iter().map(usize::to_string).collect::<Vec<_>>().join(sep);
        write!(
            f,
            "{} from ({}) to ({})",
            join(&self.shape, "x"),
            join(&self.source_origin, ","),
            join(&self.target_origin, ",")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_windows_are_recognised() {
        let w = Window::whole(&[4, 5]);
        assert!(w.is_whole(&[4, 5], &[4, 5]));
        assert!(!w.is_whole(&[4, 6], &[4, 5]));
        assert!(!Window::new(&[0, 1], &[0, 0], &[4, 5])
            .unwrap()
            .is_whole(&[4, 6], &[4, 5]));
        assert_eq!(w.to_string(), "4x5 from (0,0) to (0,0)");
        assert_eq!((w.len(), w.is_empty()), (20, false));
        assert!(Window::whole(&[3, 0]).is_empty());
        assert_eq!(Window::whole(&[usize::MAX, 2]).len(), usize::MAX);
    }
}
