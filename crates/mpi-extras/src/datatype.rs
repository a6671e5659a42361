//! [`Datatype`]: committed MPI datatypes of elements moved as bytes, of
//! one side of a message described by a [`TypeTree`] (runs, repeats and
//! sequences become contiguous, hvector, hindexed and struct types), and
//! of a box of an array (`MPI_Type_create_subarray`).

use crate::error::{check, count, MpiError};
use mpi::datatype::UserDatatype;
use mpi::ffi;
use mpi::raw::{AsRaw, FromRaw};
use mpi::traits::Equivalence;
use mpi::Count;
use redist_plan::coords::Order;
use redist_plan::program::TypeTree;
use std::mem::ManuallyDrop;
use std::ops::Range;
use std::os::raw::c_int;

/// A committed MPI datatype and the bytes one instance of it spans from
/// its base address, freed on drop while MPI is running.
pub struct Datatype {
    pub(crate) inner: ManuallyDrop<UserDatatype>,
    pub(crate) span: usize,
}

impl Datatype {
    /// One element of `bytes` bytes.
    ///
    /// # Errors
    ///
    /// - [`MpiError::Limit`] when `bytes` exceeds `i32::MAX`.
    pub fn element(bytes: usize) -> Result<Datatype, MpiError> {
        let inner =
            UserDatatype::contiguous(count(bytes, "element size")?, &u8::equivalent_datatype());
        Ok(Datatype {
            inner: ManuallyDrop::new(inner),
            span: bytes,
        })
    }

    /// One side of a message, described by `tree` (offsets in elements of
    /// `elem`), as a single datatype laid over local storage, so MPI reads
    /// or writes it directly: a run becomes a block of elements, a repeat
    /// an `MPI_Type_create_hvector`, a sequence of runs an
    /// `MPI_Type_create_hindexed`, any other sequence an `MPI_Type_create_struct`
    /// — one MPI datatype per node of the tree, never one entry per run.
    ///
    /// # Errors
    ///
    /// - [`MpiError::Limit`] when a count exceeds `i32::MAX` or an offset
    ///   in bytes overflows `MPI_Aint`.
    pub fn tree(tree: &TypeTree, elem: &Datatype) -> Result<Datatype, MpiError> {
        let span = tree.span().checked_mul(elem.span).ok_or(MpiError::Limit {
            what: "datatype span in bytes",
            value: tree.span() as u128 * elem.span as u128,
            limit: usize::MAX as u128,
        })?;
        elem.offset(tree.span())?;
        let inner = match node_type(tree, elem)? {
            (1, Some(ty)) => ty,
            (n, None) => UserDatatype::contiguous(n, &*elem.inner),
            (n, Some(ty)) => UserDatatype::contiguous(n, &ty),
        };
        Ok(Datatype {
            inner: ManuallyDrop::new(inner),
            span,
        })
    }

