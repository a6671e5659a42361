//! `--baseline hdf5`: the same dataset written or read by parallel HDF5
//! the way a C programmer would — every rank selects its own blocks in
//! the file's dataspace as a union of regular hyperslabs and moves its
//! whole local part with one collective `H5Dwrite` / `H5Dread` (memory
//! space: the local part's shape).
//!
//! In a block-cyclic dimension a rank's indices are its full blocks
//! (start: the first index of its first block, stride `P·b`, count: the
//! full blocks, block `b`) and perhaps a shorter last block; the
//! selection is the union, over the dimensions' choices of full blocks or
//! last block, of the products (at most `2^k` hyperslabs; a `block`
//! layout is one box). Failures are agreed after opening, after the
//! dataset is made or found, and at the end, so no rank is left waiting.
//! Without the `hdf5` feature the baseline says how to get it.

use super::args::Common;
use super::timing::time_reps;
use crate::error::CliError;
use crate::measure::values::IndexValue;
use dist_array::{DistArray, Layout};
use dist_io::{FileInfo, Format};
use mpi::topology::SimpleCommunicator;
use procgrid::{Order, ProcGrid};

/// Seconds of `common.reps` writes of `array` as the dataset `format`
/// names, after one untimed write, each after `fresh`. Collective.
pub(super) fn write_times<T: IndexValue>(
    array: &DistArray<T>,
    format: &Format,
    common: &Common,
    sync: bool,
    world: &SimpleCommunicator,
    fresh: impl Fn(),
) -> Result<Vec<f64>, CliError> {
    let Format::Hdf5 { dataset } = format else {
        return Err(CliError::Unsupported {
            what: "--baseline hdf5",
            expected: "an HDF5 file (--format h5, or a .h5 name)".to_string(),
        });
    };
    if array.layout().storage() != Order::RowMajor {
        return Err(CliError::Unsupported {
            what: "--baseline hdf5",
            expected: "--order c (HDF5 memory spaces are C order)".to_string(),
        });
    }
    let write = || calls::write(array, &common.file, dataset, sync);
    write()?;
    time_reps(world, common.reps, fresh, write)
}

/// Seconds of `common.reps` reads of the whole dataset of `info` into a
/// row-major array of `layout` on `grid` (after one untimed read), and
/// that array. Collective.
pub(super) fn read_times<T: IndexValue>(
    grid: &ProcGrid,
    layout: &Layout,
    info: &FileInfo,
    whole: bool,
    common: &Common,
    world: &SimpleCommunicator,
) -> Result<(Vec<f64>, DistArray<T>), CliError> {
    let Format::Hdf5 { dataset } = &info.format else {
        return Err(CliError::Unsupported {
            what: "--baseline hdf5",
            expected: "an HDF5 file".to_string(),
        });
    };
    if !whole {
        return Err(CliError::Unsupported {
            what: "--baseline hdf5",
            expected: "a whole dataset (no --window)".to_string(),
        });
    }
    let layout = layout.clone().with_storage(Order::RowMajor);
    let mut theirs = DistArray::<T>::zeros(grid, layout)?;
    calls::read(&mut theirs, &common.file, dataset)?;
    let t = time_reps(
        world,
        common.reps,
        || {},
        || calls::read(&mut theirs, &common.file, dataset),
    )?;
    Ok((t, theirs))
}

/// A tool built without HDF5.
#[cfg(not(feature = "hdf5"))]
mod calls {
    use crate::error::CliError;
    use crate::measure::values::IndexValue;
    use dist_array::DistArray;
    use std::path::Path;

    fn not_built() -> CliError {
        CliError::Unsupported {
            what: "--baseline hdf5",
            expected: "the tool built with the `hdf5` feature (parallel HDF5)".to_string(),
        }
    }

    pub(super) fn write<T: IndexValue>(
        _: &DistArray<T>,
        _: &Path,
        _: &str,
        _: bool,
    ) -> Result<(), CliError> {
        Err(not_built())
    }

    pub(super) fn read<T: IndexValue>(
        _: &mut DistArray<T>,
        _: &Path,
        _: &str,
    ) -> Result<(), CliError> {
        Err(not_built())
    }
}

/// The HDF5 calls.
#[cfg(feature = "hdf5")]
mod calls {
    use crate::collective::on_every_rank;
    use crate::error::CliError;
    use crate::measure::values::IndexValue;
    use dist_array::{DistArray, Layout};
    use dist_io::hdf5::types::{datatype, descriptor};
    use dist_io::ElementType;
    use hdf5::{Dataset, Dataspace, Datatype, File, PropertyList};
    use hdf5_sys::h5::herr_t;
    use hdf5_sys::h5d::{H5Dread, H5Dwrite};
    use hdf5_sys::h5i::hid_t;
    use hdf5_sys::h5p::{H5FD_mpio_xfer_t, H5Pcreate, H5Pset_dxpl_mpio};
    use hdf5_sys::h5s::{H5S_seloper_t, H5Sselect_hyperslab, H5Sselect_none};
    use mpi::raw::AsRaw;
    use mpi::topology::SimpleCommunicator;
    use std::path::Path;

