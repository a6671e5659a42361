//! Loading: a file into a new array of any layout on any grid, into an
//! existing array, or a window of the file (a plane, a slab) into an array
//! of the window's shape.

use crate::agree::{agree, Fingerprint};
use crate::checks::{check_type, check_window, fingerprint};
use crate::error::{name, IoError};
use crate::file_info::FileInfo;
use crate::info::info_everywhere;
use crate::options::IoOptions;
use crate::registry;
use crate::transfer::{FileArray, Operation, Side, Transfer};
use dist_array::{DistArray, Element, LayoutSpec};
use procgrid::ProcGrid;
use std::path::Path;

/// Loads the file at `path` into a new array laid out as `spec` on `grid`:
/// the array's shape is the file's (read from its header), its element
/// type must be the file's, its local storage order is the file's unless
/// [`IoOptions::storage`] says otherwise. Any layout on any grid loads any
/// file, whatever layout and rank count saved it. Collective over
/// `grid`'s communicator.
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
/// let rows = Layout::parse(&[5, 3], &format!("block,*@{p}x1")).unwrap();
/// let a = DistArray::from_fn(&grid, rows, |g| (10 * g[0] + g[1]) as i32).unwrap();
/// let path = std::env::temp_dir().join(format!("dist-io-load-doc-{}.npy", std::process::id()));
/// let options = dist_io::IoOptions::default();
/// dist_io::save(&a, &path, &options).unwrap();
/// // Back on another layout: the shape comes from the file.
/// let spec = format!("cyclic(2),*@{p}x1").parse().unwrap();
/// let b: DistArray<i32> = dist_io::load(&grid, &spec, &path, &options).unwrap();
/// assert_eq!(b.gather(0).unwrap(), a.gather(0).unwrap());
/// // The wrong element type is an error, on every rank.
/// assert!(dist_io::load::<f64>(&grid, &spec, &path, &options).is_err());
/// # std::fs::remove_file(&path).unwrap();
/// ```
///
/// # Errors
///
/// The same error on every rank: [`IoError::Open`] for a file that cannot
/// be read, [`IoError::Header`] for a header this library does not read,
/// [`IoError::Truncated`] for a file shorter than its header says,
/// [`IoError::Mismatch`] for another element type or a spec of another
/// number of dimensions, [`IoError::Dist`] for a spec that does not fit
/// the grid, [`IoError::Read`] when reading fails,
/// [`IoError::Disagreement`] when ranks passed different arguments.
pub fn load<T: Element>(
    grid: &ProcGrid,
    spec: &LayoutSpec,
    path: impl AsRef<Path>,
    options: &IoOptions,
) -> Result<DistArray<T>, IoError> {
    let path = path.as_ref();
    let what = format!("loading {}", name(path));
    let info = open::<T>(grid, spec, path, options, &[], &what)?;
    let shape = info.shape.clone();
    let origin = vec![0; shape.len()];
    let mut array = new_array(grid, spec, &shape, &info, options)?;
    read_window(&mut array, path, &info, &origin, options, what)?;
    Ok(array)
}

/// Loads the window of `shape` elements from `origin` of the file's array
/// into a new array of that shape laid out as `spec` on `grid`: a plane
/// (`shape` 1 in one dimension), a slab, any box. Collective, as [`load`].
///
/// # Errors
///
/// As [`load`], and [`IoError::Window`] when the window does not lie
/// inside the file's array.
pub fn load_window<T: Element>(
    grid: &ProcGrid,
    spec: &LayoutSpec,
    path: impl AsRef<Path>,
    origin: &[usize],
    shape: &[usize],
    options: &IoOptions,
) -> Result<DistArray<T>, IoError> {
    let path = path.as_ref();
    let what = format!("loading a window of {}", name(path));
    let extra: Vec<usize> = origin.iter().chain(shape).copied().collect();
    let info = open::<T>(grid, spec, path, options, &extra, &what)?;
    check_window::<T>(path, &info, origin, shape)?;
    let mut array = new_array(grid, spec, shape, &info, options)?;
    read_window(&mut array, path, &info, origin, options, what)?;
    Ok(array)
}

