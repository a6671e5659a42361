//! `ndcyclic.choose_grid` and `ndcyclic.grids`: a job's process grid chosen
//! by timing its whole steps on each candidate
//! (`redist::tune::choose_grid`), kept in a wisdom file.

use crate::comm::context;
use crate::errors::Failure;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use redist::tune::{self, GridSettings, Outcome};
use redist::RedistError;
use std::fmt;
use std::path::PathBuf;

/// What can end a choosing: the job's Python exception, or the tuner's
/// own error.
enum JobError {
    /// Raised by the job's set-up or step.
    Python(PyErr),
    /// The tuner's.
    Tuner(RedistError),
}

impl From<RedistError> for JobError {
    fn from(e: RedistError) -> JobError {
        JobError::Tuner(e)
    }
}

impl From<PyErr> for JobError {
    fn from(e: PyErr) -> JobError {
        JobError::Python(e)
    }
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobError::Python(e) => write!(f, "{e}"),
            JobError::Tuner(e) => write!(f, "{e}"),
        }
    }
}

impl From<JobError> for PyErr {
    fn from(e: JobError) -> PyErr {
        match e {
            JobError::Python(e) => e,
            JobError::Tuner(e) => Failure::from(e).into(),
        }
    }
}

/// Every grid of `dims` extents whose product is `ranks`, the most nearly
/// square first.
#[pyfunction]
pub fn grids(ranks: usize, dims: usize) -> Vec<Vec<usize>> {
    tune::grids(ranks, dims)
}

/// Chooses the fastest of `candidates` (default: every 2-D grid of the
/// communicator's ranks, the most nearly square first) for the job
/// `name`: `job(grid)` sets the job up on `grid` (a tuple of extents) and
/// returns a callable running one step of it; each is run `warmups` times,
/// then timed `reps` times (the slowest rank's median counting). With
/// `wisdom`, a grid kept there for this job and machine is returned without
/// measuring, and what is measured is added to the file. Returns a dict:
/// `grid`, `recalled`, `tried` (`(grid, ms)` or `(grid, "refused: …")`),
/// `ratio` (the chosen grid's time over the first candidate's), `steps`,
/// `tuning_s`, `warnings`. Collective over `comm`.
#[pyfunction]
#[pyo3(signature = (comm, name, job, candidates = None, *, warmups = 8, reps = 3, wisdom = None))]
#[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
pub fn choose_grid<'py>(
    py: Python<'py>,
    comm: &Bound<'py, PyAny>,
    name: &str,
    job: &Bound<'py, PyAny>,
    candidates: Option<Vec<Vec<usize>>>,
    warmups: usize,
    reps: usize,
    wisdom: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    let ctx = context(comm)?;
    let candidates = candidates.unwrap_or_else(|| tune::grids(ctx.size(), 2));
    let settings = GridSettings {
        warmups,
        reps,
        wisdom: Some(wisdom.unwrap_or_default()),
        progress: false,
    };
    let chosen = tune::choose_grid(ctx.comm(), name, &candidates, &settings, |g: &[usize]| {
        let step = job.call1((pyo3::types::PyTuple::new(py, g)?,))?;
        Ok(move || step.call0().map(|_| ()).map_err(JobError::Python))
    })?;
    let d = PyDict::new(py);
    d.set_item("grid", pyo3::types::PyTuple::new(py, &chosen.grid)?)?;
    d.set_item("recalled", chosen.recalled)?;
    let tried: Vec<(Vec<usize>, PyObject)> = chosen
        .tried
        .iter()
        .map(|t| {
            let what = match &t.outcome {
                Outcome::Timed(s) => (s * 1e3).into_pyobject(py)?.into_any().unbind(),
                Outcome::Refused(why) => format!("refused: {why}")
                    .into_pyobject(py)?
                    .into_any()
                    .unbind(),
            };
            Ok((t.grid.clone(), what))
        })
        .collect::<PyResult<_>>()?;
    d.set_item("tried", tried)?;
    d.set_item("ratio", chosen.ratio())?;
    d.set_item("steps", chosen.steps)?;
    d.set_item("tuning_s", chosen.tuning_seconds)?;
    d.set_item("warnings", chosen.warnings.clone())?;
    Ok(d)
}
