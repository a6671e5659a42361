//! What this build of the extension is: its version, whether it reads and
//! writes HDF5, and which MPI library its calls go to.

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// What this build of ndcyclic is: a dict with ``version``, ``hdf5``
/// (whether ``save``/``load`` take HDF5 files: a build with the ``hdf5``
/// feature), ``mpi_library`` (the first line of the MPI library's version
/// text, as ``MPI.Get_library_version()`` gives it) and ``libmpi`` (the
/// file of the MPI library the extension calls, or ``None`` when the
/// loader does not say). :func:`check_mpi` compares the last two with
/// mpi4py's. Local: no MPI call but ``MPI_Get_library_version``.
///
/// >>> import ndcyclic
/// >>> sorted(ndcyclic.build_info())
/// ['hdf5', 'libmpi', 'mpi_library', 'version']
#[pyfunction]
pub fn build_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("version", env!("CARGO_PKG_VERSION"))?;
    d.set_item("hdf5", dist_io::hdf5::available())?;
    d.set_item("mpi_library", mpi_extras::library::version())?;
    d.set_item(
        "libmpi",
        mpi_extras::library::file().map(|p| p.to_string_lossy().into_owned()),
    )?;
    Ok(d)
}
