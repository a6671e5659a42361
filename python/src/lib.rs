//! The Rust side of the `ndcyclic` Python package: block-cyclic distributed
//! numpy arrays over mpi4py communicators, redistributed by ndcyclic's
//! engine, saved and loaded by its parallel I/O.
//!
//! - `about.rs`: what this build is (`build_info`);
//! - `comm.rs`: mpi4py communicators, the package's duplicate of each and
//!   the grids over it;
//! - `held.rs`: MPI objects kept past `MPI_Finalize` are leaked, not freed;
//! - `errors.rs`: failures as Python exceptions, agreed by every rank;
//! - `dtype.rs`: the element types numpy and ndcyclic share;
//! - `layout.rs`: `Layout`;
//! - `array.rs`: `DistArray`;
//! - `redistribution.rs`: `Redistribution`;
//! - `ghosts.rs`: `GhostUpdate`;
//! - `io.rs`: `save`, `load`, `load_window`, `info`.
#![deny(missing_docs)]

mod about;
mod array;
mod comm;
mod dtype;
mod errors;
mod ghosts;
mod grid_choice;
mod held;
mod io;
mod layout;
mod redistribution;

use pyo3::prelude::*;

/// The compiled part of ndcyclic; import ``ndcyclic`` instead.
#[pymodule]
fn _ndcyclic(m: &Bound<'_, PyModule>) -> PyResult<()> {
    procgrid::abort_on_panic();
    m.add_class::<layout::PyLayout>()?;
    m.add_class::<array::PyDistArray>()?;
    m.add_class::<redistribution::PyRedistribution>()?;
    m.add_class::<ghosts::PyGhostUpdate>()?;
    m.add_function(wrap_pyfunction!(io::save, m)?)?;
    m.add_function(wrap_pyfunction!(io::save_window, m)?)?;
    m.add_function(wrap_pyfunction!(io::load, m)?)?;
    m.add_function(wrap_pyfunction!(io::load_window, m)?)?;
    m.add_function(wrap_pyfunction!(io::load_into, m)?)?;
    m.add_function(wrap_pyfunction!(io::info, m)?)?;
    m.add_function(wrap_pyfunction!(about::build_info, m)?)?;
    m.add_function(wrap_pyfunction!(grid_choice::choose_grid, m)?)?;
    m.add_function(wrap_pyfunction!(grid_choice::grids, m)?)?;
    Ok(())
}
