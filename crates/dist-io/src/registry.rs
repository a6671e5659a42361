//! The file formats, one line each ([`FORMATS`]), and what the calls ask
//! of them: the implementation of a [`Format`], the format a file's name
//! suggests ([`Format::from_name`]), the one a file's first bytes show.
//!
//! Adding a format is a module implementing [`FileFormat`], its line
//! here and its variant of [`Format`] (`docs/io.md`, "Adding a file
//! format"); `toy_format.rs` is one, for the tests.

use crate::error::IoError;
use crate::file_format::FileFormat;
use crate::hdf5::format::Hdf5;
use crate::npy::format::Npy;
use crate::options::Format;
use std::path::Path;

/// Every format, in the order a file's first bytes are tried.
static FORMATS: &[&dyn FileFormat] = &[
    &Npy,
    &Hdf5,
    #[cfg(test)]
    &crate::toy_format::Toy,
];

/// The implementation of `format`.
///
/// # Errors
///
/// [`IoError::InvalidArgument`] when no format of the registry serves it.
pub(crate) fn of(format: &Format) -> Result<&'static dyn FileFormat, IoError> {
    find(format)
        .ok_or_else(|| IoError::invalid("format", format!("{format:?}"), "a registered format"))
}

/// The implementation of `format`, if one is registered.
fn find(format: &Format) -> Option<&'static dyn FileFormat> {
    FORMATS.iter().copied().find(|f| f.serves(format))
}

/// The first format that recognises a file starting with `head`.
pub(crate) fn recognizing(head: &[u8]) -> Option<&'static dyn FileFormat> {
    FORMATS.iter().copied().find(|f| f.recognizes(head))
}

/// Every format as the error for a file of none names it, in order.
pub(crate) fn descriptions() -> Vec<&'static str> {
    FORMATS.iter().map(|f| f.description()).collect()
}

/// The place of `implementation` in the registry (how rank 0 tells the
/// other ranks which format a file is; formats' names are unique).
pub(crate) fn place(implementation: &dyn FileFormat) -> Option<usize> {
    let name = implementation.name();
    FORMATS.iter().position(|f| f.name() == name)
}

/// The format at `place` of the registry.
pub(crate) fn at(place: usize) -> Option<&'static dyn FileFormat> {
    FORMATS.get(place).copied()
}

impl Format {
    /// The format a file name suggests: HDF5 (dataset
    /// [`DEFAULT_DATASET`](crate::options::DEFAULT_DATASET)) for `.h5`, `.hdf5`,
    /// `.hdf` and `.he5`, else `.npy`.
    ///
    /// ```
    /// use dist_io::Format;
    /// assert_eq!(Format::from_name("u.npy".as_ref()), Format::Npy);
    /// assert_eq!(Format::from_name("u.h5".as_ref()), Format::Hdf5 { dataset: "data".into() });
    /// ```
    pub fn from_name(path: &Path) -> Format {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let ext = ext.to_ascii_lowercase();
        (FORMATS.iter())
            .find(|f| f.extensions().contains(&ext.as_str()))
            .map_or(Format::Npy, |f| f.format())
    }

    /// `npy` or `h5`, as `redist io --format` names it.
    pub fn name(&self) -> &'static str {
        find(self).map_or("unregistered", |f| f.name())
    }

    /// What a file's description adds after the name (`dataset data`).
    pub(crate) fn details(&self) -> Option<String> {
        find(self).and_then(|f| f.details(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_is_found_by_its_value_its_names_and_its_place() {
        for (place, f) in FORMATS.iter().enumerate() {
            let format = f.format();
            assert_eq!(of(&format).map(|g| g.name()), Ok(f.name()));
            assert_eq!(format.name(), f.name());
            assert_eq!(at(place).map(|g| g.name()), Some(f.name()));
            assert_eq!(place_of(&format), Some(place));
            for ext in f.extensions() {
                let path = format!("a.{}", ext.to_ascii_uppercase());
                assert_eq!(Format::from_name(path.as_ref()), format, "{path}");
            }
        }
        assert_eq!(Format::from_name("a.bin".as_ref()), Format::Npy);
        assert_eq!(at(FORMATS.len()).map(|f| f.name()), None);
    }

    fn place_of(format: &Format) -> Option<usize> {
        place(of(format).ok()?)
    }

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = FORMATS.iter().map(|f| f.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FORMATS.len());
    }
}
