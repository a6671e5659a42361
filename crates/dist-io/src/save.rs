//! Saving: an array to a new file (written beside it under a temporary
//! name, renamed once every rank succeeded), or into a window of an
//! existing one.

use crate::agree::agree;
use crate::checks::{check_window, fingerprint};
use crate::error::{name, IoError};
use crate::info::info_everywhere;
use crate::options::IoOptions;
use crate::registry;
use crate::transfer::{FileArray, Operation, Side, Transfer};
use dist_array::{DistArray, Element};
use std::path::Path;

/// Saves `array` to the file at `path`, in `.npy` format or, for `.h5`
/// names or [`Format::Hdf5`](crate::options::Format::Hdf5), as an HDF5
/// dataset (feature `hdf5`). The file's order is the array's storage
/// order (row-major arrays give C order files, column-major ones Fortran
/// order). Collective over the array's communicator: every rank passes
/// the same path and options.
///
/// The array moves to the file in rounds: each round a redistribution
/// gathers a contiguous range of the file on each aggregator
/// ([`IoOptions::aggregators`]), at most
/// [`IoOptions::staging_bytes`] per aggregator, and each aggregator
/// writes its range with one MPI-IO call. The file is written under a
/// temporary name beside `path` and renamed to `path` only when every
/// rank's part is written; on any failure the previous file at `path` is
/// left as it was and the temporary one removed.
///
/// An array with ghost layers saves its interior, the plain array: the
/// redistributions read the interior of its padded storage in place
/// ([`redist::Options::padding`]), with no copy of the array first.
///
/// ```
/// use dist_array::{DistArray, Layout};
/// use mpi::topology::Communicator;
/// use procgrid::ProcGrid;
///
/// let universe = procgrid::init().unwrap();
/// let world = universe.world();
/// let p = world.size() as usize;
/// let grid = ProcGrid::new(&world, &[p, 1]).unwrap();
/// let layout = Layout::parse(&[6, 4], &format!("cyclic(2),*@{p}x1")).unwrap();
/// let a = DistArray::from_fn(&grid, layout, |g| (10 * g[0] + g[1]) as f64).unwrap();
/// let path = std::env::temp_dir().join(format!("dist-io-save-doc-{}.npy", std::process::id()));
/// dist_io::save(&a, &path, &dist_io::IoOptions::default()).unwrap();
/// let info = dist_io::info(&path, &Default::default()).unwrap();
/// assert_eq!(info.shape, vec![6, 4]);
/// # std::fs::remove_file(&path).unwrap();
/// ```
///
/// # Errors
///
/// The same error on every rank: [`IoError::InvalidArgument`] for bad
/// options, [`IoError::Disagreement`] when ranks passed different
/// arguments, [`IoError::Write`] when the file cannot be created, written
/// or renamed (a full disk, a missing directory, no permission), and the
/// engine's errors ([`IoError::Redist`]).
pub fn save<T: Element>(
    array: &DistArray<T>,
    path: impl AsRef<Path>,
    options: &IoOptions,
) -> Result<(), IoError> {
    let path = path.as_ref();
    let comm = array.grid().communicator();
    let what = format!("saving {}", name(path));
    let format = options.format_for(path);
    let fingerprint = fingerprint(array, path, options).value();
    agree(comm, options.check(), fingerprint, &what)?;
    let file = FileArray {
        data_offset: 0,
        shape: array.shape(),
        order: array.layout().storage(),
    };
    let origin = vec![0; array.layout().ndim()];
    let transfer = Transfer::new(array, file, &origin, options, what)?;
    let side = &mut Side::Save(array);
    registry::of(&format)?.run(Operation::Save, path, &format, side, transfer)
}

/// Writes `array` into the file at `path` (which must exist and hold an
/// array of the same element type and number of dimensions) as the
/// window whose first index is `origin`: the file's elements `origin ..
/// origin + array.shape()` become the array's, every other element stays.
/// The file is written in place (a failure midway leaves the window partly
/// written). Collective over the array's communicator.
///
/// # Errors
///
/// As [`save`], and [`IoError::Open`], [`IoError::Header`] for a file
/// that cannot be read, [`IoError::Mismatch`] for another element type or
/// number of dimensions, [`IoError::Window`] for a window that does not
/// fit inside the file's array.
pub fn save_window<T: Element>(
    array: &DistArray<T>,
    path: impl AsRef<Path>,
    origin: &[usize],
    options: &IoOptions,
) -> Result<(), IoError> {
    let path = path.as_ref();
    let comm = array.grid().communicator();
    let what = format!("saving a window into {}", name(path));
    let fingerprint = fingerprint(array, path, options).numbers(origin).value();
    agree(comm, options.check(), fingerprint, &what)?;
    let info = info_everywhere(comm, path, options, &what)?;
    check_window::<T>(path, &info, origin, array.shape())?;
    let transfer = Transfer::new(array, FileArray::of(&info), origin, options, what)?;
    let format = &info.format;
    let side = &mut Side::Save(array);
    registry::of(format)?.run(Operation::SaveWindow, path, format, side, transfer)
}
