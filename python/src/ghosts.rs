//! `ndcyclic.GhostUpdate`: refreshing the ghost layers of arrays of one
//! layout and ghost widths, planned once over an mpi4py communicator and
//! executed every step; `begin`/`finish` around the interior's work.

use crate::array::{AnyArray, PyDistArray};
use crate::comm::Shared;
use crate::dtype::{each, per_type, wrap_impls, Wrap};
use crate::errors::{agree, agreed, unify, Failure, Fingerprint, Kind};
use crate::held::Held;
use crate::redistribution::SameThread;
use dist_array::{DistArray, Element};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use redist::ghost::{Corners, GhostOptions, GhostSpec, GhostUpdate};

per_type!(
    /// A ghost update of any element type.
    AnyGhosts,
    GhostUpdate
);
wrap_impls!(AnyGhosts, GhostUpdate);

/// Refreshes the ghost layers of arrays laid out as ``array`` is, with its
/// ghost widths (:meth:`DistArray.with_ghosts`): built once (collective),
/// then :meth:`update` every step, or :meth:`begin`, work on the interior
/// (read it, do not write it), :meth:`finish`. Between ranks of one node
/// ghosts are read straight from the neighbour's memory; elsewhere they
/// travel as one message per pair of neighbours. Ghosts beyond the edge
/// of a non-periodic axis are never written: they hold the boundary
/// condition the caller puts in :attr:`DistArray.padded`.
///
/// ``periodic``: one bool for every axis or one per axis (default: all);
/// ``corners``: ``"box"`` (faces, edges and corners) or ``"star"`` (faces
/// only); ``node_direct=False`` moves every ghost as a message;
/// ``wisdom``: the wisdom file whose measured way (:meth:`tune`) this
/// update runs (default: ``NDCYCLIC_WISDOM``; ``""``: none; a file without
/// one is a warning in :attr:`warnings`, never an error).
///
/// >>> import numpy as np, ndcyclic
/// >>> from mpi4py import MPI
/// >>> p = MPI.COMM_WORLD.size
/// >>> layout = ndcyclic.Layout((4 * p, 5), f"block,block@{p}x1")
/// >>> a = ndcyclic.from_function(MPI.COMM_WORLD, layout, lambda i, j: 10 * i + j).with_ghosts(1)
/// >>> g = ndcyclic.GhostUpdate(a, periodic=True)
/// >>> g.update(a)
/// >>> bool(a.padded[0, 1] == 10 * ((4 * MPI.COMM_WORLD.rank - 1) % (4 * p)))
/// True
#[pyclass(name = "GhostUpdate", module = "ndcyclic")]
pub struct PyGhostUpdate {
    update: Held<AnyGhosts>,
    context: Shared,
    /// The array an update was begun on.
    begun: Option<Py<PyDistArray>>,
    /// The spec and options it was built with (`tune` rebuilds it).
    spec: GhostSpec,
    options: GhostOptions,
}

/// One bool for every axis, or one per axis.
fn per_axis_flags(v: Option<&Bound<'_, PyAny>>, ndim: usize) -> Result<Vec<bool>, Failure> {
    let Some(v) = v else {
        return Ok(vec![true; ndim]);
    };
    if let Ok(b) = v.extract::<bool>() {
        return Ok(vec![b; ndim]);
    }
    match v.extract::<Vec<bool>>() {
        Ok(p) if p.len() == ndim => Ok(p),
        _ => Err(Failure::value(format!(
            "periodic {v}: expected one bool, or one per axis ({ndim})"
        ))),
    }
}

/// The update's spec from the constructor's arguments.
fn spec_of(
    a: &PyDistArray,
    periodic: Option<&Bound<'_, PyAny>>,
    corners: &str,
) -> Result<GhostSpec, Failure> {
    let ndim = a.layout().ndim();
    let periodic = per_axis_flags(periodic, ndim)?;
    let corners = match corners {
        "box" => Corners::Box,
        "star" => Corners::Star,
        other => {
            return Err(Failure::value(format!(
                "corners {other:?}: expected \"box\" or \"star\""
            )))
        }
    };
    let widths = each!(AnyArray, &*a.array, x, T => x.ghost_widths().to_vec());
    Ok(GhostSpec::new(&widths, &periodic, corners))
}

#[pymethods]
impl PyGhostUpdate {
    #[new]
    #[pyo3(signature = (array, periodic = None, corners = "box", node_direct = true, wisdom = None))]
    fn new(
        py: Python<'_>,
        array: &Bound<'_, PyDistArray>,
        periodic: Option<&Bound<'_, PyAny>>,
        corners: &str,
        node_direct: bool,
        wisdom: Option<std::path::PathBuf>,
    ) -> PyResult<PyGhostUpdate> {
        let a = array.borrow();
        let ctx = a.context.clone();
        let comm = ctx.comm();
        let spec = spec_of(&a, periodic, corners);
        let fp = Fingerprint::default()
            .text(&a.layout().to_string())
            .text(&format!("{spec:?} {node_direct}"))
            .text(a.dtype().name());
        let spec = agreed(comm, spec, fp, "GhostUpdate")?;
        let options = GhostOptions {
            node_direct,
            wisdom,
        };
        let update = build(py, &a, &spec, &options, "GhostUpdate")?;
        Ok(PyGhostUpdate {
            update: Held::new(update),
            context: ctx,
            begun: None,
            spec,
            options,
        })
    }

