//! Local parts as ScaLAPACK stores them: column-major with a leading
//! dimension `LLD` that may exceed the local rows. ndcyclic's arrays hold
//! theirs packed (`LLD` = rows); these copy between the two, a column at a
//! time (one copy when `LLD` equals the rows).

/// The local part of a ScaLAPACK matrix in the caller's memory: `rows` ×
/// `cols` elements, column `j` starting at `ptr + j · lld`.
#[derive(Debug, Clone, Copy)]
pub struct Strided<T> {
    /// The first element.
    pub ptr: *mut T,
    /// Local rows.
    pub rows: usize,
    /// Local columns.
    pub cols: usize,
    /// Elements from one column to the next (≥ `rows`).
    pub lld: usize,
}

impl<T: Copy> Strided<T> {
    /// Copies the local part into `packed` (`rows · cols` elements, column
    /// after column).
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads of `(cols - 1) · lld + rows` elements
    /// when `rows · cols > 0`, not written meanwhile.
    pub unsafe fn read_into(&self, packed: &mut [T]) {
        debug_assert_eq!(packed.len(), self.rows * self.cols);
        if self.rows == 0 || self.cols == 0 {
            return;
        }
        if self.lld == self.rows {
            // SAFETY: the caller's contract; one run of rows · cols.
            let all = unsafe { std::slice::from_raw_parts(self.ptr, packed.len()) };
            packed.copy_from_slice(all);
            return;
        }
        for (j, column) in packed.chunks_exact_mut(self.rows).enumerate() {
            // SAFETY: column j lies at j · lld, `rows` long: inside the
            // caller's part.
            let from = unsafe { std::slice::from_raw_parts(self.ptr.add(j * self.lld), self.rows) };
            column.copy_from_slice(from);
        }
    }

    /// Copies `packed` into the local part, leaving the rows between
    /// `rows` and `lld` untouched.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for writes of `(cols - 1) · lld + rows`
    /// elements when `rows · cols > 0`, not accessed otherwise meanwhile.
    pub unsafe fn write_from(&self, packed: &[T]) {
        debug_assert_eq!(packed.len(), self.rows * self.cols);
        if self.rows == 0 || self.cols == 0 {
            return;
        }
        if self.lld == self.rows {
            // SAFETY: the caller's contract; one run of rows · cols.
            let all = unsafe { std::slice::from_raw_parts_mut(self.ptr, packed.len()) };
            all.copy_from_slice(packed);
            return;
        }
        for (j, column) in packed.chunks_exact(self.rows).enumerate() {
            // SAFETY: column j lies at j · lld, `rows` long: inside the
            // caller's part.
            let to =
                unsafe { std::slice::from_raw_parts_mut(self.ptr.add(j * self.lld), self.rows) };
            to.copy_from_slice(column);
        }
    }
}

#[cfg(test)]
#[allow(
    clippy::cast_possible_truncation,
    reason = "test sizes and values are small"
)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_the_padding() {
        for (rows, cols, lld) in [(3, 4, 5), (3, 4, 3), (0, 4, 1), (2, 0, 7), (1, 1, 1)] {
            let mut store: Vec<i32> = (0..(lld * cols.max(1)) as i32).map(|x| -x - 1).collect();
            let part = Strided {
                ptr: store.as_mut_ptr(),
                rows,
                cols,
                lld,
            };
            let mut packed = vec![0; rows * cols];
            // SAFETY: `store` holds lld · cols elements.
            unsafe { part.read_into(&mut packed) };
            for j in 0..cols {
                for i in 0..rows {
                    assert_eq!(packed[j * rows + i], -((j * lld + i) as i32) - 1);
                }
            }
            let fresh: Vec<i32> = (0..(rows * cols) as i32).collect();
            // SAFETY: as above.
            unsafe { part.write_from(&fresh) };
            for j in 0..cols {
                for i in 0..lld {
                    let want = if i < rows {
                        (j * rows + i) as i32
                    } else {
                        -((j * lld + i) as i32) - 1
                    };
                    assert_eq!(store[j * lld + i], want, "{rows}x{cols} lld {lld}");
                }
            }
        }
    }
}
