//! [`Datatype`]: committed MPI datatypes of elements moved as bytes, and
//! of one side of a message described by a [`TypeTree`] (runs, repeats
//! and sequences become contiguous, hvector, hindexed and struct types).

use crate::error::{count, MpiError};
use mpi::datatype::UserDatatype;
use mpi::ffi;
use mpi::raw::{AsRaw, FromRaw};
use mpi::traits::Equivalence;
use mpi::Count;
use redist_plan::program::TypeTree;
use std::mem::ManuallyDrop;

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