    /// Writes `array` as `dataset` of a new HDF5 file at `path`. Collective.
    pub(super) fn write<T: IndexValue>(
        array: &DistArray<T>,
        path: &Path,
        dataset: &str,
        sync: bool,
    ) -> Result<(), CliError> {
        let comm = array.grid().communicator();
        let raw = comm.as_raw();
        let file = File::with_options()
            .with_fapl(|p| p.mpio(raw, None))
            .create(path);
        let file = agreed(comm, path, file)?;
        let made = (|| {
            let ds = file
                .new_dataset_builder()
                .empty_as(descriptor(ElementType::of::<T>()))
                .shape(array.shape().to_vec())
                .create(dataset)?;
            let spaces = Spaces::of(&ds, ElementType::of::<T>(), array.layout(), array.rank())?;
            Ok((ds, spaces))
        })();
        let done = match agreed(comm, path, made) {
            Ok((ds, spaces)) => {
                let data: &[u8] = bytemuck::cast_slice(array.local_slice());
                // SAFETY: `data` is the local part, of the memory space's
                // size and of the dataset's element type.
                let written = spaces.call(&ds, |ids| unsafe {
                    H5Dwrite(ids.0, ids.1, ids.2, ids.3, ids.4, data.as_ptr().cast())
                });
                drop(ds);
                written.and_then(|()| if sync { file.flush() } else { Ok(()) })
            }
            Err(e) => {
                let _ = file.close();
                return Err(e);
            }
        };
        let closed = file.close();
        agreed(comm, path, done.and(closed))
    }

    /// Reads `dataset` of the HDF5 file at `path` into `array` (of the
    /// dataset's shape, row-major). Collective.
    pub(super) fn read<T: IndexValue>(
        array: &mut DistArray<T>,
        path: &Path,
        dataset: &str,
    ) -> Result<(), CliError> {
        let grid = array.grid().clone();
        let comm = grid.communicator();
        let raw = comm.as_raw();
        let file = File::with_options()
            .with_fapl(|p| p.mpio(raw, None))
            .open(path);
        let file = agreed(comm, path, file)?;
        let found = (|| {
            let ds = file.dataset(dataset)?;
            let spaces = Spaces::of(&ds, ElementType::of::<T>(), array.layout(), array.rank())?;
            Ok((ds, spaces))
        })();
        let done = match agreed(comm, path, found) {
            Ok((ds, spaces)) => {
                let data: &mut [u8] = bytemuck::cast_slice_mut(array.local_slice_mut());
                // SAFETY: `data` is the writable local part, of the memory
                // space's size and of the dataset's element type.
                let read = spaces.call(&ds, |ids| unsafe {
                    H5Dread(ids.0, ids.1, ids.2, ids.3, ids.4, data.as_mut_ptr().cast())
                });
                drop(ds);
                read
            }
            Err(e) => {
                let _ = file.close();
                return Err(e);
            }
        };
        let closed = file.close();
        agreed(comm, path, done.and(closed))
    }

    /// `Ok` on every rank only when `local` is `Ok` on every rank.
    /// Collective.
    fn agreed<V>(
        comm: &SimpleCommunicator,
        path: &Path,
        local: hdf5::Result<V>,
    ) -> Result<V, CliError> {
        let all = on_every_rank(comm, local.is_ok());
        let file = |message: String| CliError::File {
            path: path.display().to_string(),
            message,
        };
        match local {
            Ok(v) if all => Ok(v),
            Ok(_) => Err(file("the HDF5 baseline failed on another rank".to_string())),
            Err(e) => Err(file(format!("the HDF5 baseline: {e}"))),
        }
    }

    /// The ids of one `H5Dwrite` / `H5Dread`: dataset, memory type, memory
    /// space, file space, transfer property list.
    type Ids = (hid_t, hid_t, hid_t, hid_t, hid_t);

    /// A rank's file selection, memory space and collective transfer list.
    struct Spaces {
        file: Dataspace,
        memory: Dataspace,
        memory_type: Datatype,
        transfer: PropertyList,
    }

    impl Spaces {
        /// The spaces of the local part of `rank` (none: nothing) of
        /// `layout` in `ds`, of `element`s. Not collective.
        fn of(
            ds: &Dataset,
            element: ElementType,
            layout: &Layout,
            rank: Option<usize>,
        ) -> hdf5::Result<Spaces> {
            let file = ds.space()?;
            let local = match rank {
                Some(r) => layout.local_shape(r).map_err(|e| e.to_string())?,
                None => vec![0; layout.ndim()],
            };
            let pieces = match rank {
                Some(r) if !local.contains(&0) => {
                    let coords = layout.coords_of_rank(r).map_err(|e| e.to_string())?;
                    (0..layout.ndim())
                        .map(|d| pieces(layout.axis(d).blocks(coords[d]).map(|(g, _)| g)))
                        .collect()
                }
                _ => Vec::new(),
            };
            select(&file, &pieces)?;
            let memory = Dataspace::try_new(local)?;
            Ok(Spaces {
                file,
                memory,
                memory_type: datatype(element)?,
                transfer: collective_transfer()?,
            })
        }