    /// Measures this update on ``array`` both ways its options allow —
    /// ranks of a node reading each other's memory, and messages —
    /// ``warmups`` untimed and ``reps`` timed updates each, the slowest
    /// rank's median counting; later updates run the fastest. With
    /// ``wisdom``, adds it to that wisdom file, where later jobs find it
    /// (the ``wisdom`` keyword, or ``NDCYCLIC_WISDOM``). Returns a dict:
    /// ``best`` and ``best_ms``, ``default`` and ``default_ms``, ``tried``
    /// (``(way, ms)`` pairs), ``executions``, ``seconds`` (what measuring
    /// cost). ``array``'s ghosts are refreshed. Collective.
    #[pyo3(signature = (array, *, warmups = 3, reps = 5, wisdom = None))]
    fn tune<'py>(
        &mut self,
        py: Python<'py>,
        array: &Bound<'py, PyDistArray>,
        warmups: usize,
        reps: usize,
        wisdom: Option<std::path::PathBuf>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.check(array, "GhostUpdate.tune")?;
        let fp = Fingerprint::default().text(&format!("{warmups} {reps} {wisdom:?}"));
        agree(self.context.comm(), Ok(()), fp, "GhostUpdate.tune")?;
        let settings = redist::tune::TuneSettings {
            warmups,
            reps,
            wisdom,
            progress: false,
        };
        let mut a = array.borrow_mut();
        let (spec, options) = (&self.spec, &self.options);
        let tuned = each!(AnyArray, &mut *a.array, x, T => {
            let work = SameThread((x, spec, options, &settings));
            py.allow_threads(move || {
                let SameThread((x, spec, options, settings)) = work;
                redist::tune::tune_ghosts(x, spec, options, settings).map_err(Failure::from)
            })
        });
        let tuned = unify(self.context.comm(), tuned, "GhostUpdate.tune")?;
        drop(a);
        // Later updates run the fastest way, with no file read.
        let kept = GhostOptions {
            node_direct: self.options.node_direct && tuned.best.node_direct,
            wisdom: Some(std::path::PathBuf::new()),
        };
        let update = build(py, &array.borrow(), &self.spec, &kept, "GhostUpdate.tune")?;
        self.update = Held::new(update);
        let way = |node_direct: bool| {
            if node_direct {
                "node-direct"
            } else {
                "messages"
            }
        };
        let d = PyDict::new(py);
        d.set_item("best", way(tuned.best.node_direct))?;
        d.set_item("best_ms", tuned.best.seconds * 1e3)?;
        d.set_item("default", way(tuned.default.node_direct))?;
        d.set_item("default_ms", tuned.default.seconds * 1e3)?;
        let tried: Vec<(&str, f64)> = (tuned.tried.iter())
            .map(|t| (way(t.node_direct), t.seconds * 1e3))
            .collect();
        d.set_item("tried", tried)?;
        d.set_item("executions", tuned.executions)?;
        d.set_item("seconds", tuned.seconds)?;
        Ok(d)
    }

    /// What the wisdom file could not give this update (the same on every
    /// rank); empty when no file was named or it held this update's way.
    #[getter]
    fn warnings(&self) -> Vec<String> {
        each!(AnyGhosts, &*self.update, g, T => g.warnings().to_vec())
    }

    /// Refreshes ``array``'s ghosts. Collective over the communicator.
    fn update(&mut self, py: Python<'_>, array: &Bound<'_, PyDistArray>) -> PyResult<()> {
        self.check(array, "GhostUpdate.update")?;
        let mut a = array.borrow_mut();
        let result = run(py, &mut self.update, &mut a.array, Step::Whole);
        Ok(unify(self.context.comm(), result, "GhostUpdate.update")?)
    }

    /// Starts refreshing ``array``'s ghosts; :meth:`finish` completes it.
    /// Until then ``array.local`` may be read, not written. Collective.
    fn begin(&mut self, py: Python<'_>, array: &Bound<'_, PyDistArray>) -> PyResult<()> {
        self.check(array, "GhostUpdate.begin")?;
        let mut a = array.borrow_mut();
        let result = run(py, &mut self.update, &mut a.array, Step::Begin);
        unify(self.context.comm(), result, "GhostUpdate.begin")?;
        self.begun = Some(array.clone().unbind());
        Ok(())
    }

    /// Completes the update :meth:`begin` started on ``array``: every
    /// ghost is fresh when it returns. Collective.
    fn finish(&mut self, py: Python<'_>, array: &Bound<'_, PyDistArray>) -> PyResult<()> {
        let same = self.begun.as_ref().is_some_and(|b| b.bind(py).is(array));
        // The array begun on, if another was handed in: the update still
        // completes on it, so no rank waits, and this one raises.
        let begun = self.begun.take();
        let target = match (&begun, same) {
            (Some(b), false) => b.bind(py).clone(),
            _ => array.clone(),
        };
        let mut a = target.borrow_mut();
        let mut result = run(py, &mut self.update, &mut a.array, Step::Finish);
        if begun.is_some() && !same && result.is_ok() {
            result = Err(Failure::value(
                "finish was handed another array than begin: expected the array begun on",
            ));
        }
        Ok(agree(
            self.context.comm(),
            result,
            Fingerprint::default(),
            "GhostUpdate.finish",
        )?)
    }

    /// Bytes of ghosts this rank's update fills.
    #[getter]
    fn ghost_bytes(&self) -> usize {
        each!(AnyGhosts, &*self.update, g, T => g.ghost_bytes())
    }

    /// Bytes this rank's plan holds: boxes and messages, never cells.
    #[getter]
    fn plan_bytes(&self) -> usize {
        each!(AnyGhosts, &*self.update, g, T => g.plan_bytes())
    }

    /// How this rank's last update moved its ghosts: receives ``read``
    /// from a neighbour's memory, received as ``messages``, sends ``lent``
    /// (read by the neighbour instead), ``own`` copies within the rank.
    #[getter]
    fn copies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = each!(AnyGhosts, &*self.update, g, T => g.copies());
        let d = PyDict::new(py);
        d.set_item("read", c.read)?;
        d.set_item("messages", c.messages)?;
        d.set_item("lent", c.lent)?;
        d.set_item("own", c.own)?;
        Ok(d)
    }
}