    /// The box `starts[d] .. starts[d] + subsizes[d]` of an array of
    /// `sizes` elements of `elem` stored in `order`, as one committed
    /// datatype (`MPI_Type_create_subarray`): one instance laid over the
    /// array's first byte picks out the box's elements, in the array's own
    /// order. Its extent, and so [`bytes`](Self::bytes), is the whole
    /// array's.
    ///
    /// ```
    /// use mpi_extras::Datatype;
    /// use redist_plan::coords::Order;
    ///
    /// let _universe = mpi::initialize().unwrap();
    /// let f64s = Datatype::element(8).unwrap();
    /// // Column 1 of a 3 x 4 row-major array of f64.
    /// let column = Datatype::subarray(&[3, 4], &[3, 1], &[0, 1], Order::RowMajor, &f64s).unwrap();
    /// assert_eq!(column.bytes(), 3 * 4 * 8);
    /// // An empty side is refused (Open MPI refuses it; MPICH takes it).
    /// assert!(Datatype::subarray(&[3, 4], &[0, 4], &[0, 0], Order::RowMajor, &f64s).is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// - [`MpiError::InvalidArgument`] when the three lists differ in length
    ///   or are empty, or a side of the box is empty or reaches past its
    ///   array's extent;
    /// - [`MpiError::Limit`] when an extent exceeds `i32::MAX` or the array's
    ///   bytes overflow `MPI_Aint`;
    /// - [`MpiError::Mpi`] when MPI returns an error code.
    pub fn subarray(
        sizes: &[usize],
        subsizes: &[usize],
        starts: &[usize],
        order: Order,
        elem: &Datatype,
    ) -> Result<Datatype, MpiError> {
        let k = sizes.len();
        let fits = |d: usize| {
            subsizes[d] >= 1
                && starts[d]
                    .checked_add(subsizes[d])
                    .is_some_and(|end| end <= sizes[d])
        };
        if k == 0 || subsizes.len() != k || starts.len() != k || !(0..k).all(fits) {
            return Err(MpiError::InvalidArgument {
                what: "subarray",
                value: format!("sizes {sizes:?}, subsizes {subsizes:?}, starts {starts:?}"),
                expected: "one size, subsize and start per dimension, every subsize at least 1 \
                           and start + subsize within its size"
                    .to_string(),
            });
        }
        let ints = |v: &[usize], what| {
            v.iter()
                .map(|&n| count(n, what))
                .collect::<Result<Vec<_>, _>>()
        };
        let (c_sizes, c_subsizes, c_starts) = (
            ints(sizes, "subarray extent")?,
            ints(subsizes, "subarray box extent")?,
            ints(starts, "subarray box start")?,
        );
        let elements = sizes
            .iter()
            .try_fold(1usize, |n, &s| n.checked_mul(s))
            .ok_or(MpiError::Limit {
                what: "subarray elements",
                value: sizes.iter().map(|&s| s as u128).product(),
                limit: usize::MAX as u128,
            })?;
        elem.offset(elements)?;
        let order = match order {
            Order::RowMajor => ffi::MPI_ORDER_C,
            Order::ColumnMajor => ffi::MPI_ORDER_FORTRAN,
        };
        let order = c_int::try_from(order)
            .map_err(|_| MpiError::Internal("MPI_ORDER_* outside int".into()))?;
        let ndims = count(k, "subarray dimensions")?;
        // SAFETY: reads a constant handle MPI defines.
        let mut raw = unsafe { ffi::RSMPI_DATATYPE_NULL };
        // SAFETY: the three lists hold `ndims` ints each and outlive the
        // call; `elem` is committed; `raw` receives the new type.
        let code = unsafe {
            ffi::MPI_Type_create_subarray(
                ndims,
                c_sizes.as_ptr(),
                c_subsizes.as_ptr(),
                c_starts.as_ptr(),
                order,
                elem.raw(),
                &mut raw,
            )
        };
        check(code, "MPI_Type_create_subarray")?;
        // SAFETY: `raw` is the uncommitted type just made.
        let code = unsafe { ffi::MPI_Type_commit(&mut raw) };
        if let Err(e) = check(code, "MPI_Type_commit") {
            // SAFETY: `raw` is a type of ours that nothing else refers to.
            unsafe { ffi::MPI_Type_free(&mut raw) };
            return Err(e);
        }
        // SAFETY: a committed type this function owns alone, handed over
        // to the `UserDatatype`, which frees it.
        let inner = unsafe { UserDatatype::from_raw(raw) };
        Ok(Datatype {
            inner: ManuallyDrop::new(inner),
            span: elements * elem.span,
        })
    }

    /// The bytes `count` instances of this datatype touch when laid at byte
    /// `at` of a buffer (consecutive instances an extent apart), from
    /// MPI's lower bound, extent and true extent: empty for a count of 0.
    ///
    /// # Errors
    ///
    /// - [`MpiError::InvalidArgument`] when they would reach before the
    ///   buffer's first byte;
    /// - [`MpiError::Limit`] when the count exceeds `i32::MAX` or the bytes
    ///   overflow `usize`.
    pub(crate) fn reach(&self, count: usize, at: usize) -> Result<Range<usize>, MpiError> {
        crate::error::count(count, "datatype count")?;
        if count == 0 {
            return Ok(at..at);
        }
        let (mut _lb, mut extent, mut true_lb, mut true_extent) = (0, 0, 0, 0);
        // SAFETY: a committed type of ours and valid out-pointers.
        let code = unsafe { ffi::MPI_Type_get_extent(self.raw(), &mut _lb, &mut extent) };
        check(code, "MPI_Type_get_extent")?;
        // SAFETY: as above.
        let code =
            unsafe { ffi::MPI_Type_get_true_extent(self.raw(), &mut true_lb, &mut true_extent) };
        check(code, "MPI_Type_get_true_extent")?;
        // Instance i touches [at + i·extent + true_lb, ... + true_extent).
        let last = (count as i128 - 1) * extent as i128;
        let start = at as i128 + true_lb as i128 + last.min(0);
        let end = at as i128 + true_lb as i128 + true_extent as i128 + last.max(0);
        if start < 0 {
            return Err(MpiError::InvalidArgument {
                what: "datatype placement",
                value: format!("{count} instance(s) at byte {at}, reaching byte {start}"),
                expected: "instances that stay at or after the buffer's first byte".to_string(),
            });
        }
        let limit = |v: i128| {
            usize::try_from(v).map_err(|_| MpiError::Limit {
                what: "datatype reach in bytes",
                value: v.unsigned_abs(),
                limit: usize::MAX as u128,
            })
        };
        Ok(limit(start)?..limit(end)?)
    }

