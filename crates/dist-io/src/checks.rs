//! What a save or a load checks before it moves a byte: the arguments
//! every rank must pass alike (their [`fingerprint`], agreed), and the
//! array's element type and window against the file's header.

use crate::agree::Fingerprint;
use crate::element::ElementType;
use crate::error::{name, IoError};
use crate::file_info::FileInfo;
use crate::options::IoOptions;
use dist_array::{DistArray, Element};
use std::path::Path;

/// What every rank must pass alike to save or load.
pub(crate) fn fingerprint<T: Element>(
    array: &DistArray<T>,
    path: &Path,
    options: &IoOptions,
) -> Fingerprint {
    let layout = array.layout();
    Fingerprint::new()
        .text(&name(path))
        .text(T::NAME)
        .numbers(layout.shape())
        .text(&layout.spec().to_string())
        .text(&format!("{:?}", layout.storage()))
        .numbers(array.ghost_widths())
        .text(&options.agreed_text())
}

/// `Err` unless the file holds elements of type `T`.
pub(crate) fn check_type<T: Element>(path: &Path, info: &FileInfo) -> Result<(), IoError> {
    let wanted = ElementType::of::<T>();
    if info.element == wanted {
        return Ok(());
    }
    Err(IoError::Mismatch {
        path: name(path),
        found: format!(
            "an array of {} ({})",
            info.element,
            info.element.numpy_name()
        ),
        expected: format!("{wanted} ({})", wanted.numpy_name()),
    })
}

/// `Err` unless `T` is the file's type and the window of `shape` at
/// `origin` lies inside the file's array.
pub(crate) fn check_window<T: Element>(
    path: &Path,
    info: &FileInfo,
    origin: &[usize],
    shape: &[usize],
) -> Result<(), IoError> {
    check_type::<T>(path, info)?;
    let k = info.shape.len();
    let fits = origin.len() == k
        && shape.len() == k
        && (0..k).all(|d| {
            origin[d]
                .checked_add(shape[d])
                .is_some_and(|e| e <= info.shape[d])
        });
    if fits {
        return Ok(());
    }
    Err(IoError::Window {
        path: name(path),
        origin: origin.to_vec(),
        shape: shape.to_vec(),
        array: info.shape.clone(),
    })
}