/// Loads the file at `path` into `array`, whose shape and element type
/// must be the file's (any layout, either storage order). An array with
/// ghost layers gets the file in its interior, its ghost cells left as
/// they were. Collective over the array's communicator.
///
/// # Errors
///
/// As [`load`], with [`IoError::Mismatch`] when the array's shape is not
/// the file's.
pub fn load_into<T: Element>(
    array: &mut DistArray<T>,
    path: impl AsRef<Path>,
    options: &IoOptions,
) -> Result<(), IoError> {
    let path = path.as_ref();
    let what = format!("loading {}", name(path));
    let info = open_into(array, path, options, &[], &what)?;
    if info.shape != array.shape() {
        return Err(IoError::Mismatch {
            path: name(path),
            found: format!("an array of shape {:?}", info.shape),
            expected: format!("shape {:?}", array.shape()),
        });
    }
    let origin = vec![0; info.shape.len()];
    read_window(array, path, &info, &origin, options, what)
}

/// Loads the window of the file's array whose first index is `origin`
/// and whose shape is `array`'s into `array`. Collective over the array's
/// communicator.
///
/// # Errors
///
/// As [`load_window`].
pub fn load_window_into<T: Element>(
    array: &mut DistArray<T>,
    path: impl AsRef<Path>,
    origin: &[usize],
    options: &IoOptions,
) -> Result<(), IoError> {
    let path = path.as_ref();
    let what = format!("loading a window of {}", name(path));
    let info = open_into(array, path, options, origin, &what)?;
    check_window::<T>(path, &info, origin, array.shape())?;
    read_window(array, path, &info, origin, options, what)
}

/// Agrees on the arguments and reads the header everywhere, checking the
/// element type and the number of dimensions of `spec`.
fn open<T: Element>(
    grid: &ProcGrid,
    spec: &LayoutSpec,
    path: &Path,
    options: &IoOptions,
    extra: &[usize],
    what: &str,
) -> Result<FileInfo, IoError> {
    let comm = grid.communicator();
    let fingerprint = Fingerprint::new()
        .text(&name(path))
        .text(T::NAME)
        .text(&spec.to_string())
        .numbers(grid.extents())
        .numbers(extra)
        .text(&options.agreed_text());
    agree(comm, options.check(), fingerprint.value(), what)?;
    let info = info_everywhere(comm, path, options, what)?;
    check_type::<T>(path, &info)?;
    if spec.ndim() != info.shape.len() {
        return Err(IoError::Mismatch {
            path: name(path),
            found: format!("a {}-dimensional array", info.shape.len()),
            expected: format!("the {}-dimensional layout {spec}", spec.ndim()),
        });
    }
    Ok(info)
}

/// [`open`] for an existing array.
fn open_into<T: Element>(
    array: &DistArray<T>,
    path: &Path,
    options: &IoOptions,
    origin: &[usize],
    what: &str,
) -> Result<FileInfo, IoError> {
    let comm = array.grid().communicator();
    let fingerprint = fingerprint(array, path, options).numbers(origin);
    agree(comm, options.check(), fingerprint.value(), what)?;
    let info = info_everywhere(comm, path, options, what)?;
    check_type::<T>(path, &info)?;
    Ok(info)
}

/// The array a load makes: `spec` over `shape` on `grid`, stored in the
/// file's order or the one the options ask for.
fn new_array<T: Element>(
    grid: &ProcGrid,
    spec: &LayoutSpec,
    shape: &[usize],
    info: &FileInfo,
    options: &IoOptions,
) -> Result<DistArray<T>, IoError> {
    let layout = dist_array::layout_on_grid(shape, spec, grid)?
        .with_storage(options.storage.unwrap_or(info.order));
    Ok(DistArray::zeros(grid, layout)?)
}

/// Reads the window at `origin` of the file's array into `array` (of the
/// window's shape). Collective.
fn read_window<T: Element>(
    array: &mut DistArray<T>,
    path: &Path,
    info: &FileInfo,
    origin: &[usize],
    options: &IoOptions,
    what: String,
) -> Result<(), IoError> {
    let transfer = Transfer::new(array, FileArray::of(info), origin, options, what)?;
    let format = &info.format;
    let side = &mut Side::Load(array);
    registry::of(format)?.run(Operation::LoadWindow, path, format, side, transfer)
}
