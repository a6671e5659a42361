//! The geometry of a local part's storage: its interior, the ghost widths
//! around it, the storage order, and the storage seen as lines along the
//! fastest axis (which of them cross the interior).

use redist_plan::coords::Order;

/// The geometry of a local part's storage: the interior's extents, the
/// ghost widths around it, in the layout's axis order, and the storage
/// order. Without ghosts the storage is the interior. The widths the array
/// was asked for are kept apart (`declared`): they are the same on every
/// rank, also on a rank outside the layout, whose storage holds nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Padding {
    interior: Box<[usize]>,
    widths: Box<[usize]>,
    declared: Box<[usize]>,
    order: Order,
}

impl Padding {
    /// Storage of `interior` with `widths` of ghosts per axis.
    pub fn new(interior: &[usize], widths: &[usize], order: Order) -> Padding {
        debug_assert_eq!(interior.len(), widths.len());
        Padding {
            interior: interior.into(),
            widths: widths.into(),
            declared: widths.into(),
            order,
        }
    }

    /// This padding, the array's ghost widths declared as `declared`
    /// (where the storage holds none: a rank outside the layout).
    pub fn declaring(self, declared: &[usize]) -> Padding {
        Padding {
            declared: declared.into(),
            ..self
        }
    }

    /// The ghost widths the array was asked for, the same on every rank.
    pub fn declared(&self) -> &[usize] {
        &self.declared
    }

    /// Whether there are ghost cells at all.
    pub fn has_ghosts(&self) -> bool {
        self.widths.iter().any(|&w| w > 0)
    }

    /// Ghost widths per axis.
    pub fn widths(&self) -> &[usize] {
        &self.widths
    }

    /// Extents of the padded storage per axis: `m_d + 2 w_d`.
    pub fn padded(&self) -> Vec<usize> {
        (self.interior.iter().zip(self.widths.iter()))
            .map(|(&m, &w)| m + 2 * w)
            .collect()
    }

    /// Elements of the padded storage.
    pub fn len(&self) -> usize {
        self.padded().iter().product()
    }

    /// Axes from the slowest-varying in memory to the fastest.
    fn axes(&self) -> Vec<usize> {
        let n = self.interior.len();
        match self.order {
            Order::RowMajor => (0..n).collect(),
            Order::ColumnMajor => (0..n).rev().collect(),
        }
    }

    /// The storage as padded lines along the fastest axis: for padded line
    /// `k` (in memory order), the interior line it holds — its index among
    /// the interior's lines in memory order, and its range within the
    /// padded line — or `None` where the line is all ghosts.
    pub fn lines(&self) -> Lines {
        let axes = self.axes();
        let padded = self.padded();
        let Some((&fast, outer)) = axes.split_last() else {
            return Lines::default();
        };
        let (w, m) = (self.widths[fast], self.interior[fast]);
        Lines {
            outer: outer
                .iter()
                .map(|&d| (padded[d], self.widths[d], self.interior[d]))
                .collect(),
            line: padded[fast],
            interior: w..w + m,
        }
    }
}

/// Padded storage seen as lines along the fastest axis ([`Padding::lines`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Lines {
    /// Per outer axis, slowest first: padded extent, width, interior extent.
    outer: Vec<(usize, usize, usize)>,
    /// Padded line length.
    pub line: usize,
    /// The interior's range within a padded line.
    pub interior: std::ops::Range<usize>,
}

impl Lines {
    /// The index, among the interior's lines, of padded line `k`, if it
    /// crosses the interior.
    pub fn interior_line(&self, mut k: usize) -> Option<usize> {
        if self.interior.is_empty() {
            return None;
        }
        let (mut index, mut scale) = (0, 1);
        for &(padded, w, m) in self.outer.iter().rev() {
            let c = k % padded;
            k /= padded;
            if c < w || c >= w + m {
                return None;
            }
            index += (c - w) * scale;
            scale *= m;
        }
        Some(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every padded line's interior line, against the padded index of each
    /// interior element.
    #[test]
    fn padded_lines_find_the_interior() {
        for (interior, widths, order) in [
            (vec![3, 4], vec![1, 2], Order::RowMajor),
            (vec![3, 4], vec![1, 2], Order::ColumnMajor),
            (vec![2, 3, 2], vec![0, 1, 2], Order::RowMajor),
            (vec![5], vec![3], Order::RowMajor),
            (vec![0, 3], vec![1, 1], Order::RowMajor),
        ] {
            let p = Padding::new(&interior, &widths, order);
            let lines = p.lines();
            let count = p.len() / lines.line.max(1);
            let found: Vec<usize> = (0..count).filter_map(|k| lines.interior_line(k)).collect();
            let axes = p.axes();
            let fast = *axes.last().unwrap();
            let expected = interior.iter().product::<usize>() / interior[fast].max(1);
            let expected = if interior[fast] == 0 { 0 } else { expected };
            assert_eq!(
                found,
                (0..expected).collect::<Vec<_>>(),
                "{interior:?} {widths:?}"
            );
            assert_eq!(lines.interior, widths[fast]..widths[fast] + interior[fast]);
        }
    }
}