        /// Runs `f` with the ids of a call on `ds`, under HDF5's lock.
        fn call(&self, ds: &Dataset, f: impl FnOnce(Ids) -> herr_t) -> hdf5::Result<()> {
            let ids = (
                ds.id(),
                self.memory_type.id(),
                self.memory.id(),
                self.file.id(),
                self.transfer.id(),
            );
            let code = hdf5::sync::sync(|| f(ids));
            hdf5::h5check(code).map(|_| ())
        }
    }

    /// One dimension's indices (the rank's blocks, in order) as regular
    /// hyperslab pieces `[start, stride, count, block]`: its full blocks, and
    /// the shorter last one.
    fn pieces(blocks: impl Iterator<Item = std::ops::Range<usize>>) -> Vec<[u64; 4]> {
        let blocks: Vec<(u64, u64)> = blocks
            .map(|r| (r.start as u64, (r.end - r.start) as u64))
            .collect();
        let Some(&(start, b)) = blocks.first() else {
            return Vec::new();
        };
        let full = blocks.iter().take_while(|&&(_, n)| n == b).count();
        let stride = blocks.get(1).map_or(b, |&(s, _)| s - start);
        let regular = (0..full).all(|k| blocks[k].0 == start + k as u64 * stride);
        if !regular {
            // Not block-cyclic: one piece per block.
            return blocks.iter().map(|&(s, n)| [s, n, 1, n]).collect();
        }
        let mut out = vec![[start, stride.max(b), full as u64, b]];
        out.extend(blocks[full..].iter().map(|&(s, n)| [s, n, 1, n]));
        out
    }

    /// Selects in `space` the union, over every choice of one piece per
    /// dimension, of the hyperslabs they make (nothing when `pieces` is
    /// empty).
    fn select(space: &Dataspace, pieces: &[Vec<[u64; 4]>]) -> hdf5::Result<()> {
        let id = space.id();
        hdf5::sync::sync(|| {
            if pieces.is_empty() || pieces.iter().any(Vec::is_empty) {
                // SAFETY: a live dataspace this function was handed.
                return hdf5::h5check(unsafe { H5Sselect_none(id) }).map(|_| ());
            }
            let k = pieces.len();
            let mut choice = vec![0usize; k];
            let mut first = true;
            loop {
                let field =
                    |f: usize| -> Vec<u64> { (0..k).map(|d| pieces[d][choice[d]][f]).collect() };
                let (start, stride, count, block) = (field(0), field(1), field(2), field(3));
                let op = if first {
                    H5S_seloper_t::H5S_SELECT_SET
                } else {
                    H5S_seloper_t::H5S_SELECT_OR
                };
                first = false;
                // SAFETY: a live dataspace of `k` dimensions; the four arrays
                // hold `k` values each and outlive the call.
                let code = unsafe {
                    H5Sselect_hyperslab(
                        id,
                        op,
                        start.as_ptr(),
                        stride.as_ptr(),
                        count.as_ptr(),
                        block.as_ptr(),
                    )
                };
                hdf5::h5check(code)?;
                // The next choice, the last dimension fastest.
                let mut d = k;
                loop {
                    if d == 0 {
                        return Ok(());
                    }
                    d -= 1;
                    choice[d] += 1;
                    if choice[d] < pieces[d].len() {
                        break;
                    }
                    choice[d] = 0;
                }
            }
        })
    }

    /// A dataset transfer property list asking for collective MPI-IO.
    fn collective_transfer() -> hdf5::Result<PropertyList> {
        hdf5::sync::sync(|| {
            // SAFETY: creates a property list of a class registered at the
            // library's initialisation (the lock is held).
            let id = hdf5::h5check(unsafe { H5Pcreate(*hdf5::globals::H5P_DATASET_XFER) })?;
            // SAFETY: `id` is fresh and owned by nobody else; the list closes
            // it when dropped.
            let list: PropertyList = unsafe { hdf5::from_id(id) }?;
            // SAFETY: a live dataset transfer property list.
            let code =
                unsafe { H5Pset_dxpl_mpio(list.id(), H5FD_mpio_xfer_t::H5FD_MPIO_COLLECTIVE) };
            hdf5::h5check(code)?;
            Ok(list)
        })
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn block_cyclic_indices_are_one_regular_piece_and_a_tail() {
            // cyclic(2) over 3 ranks of 11: rank 0 holds 0..2, 6..8; rank 2 holds 4..6, 10..11.
            let l = Layout::parse(&[11], "cyclic(2)@3").unwrap();
            let of = |p| pieces(l.axis(0).blocks(p).map(|(g, _)| g));
            assert_eq!(of(0), vec![[0, 6, 2, 2]]);
            assert_eq!(of(2), vec![[4, 6, 1, 2], [10, 1, 1, 1]]);
            // A block layout: one box.
            let b = Layout::parse(&[10], "block@4").unwrap();
            assert_eq!(
                pieces(b.axis(0).blocks(3).map(|(g, _)| g)),
                vec![[9, 1, 1, 1]]
            );
            assert!(pieces(std::iter::empty()).is_empty());
        }
    }
}
