//! Which MPI library this program's calls go to: its version text and the
//! file it was loaded from. Two parts of one process built apart (a Python
//! extension and mpi4py, say) must call the same library; these are what
//! to compare.

use std::ffi::CStr;
use std::path::PathBuf;

/// The first line of the MPI library's version text
/// (`MPI_Get_library_version`, which MPI allows before `MPI_Init`), such
/// as `MPICH Version:      4.0.2`; `None` when the library gives none.
pub fn version() -> Option<String> {
    mpi::environment::library_version()
        .ok()
        .and_then(|v| v.lines().next().map(|l| l.trim().to_string()))
        .filter(|l| !l.is_empty())
}

/// The shared library file the calls to `MPI_Get_library_version` of this
/// crate go to, symbolic links resolved (such as
/// `/usr/lib/x86_64-linux-gnu/libmpich.so.12.2.2`); `None` when MPI is
/// linked statically into the program or the loader does not say.
pub fn file() -> Option<PathBuf> {
    let symbol = mpi::ffi::MPI_Get_library_version as *const libc::c_void;
    let mut info = libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    };
    // SAFETY: `dladdr` only reads the loader's tables for an address of
    // this process and writes `info`, a live local.
    let found = unsafe { libc::dladdr(symbol, &mut info) } != 0;
    if !found || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: `dli_fname` is non-null and points to the loader's
    // NUL-terminated name of a loaded object, alive while it stays loaded.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let path = PathBuf::from(name.to_string_lossy().into_owned());
    let is_library = path
        .file_name()
        .is_some_and(|n| n.to_string_lossy().contains(".so"));
    is_library.then(|| std::fs::canonicalize(&path).unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_linked_library_is_found_with_its_version() {
        let file = file().expect("the tests link a shared libmpi");
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.contains("mpi"), "{name} is not an MPI library");
        assert!(file.is_absolute() && file.exists(), "{file:?}");
        let v = version().expect("a version text");
        assert!(v.contains("MPICH") || v.contains("Open MPI"), "{v}");
    }
}
