//! The file side of a transfer to or from an HDF5 dataset: each round,
//! every rank selects its box of the dataset (a hyperslab; nothing on the
//! ranks without one) and calls one `H5Dwrite` or `H5Dread`.
//!
//! The transfer property list asks for independent MPI-IO
//! (`H5FD_MPIO_INDEPENDENT`), not collective: the aggregators' boxes are
//! already gathered, one contiguous range of the file each (one
//! `MPI_File_write_at` apiece; the MPI-IO driver does no data sieving, so
//! disjoint boxes never overwrite each other), and HDF5 1.10's collective
//! path is not safe when a write fails on one rank alone: after a failed
//! `MPI_File_write_at_all` it skips the collective `MPI_File_set_view`
//! that resets the view, and the other ranks wait in it forever (seen
//! with one rank over its file size limit). Independent calls hold no
//! collective inside, so a failure is agreed afterwards like any other.
//! Measured on 2 ranks, 128 MiB and 512 MiB arrays: the same speed.

use super::types;
use crate::element::ElementType;
use crate::error::IoError;
use crate::transfer::Store;
use hdf5::{Dataset, Dataspace, Datatype, Hyperslab, PropertyList, Selection, SliceOrIndex};
use hdf5_sys::h5d::{H5Dread, H5Dwrite};
use hdf5_sys::h5p::{H5FD_mpio_xfer_t, H5Pcreate, H5Pset_dxpl_mpio};
use mpi_extras::file::FileBox;
use procgrid::Order;

/// A dataset, written and read by hyperslabs in collective calls.
pub(super) struct DatasetStore<'a> {
    dataset: &'a Dataset,
    /// The dataset's dataspace (the whole array, nothing selected).
    space: Dataspace,
    /// The type of the elements in memory: the dataset's.
    memory_type: Datatype,
    element_bytes: usize,
    /// The transfer property list (independent MPI-IO).
    transfer: PropertyList,
    /// The file's name, for errors.
    path: String,
    /// The dataset's path, for errors.
    name: String,
}

/// Which way a call moves the bytes.
enum Bytes<'b> {
    Write(&'b [u8]),
    Read(&'b mut [u8]),
}

impl<'a> DatasetStore<'a> {
    /// A store of `dataset`, whose elements are `element`s. Not collective.
    pub fn new(
        dataset: &'a Dataset,
        element: ElementType,
        path: String,
        name: String,
    ) -> hdf5::Result<DatasetStore<'a>> {
        Ok(DatasetStore {
            dataset,
            space: dataset.space()?,
            memory_type: types::datatype(element)?,
            element_bytes: element.size(),
            transfer: independent_transfer()?,
            path,
            name,
        })
    }

    /// The file and memory dataspaces of a call moving `file_box` (`len`
    /// bytes) or nothing.
    fn spaces(
        &self,
        file_box: Option<&FileBox>,
        len: usize,
    ) -> Result<(Dataspace, Dataspace), String> {
        let nothing = |space: &Dataspace| {
            let none: Vec<SliceOrIndex> = (0..space.ndim())
                .map(|_| SliceOrIndex::SliceCount {
                    start: 0,
                    step: 1,
                    count: 0,
                    block: 1,
                })
                .collect();
            space.select(Selection::Hyperslab(Hyperslab::from(none)))
        };
        let Some(file_box) = file_box else {
            let file = nothing(&self.space).map_err(|e| e.to_string())?;
            let memory = Dataspace::try_new([1])
                .and_then(|m| nothing(&m))
                .map_err(|e| e.to_string())?;
            return Ok((file, memory));
        };
        let count: usize = file_box.extent.iter().product();
        let shape = self.space.shape();
        if file_box.order != Order::RowMajor
            || file_box.origin.len() != shape.len()
            || file_box.extent.len() != shape.len()
            || count.checked_mul(self.element_bytes) != Some(len)
        {
            return Err(format!(
                "internal error: a box at {:?} of {:?} ({:?} order, {len} bytes) does not fit \
                 the dataset of shape {shape:?}",
                file_box.origin, file_box.extent, file_box.order
            ));
        }
        let slab: Vec<SliceOrIndex> = (file_box.origin.iter().zip(&file_box.extent))
            .map(|(&start, &count)| SliceOrIndex::SliceCount {
                start,
                step: 1,
                count,
                block: 1,
            })
            .collect();
        let file = (self
            .space
            .select(Selection::Hyperslab(Hyperslab::from(slab))))
        .map_err(|e| e.to_string())?;
        let memory = Dataspace::try_new([count]).map_err(|e| e.to_string())?;
        Ok((file, memory))
    }

    /// One call moving `file_box` (or nothing) between the dataset and
    /// `bytes`; every rank calls, each round.
    fn call(&self, file_box: Option<&FileBox>, bytes: Bytes<'_>) -> Result<(), String> {
        let len = match &bytes {
            Bytes::Write(b) => b.len(),
            Bytes::Read(b) => b.len(),
        };
        let (file, memory) = self.spaces(file_box, len)?;
        let ids = (
            self.dataset.id(),
            self.memory_type.id(),
            memory.id(),
            file.id(),
            self.transfer.id(),
        );
        let code = hdf5::sync::sync(|| match bytes {
            // SAFETY: every id is a live handle owned above; `b` holds
            // exactly the bytes of the memory dataspace's selection (the
            // box's elements of `memory_type`, checked in `spaces`, or
            // none) and outlives the blocking call.
            Bytes::Write(b) => unsafe {
                H5Dwrite(ids.0, ids.1, ids.2, ids.3, ids.4, b.as_ptr().cast())
            },
            // SAFETY: as for the write, `b` is writable and of the
            // selection's size.
            Bytes::Read(b) => unsafe {
                H5Dread(ids.0, ids.1, ids.2, ids.3, ids.4, b.as_mut_ptr().cast())
            },
        });
        hdf5::h5check(code).map(|_| ()).map_err(|e| e.to_string())
    }
}

/// A dataset transfer property list asking for independent MPI-IO.
pub(super) fn independent_transfer() -> hdf5::Result<PropertyList> {
    hdf5::sync::sync(|| {
        // SAFETY: creates a new property list of a class the library
        // registered at initialisation (the lock is held).
        let id = hdf5::h5check(unsafe { H5Pcreate(*hdf5::globals::H5P_DATASET_XFER) })?;
        // SAFETY: `id` is a fresh property list id owned by nobody else;
        // the PropertyList takes it over and closes it when dropped.
        let list: PropertyList = unsafe { hdf5::from_id(id) }?;
        // SAFETY: a live dataset transfer property list.
        let code = unsafe { H5Pset_dxpl_mpio(list.id(), H5FD_mpio_xfer_t::H5FD_MPIO_INDEPENDENT) };
        hdf5::h5check(code)?;
        Ok(list)
    })
}

impl Store for DatasetStore<'_> {
    fn write(
        &mut self,
        file_box: Option<&FileBox>,
        data: &[u8],
        _contiguous: bool,
    ) -> Result<(), IoError> {
        self.call(file_box, Bytes::Write(data))
            .map_err(|reason| IoError::Write {
                path: self.path.clone(),
                reason: format!("the dataset {}: {reason}", self.name),
            })
    }

    fn read(
        &mut self,
        file_box: Option<&FileBox>,
        data: &mut [u8],
        _contiguous: bool,
    ) -> Result<(), IoError> {
        self.call(file_box, Bytes::Read(data))
            .map_err(|reason| IoError::Read {
                path: self.path.clone(),
                reason: format!("the dataset {}: {reason}", self.name),
            })
    }
}