impl PyGhostUpdate {
    /// The array's fitness for this update, agreed: made on the update's
    /// communicator, of its dtype, no update begun and not finished.
    fn check(&self, array: &Bound<'_, PyDistArray>, what: &str) -> Result<(), Failure> {
        let verdict = match array.try_borrow_mut() {
            Err(_) => Err(Failure::value("the array is in use elsewhere")),
            Ok(a) if !std::sync::Arc::ptr_eq(&a.context, &self.context) => Err(Failure::value(
                "the array was made on another communicator than the update's",
            )),
            Ok(a) if a.dtype() != self.update.dtype() => Err(Failure::type_error(format!(
                "the array's dtype is {}, the update's {}",
                a.dtype().name(),
                self.update.dtype().name()
            ))),
            Ok(_) if self.begun.is_some() => Err(Failure::value(
                "an update is in flight: finish it before the next begins",
            )),
            // The engine's own checks, in the same verdict: one agreement,
            // then the update runs unchecked.
            Ok(a) => fits(&self.update, &a.array),
        };
        agree(self.context.comm(), verdict, Fingerprint::default(), what)
    }
}

/// Which part of an update to run.
#[derive(Clone, Copy)]
enum Step {
    Whole,
    Begin,
    Finish,
}

/// The update `spec` of arrays laid out as `a`, built with `options`, the
/// GIL released; the same verdict on every rank. Collective.
fn build(
    py: Python<'_>,
    a: &PyDistArray,
    spec: &GhostSpec,
    options: &GhostOptions,
    what: &str,
) -> Result<AnyGhosts, Failure> {
    let built = each!(AnyArray, &*a.array, x, T => {
        let work = SameThread((x, spec, options.clone()));
        py.allow_threads(move || {
            let SameThread((x, spec, options)) = work;
            GhostUpdate::<T>::with_options(x, spec, options).map(AnyGhosts::wrap)
        })
    });
    unify(a.context.comm(), built, what)
}

/// The engine's verdict on `array` for `update` (local).
fn fits(update: &AnyGhosts, array: &AnyArray) -> Result<(), Failure> {
    macro_rules! pair {
        ($($v:ident),*) => {
            match (update, array) {
                $((AnyGhosts::$v(g), AnyArray::$v(a)) => g.check(a).map_err(Failure::from),)*
                _ => Err(Failure::new(Kind::Runtime, "internal: the update's dtype is not the array's")),
            }
        };
    }
    pair!(F32, F64, C64, C128, I32, I64, U8, U32, U64)
}

/// Runs `step` of `update` on `array` (of its dtype), the GIL released;
/// the array was checked and agreed on before.
fn run(
    py: Python<'_>,
    update: &mut AnyGhosts,
    array: &mut AnyArray,
    step: Step,
) -> Result<(), Failure> {
    fn go<T: Element>(
        py: Python<'_>,
        g: &mut GhostUpdate<T>,
        a: &mut DistArray<T>,
        step: Step,
    ) -> Result<(), Failure> {
        let work = SameThread((g, a));
        py.allow_threads(move || {
            let SameThread((g, a)) = work;
            match step {
                Step::Whole => g.update_unchecked(a),
                Step::Begin => g.start_unchecked(a),
                Step::Finish => g.finish(a),
            }
            .map_err(Failure::from)
        })
    }
    macro_rules! pair {
        ($($v:ident),*) => {
            match (update, array) {
                $((AnyGhosts::$v(g), AnyArray::$v(a)) => go(py, g, a, step),)*
                _ => Err(Failure::new(Kind::Runtime, "internal: the update's dtype is not the array's")),
            }
        };
    }
    pair!(F32, F64, C64, C128, I32, I64, U8, U32, U64)
}