    /// `elements` of this datatype as a byte offset for MPI.
    pub(crate) fn offset(&self, elements: usize) -> Result<ffi::MPI_Aint, MpiError> {
        elements
            .checked_mul(self.span)
            .and_then(|b| ffi::MPI_Aint::try_from(b).ok())
            .ok_or(MpiError::Limit {
                what: "datatype offset in bytes",
                value: elements as u128 * self.span as u128,
                limit: ffi::MPI_Aint::MAX as u128,
            })
    }

    pub(crate) fn raw(&self) -> ffi::MPI_Datatype {
        self.inner.as_raw()
    }

    /// Bytes one instance spans (an element's size, for element types).
    pub fn bytes(&self) -> usize {
        self.span
    }

    /// Checks that one instance laid over `base` stays inside it.
    pub(crate) fn fits<T>(&self, base: &[T]) -> Result<(), MpiError> {
        let bytes = std::mem::size_of_val(base);
        if self.span > bytes {
            return Err(MpiError::Internal(format!(
                "a datatype spanning {} bytes laid over {bytes} bytes",
                self.span
            )));
        }
        Ok(())
    }
}

/// A node of a message's tree as (block length, datatype of one block
/// element), offsets in elements of `elem`: runs are blocks of the element
/// type, so they need no datatype of their own.
fn node_type(node: &TypeTree, elem: &Datatype) -> Result<(Count, Option<UserDatatype>), MpiError> {
    Ok(match node {
        TypeTree::Run(n) => (count(*n, "run length")?, None),
        TypeTree::Repeat {
            count: c,
            stride,
            inner,
        } => {
            let (len, ty) = node_type(inner, elem)?;
            let c = count(*c, "repeat count")?;
            let stride = elem.offset(*stride)?;
            let ty = match &ty {
                Some(t) => UserDatatype::heterogeneous_vector(c, len, stride, t),
                None => UserDatatype::heterogeneous_vector(c, len, stride, &*elem.inner),
            };
            (1, Some(ty))
        }
        TypeTree::Seq(children) if children.iter().all(|(_, p)| p.is_run()) => {
            // Runs only: an hindexed type of the element, which MPI walks as
            // one indexed loop (a struct of per-run duplicates of the element
            // type, it walks block by block).
            let mut lens = Vec::with_capacity(children.len());
            let mut displs = Vec::with_capacity(children.len());
            for (at, child) in children {
                lens.push(count(child.elements(), "run length")?);
                displs.push(elem.offset(*at)?);
            }
            let ty = UserDatatype::heterogeneous_indexed(&lens, &displs, &*elem.inner);
            (1, Some(ty))
        }
        TypeTree::Seq(children) => {
            let mut lens = Vec::with_capacity(children.len());
            let mut displs = Vec::with_capacity(children.len());
            let mut types = Vec::with_capacity(children.len());
            for (at, child) in children {
                let (len, ty) = node_type(child, elem)?;
                lens.push(len);
                displs.push(elem.offset(*at)?);
                types.push(match ty {
                    Some(t) => t,
                    None => mpi::datatype::UncommittedDatatype::dup(&*elem.inner),
                });
            }
            (1, Some(UserDatatype::structured(&lens, &displs, &types)))
        }
    })
}

impl Drop for Datatype {
    fn drop(&mut self) {
        if mpi::environment::is_initialized() && !mpi::environment::is_finalized() {
            // SAFETY: dropped once, here; MPI is running.
            unsafe { ManuallyDrop::drop(&mut self.inner) }
        }
        // After MPI_Finalize the handle is gone with the library: nothing to free.
    }
}
/// An rsmpi view of a raw datatype handle owned by a [`Datatype`].
pub(crate) fn datatype_ref<'a>(raw: ffi::MPI_Datatype) -> mpi::datatype::DatatypeRef<'a> {
    // SAFETY: `raw` comes from a committed `Datatype` (or element datatype)
    // that outlives the call the reference is used in.
    unsafe { mpi::datatype::DatatypeRef::from_raw(raw) }
}
