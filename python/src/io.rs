//! Saving and loading: `save`, `save_window`, `load`, `load_into`,
//! `load_window`, `info` — dist-io's calls, with numpy's dtypes and the
//! package's agreement.

use crate::array::{AnyArray, PyDistArray};
use crate::comm::context;
use crate::dtype::{each, with_type, DType};
use crate::errors::{agreed, unify, Failure, Fingerprint};
use crate::layout::{order_name, parse_order, PyLayout};
use dist_array::{DistArray, LayoutSpec};
use dist_io::{Aggregators, Format, IoOptions};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// The options of a save or a load, from its keyword arguments.
fn options(
    format: Option<&str>,
    dataset: Option<&str>,
    aggregators: Option<&Bound<'_, PyAny>>,
    staging_bytes: Option<usize>,
    sync: bool,
) -> Result<IoOptions, Failure> {
    let mut o = IoOptions::default().sync(sync);
    o.format = match (format, dataset) {
        (None, None) => None,
        (None | Some("h5" | "hdf5"), Some(d)) => Some(Format::Hdf5 {
            dataset: d.to_string(),
        }),
        (Some("npy"), None) => Some(Format::Npy),
        (Some("h5" | "hdf5"), None) => Some(Format::Hdf5 {
            dataset: dist_io::DEFAULT_DATASET.to_string(),
        }),
        (Some("npy"), Some(_)) => {
            return Err(Failure::value(
                "a dataset is given, but the format is npy: expected format='h5'",
            ))
        }
        (Some(f), _) => {
            return Err(Failure::value(format!(
                "invalid format {f:?}: expected 'npy' or 'h5'"
            )))
        }
    };
    if let Some(a) = aggregators {
        o.aggregators = if let Ok(n) = a.extract::<usize>() {
            Aggregators::Count(n)
        } else if let Ok(ranks) = a.extract::<Vec<usize>>() {
            Aggregators::Ranks(ranks)
        } else if a.extract::<String>().is_ok_and(|s| s == "auto") {
            Aggregators::Auto
        } else {
            return Err(Failure::type_error(
                "aggregators must be 'auto', a number of ranks, or a list of ranks",
            ));
        };
    }
    if let Some(b) = staging_bytes {
        o = o.staging_bytes(b);
    }
    Ok(o)
}

/// The fingerprint of a call's path and options.
fn fingerprint(path: &std::path::Path, o: &Result<IoOptions, Failure>) -> Fingerprint {
    Fingerprint::default()
        .text(&path.to_string_lossy())
        .text(&format!("{:?}", o.as_ref().ok()))
}

/// The element type and shape of a file's header.
fn file_dtype(path: &std::path::Path, o: &IoOptions) -> Result<(DType, Vec<usize>), Failure> {
    let info = dist_io::info(path, o)?;
    let name = info.element.numpy_name();
    DType::ALL
        .into_iter()
        .find(|t| t.name() == name)
        .map(|t| (t, info.shape))
        .ok_or_else(|| {
            Failure::type_error(format!(
                "{}: element type {name} is not supported",
                path.display()
            ))
        })
}

/// What a load is asked for: a spec, and from a Layout its storage order
/// and the shape it expects.
struct Asked {
    spec: LayoutSpec,
    storage: Option<dist_array::Order>,
    shape: Option<Vec<usize>>,
}

/// A layout spec, or a Layout (its spec, storage order and shape).
fn spec_of(layout: &Bound<'_, PyAny>) -> Result<Asked, Failure> {
    if let Ok(l) = layout.downcast::<PyLayout>() {
        let l = &l.get().layout;
        return Ok(Asked {
            spec: l.spec().clone(),
            storage: Some(l.storage()),
            shape: Some(l.shape().to_vec()),
        });
    }
    let s: String = layout
        .extract()
        .map_err(|_| Failure::type_error("layout must be a spec string or an ndcyclic.Layout"))?;
    Ok(Asked {
        spec: s.parse::<LayoutSpec>().map_err(Failure::from)?,
        storage: None,
        shape: None,
    })
}

/// Saves ``a`` to ``path`` — a ``.npy`` file ``numpy.load`` opens (memory-mapped
/// too), or an HDF5 dataset (``.h5``; a build with HDF5) — written under a
/// temporary name beside it and renamed only when every rank succeeded: a
/// failure anywhere leaves the previous file as it was and raises the same
/// exception on every rank. The array's storage order decides the file's
/// (C or Fortran). ``aggregators``: ``'auto'`` (one rank per node across
/// nodes), a count, or a list of ranks; ``staging_bytes`` bounds the extra
/// memory per rank (default 64 MiB); ``sync`` flushes the file before the
/// rename. Collective.
#[pyfunction]
#[pyo3(signature = (a, path, *, format = None, dataset = None, aggregators = None, staging_bytes = None, sync = false))]
#[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
pub fn save(
    py: Python<'_>,
    a: &Bound<'_, PyDistArray>,
    path: PathBuf,
    format: Option<&str>,
    dataset: Option<&str>,
    aggregators: Option<&Bound<'_, PyAny>>,
    staging_bytes: Option<usize>,
    sync: bool,
) -> PyResult<()> {
    let o = options(format, dataset, aggregators, staging_bytes, sync);
    save_any(py, a, &path, None, o)
}

/// Writes ``a`` into the window at ``origin`` of the array in the existing
/// file ``path`` (same dtype; in place, not atomically). Collective.
#[pyfunction]
#[pyo3(signature = (a, path, origin, *, format = None, dataset = None, aggregators = None, staging_bytes = None, sync = false))]
#[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
pub fn save_window(
    py: Python<'_>,
    a: &Bound<'_, PyDistArray>,
    path: PathBuf,
    origin: Vec<usize>,
    format: Option<&str>,
    dataset: Option<&str>,
    aggregators: Option<&Bound<'_, PyAny>>,
    staging_bytes: Option<usize>,
    sync: bool,
) -> PyResult<()> {
    let o = options(format, dataset, aggregators, staging_bytes, sync);
    save_any(py, a, &path, Some(&origin), o)
}

/// A save of the whole file, or (with `origin`) into a window of it:
/// options agreed, then dist-io's call with the GIL released. Collective.
fn save_any(
    py: Python<'_>,
    a: &Bound<'_, PyDistArray>,
    path: &std::path::Path,
    origin: Option<&[usize]>,
    o: Result<IoOptions, Failure>,
) -> PyResult<()> {
    let this = a.borrow();
    let comm = this.context.comm();
    let what = if origin.is_some() {
        "save_window"
    } else {
        "save"
    };
    let fp = fingerprint(path, &o)
        .text(this.dtype().name())
        .text(&format!("{origin:?}"));
    let o = agreed(comm, o, fp, what)?;
    let done = each!(AnyArray, &*this.array, x, T => {
        py.allow_threads(|| match origin {
            None => dist_io::save(x, path, &o),
            Some(origin) => dist_io::save_window(x, path, origin, &o),
        })
    });
    Ok(unify(comm, done, what)?)
}

/// Loads the array of ``path`` (shape and dtype from the file) into a new
/// array laid out as ``layout`` over ``comm``: a spec string such as
/// ``"block,*@4x1"`` (the grid's extents are the spec's) or a Layout (its
/// spec and storage order; the shape is the file's). ``dtype``, when given,
/// must be the file's (a ``TypeError`` otherwise: no conversion). Local
/// parts keep the file's order unless ``order`` (``"C"``/``"F"``) or a
/// Layout says otherwise. Collective.
#[pyfunction]
#[pyo3(signature = (comm, path, layout, *, dtype = None, order = None, format = None, dataset = None, aggregators = None, staging_bytes = None))]
#[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
pub fn load(
    py: Python<'_>,
    comm: &Bound<'_, PyAny>,
    path: PathBuf,
    layout: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    order: Option<&str>,
    format: Option<&str>,
    dataset: Option<&str>,
    aggregators: Option<&Bound<'_, PyAny>>,
    staging_bytes: Option<usize>,
) -> PyResult<PyDistArray> {
    let request = LoadRequest {
        path,
        layout,
        window: None,
        dtype,
        order,
        options: options(format, dataset, aggregators, staging_bytes, false),
    };
    load_any(py, comm, request)
}

/// Loads the window of ``shape`` at ``origin`` of the array in ``path`` (a
/// plane, a slab, any box) into a new array of the window's shape laid out
/// as ``layout`` over ``comm``; as :func:`load` otherwise. Collective.
#[pyfunction]
#[pyo3(signature = (comm, path, layout, origin, shape, *, dtype = None, order = None, format = None, dataset = None, aggregators = None, staging_bytes = None))]
#[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
pub fn load_window(
    py: Python<'_>,
    comm: &Bound<'_, PyAny>,
    path: PathBuf,
    layout: &Bound<'_, PyAny>,
    origin: Vec<usize>,
    shape: Vec<usize>,
    dtype: Option<&Bound<'_, PyAny>>,
    order: Option<&str>,
    format: Option<&str>,
    dataset: Option<&str>,
    aggregators: Option<&Bound<'_, PyAny>>,
    staging_bytes: Option<usize>,
) -> PyResult<PyDistArray> {
    let request = LoadRequest {
        path,
        layout,
        window: Some((origin, shape)),
        dtype,
        order,
        options: options(format, dataset, aggregators, staging_bytes, false),
    };
    load_any(py, comm, request)
}

/// What `load` and `load_window` ask for, as their callers passed it.
struct LoadRequest<'a, 'py> {
    path: PathBuf,
    /// A spec string or a Layout.
    layout: &'a Bound<'py, PyAny>,
    /// `(origin, shape)` of a window; `None`: the whole array.
    window: Option<(Vec<usize>, Vec<usize>)>,
    dtype: Option<&'a Bound<'py, PyAny>>,
    order: Option<&'a str>,
    options: Result<IoOptions, Failure>,
}

/// A load of the whole array or of a window: checks agreed (the file's
/// type and shape against what was asked), then dist-io's call with the GIL
/// released. Collective.
fn load_any(
    py: Python<'_>,
    comm: &Bound<'_, PyAny>,
    request: LoadRequest<'_, '_>,
) -> PyResult<PyDistArray> {
    let LoadRequest {
        path,
        layout,
        window,
        dtype,
        order,
        options: o,
    } = request;
    let ctx = context(comm)?;
    let what = if window.is_some() {
        "load_window"
    } else {
        "load"
    };
    let fp = fingerprint(&path, &o).text(&format!("{window:?} {order:?}"));
    let checked = (|| {
        let mut o = o?;
        let asked = spec_of(layout)?;
        let spec = asked.spec;
        o.storage = match order {
            Some(s) => Some(parse_order(s)?),
            None => asked.storage,
        };
        let (found, file_shape) = file_dtype(&path, &o)?;
        let wanted = window.as_ref().map_or(&file_shape, |(_, shape)| shape);
        if let Some(shape) = asked.shape.filter(|s| s != wanted) {
            return Err(Failure::value(format!(
                "{}: the layout's shape {shape:?} is not the {} {wanted:?}",
                path.display(),
                if window.is_some() {
                    "window's"
                } else {
                    "file's array's"
                }
            )));
        }
        if let Some(d) = dtype {
            let asked = DType::from_py(d)?;
            if asked != found {
                return Err(Failure::type_error(format!(
                    "{}: the file holds {}, but dtype {} was asked for (no conversion)",
                    path.display(),
                    found.name(),
                    asked.name()
                )));
            }
        }
        Ok((o, spec, found))
    })();
    let fp = fp.text(&format!(
        "{:?}",
        checked.as_ref().ok().map(|c| (c.1.to_string(), c.2))
    ));
    let (o, spec, dtype) = agreed(ctx.comm(), checked, fp, what)?;
    let grid = ctx.grid(spec.grid())?;
    let made = with_type!(dtype, T => {
        py.allow_threads(|| -> Result<DistArray<T>, dist_io::IoError> {
            match &window {
                None => dist_io::load::<T>(&grid, &spec, &path, &o),
                Some((origin, shape)) => dist_io::load_window::<T>(&grid, &spec, &path, origin, shape, &o),
            }
        })
        .map(|a| PyDistArray::new(a, ctx.clone(), comm.clone().unbind()))
    });
    Ok(unify(ctx.comm(), made, what)?)
}

/// Loads the array of ``path`` (or, with ``origin``, the window of ``a``'s
/// shape at ``origin``) into the existing array ``a``, whose dtype must be
/// the file's. Collective.
#[pyfunction]
#[pyo3(signature = (a, path, origin = None, *, format = None, dataset = None, aggregators = None, staging_bytes = None))]
#[allow(clippy::too_many_arguments, reason = "Python keyword arguments")]
pub fn load_into(
    py: Python<'_>,
    a: &Bound<'_, PyDistArray>,
    path: PathBuf,
    origin: Option<Vec<usize>>,
    format: Option<&str>,
    dataset: Option<&str>,
    aggregators: Option<&Bound<'_, PyAny>>,
    staging_bytes: Option<usize>,
) -> PyResult<()> {
    let mut this = a.borrow_mut();
    let ctx = this.context.clone();
    let o = options(format, dataset, aggregators, staging_bytes, false);
    let fp = fingerprint(&path, &o)
        .text(this.dtype().name())
        .text(&format!("{origin:?}"));
    let o = agreed(ctx.comm(), o, fp, "load_into")?;
    let done = each!(AnyArray, &mut *this.array, x, T => {
        let work = crate::redistribution::SameThread((x, &path, &origin, &o));
        py.allow_threads(move || {
            let crate::redistribution::SameThread((x, path, origin, o)) = work;
            match origin {
                None => dist_io::load_into(x, path, o),
                Some(origin) => dist_io::load_window_into(x, path, origin, o),
            }
        })
    });
    Ok(unify(ctx.comm(), done, "load_into")?)
}

/// What the header of ``path`` says, without reading its data: a dict with
/// ``format`` (``'npy'``/``'h5'``), ``dtype`` (a numpy dtype name),
/// ``shape``, ``order`` (``'C'``/``'F'``), ``version`` (npy), ``data_offset``,
/// ``file_bytes`` and ``layout`` (the layout an HDF5 dataset was saved
/// from). Local: no MPI.
#[pyfunction]
#[pyo3(signature = (path, *, dataset = None))]
pub fn info<'py>(
    py: Python<'py>,
    path: PathBuf,
    dataset: Option<&str>,
) -> PyResult<Bound<'py, PyDict>> {
    let o = options(None, dataset, None, None, false)?;
    let i = dist_io::info(&path, &o).map_err(Failure::from)?;
    let d = PyDict::new(py);
    d.set_item("format", i.format.name())?;
    d.set_item("dtype", i.element.numpy_name())?;
    d.set_item("shape", pyo3::types::PyTuple::new(py, &i.shape)?)?;
    d.set_item("order", order_name(i.order))?;
    d.set_item("version", i.version)?;
    d.set_item("data_offset", i.data_offset)?;
    d.set_item("file_bytes", i.file_bytes)?;
    d.set_item("layout", i.layout)?;
    Ok(d)
}
