//! `ndcyclic.DistArray`: a layout, the communicator's grid, and this rank's
//! local part — Rust memory lent to numpy as a view, or a numpy array the
//! caller owns, wrapped without a copy.

use crate::comm::{context, Shared};
use crate::dtype::{each, per_type, with_type, wrap_impls, DType, Wrap};
use crate::errors::{agree, agreed, unify, Failure, Fingerprint};
use crate::held::Held;
use crate::layout::PyLayout;
use dist_array::{DistArray, Element, Layout, Order};
use numpy::IntoPyArray;
use numpy::{
    PyArray, PyArrayDescr, PyArrayDyn, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::prelude::*;

per_type!(
    /// A distributed array of any element type.
    AnyArray,
    DistArray
);
wrap_impls!(AnyArray, DistArray);

/// An n-dimensional array distributed block-cyclically over the ranks of an
/// mpi4py communicator.
///
/// Each rank holds its local part, contiguous in the layout's storage order;
/// :attr:`local` is a numpy view of it (no copy: writes through it change
/// the array). Make one with :meth:`zeros`, :func:`ndcyclic.from_function`,
/// :meth:`from_local` (wrapping a numpy array you own, no copy) or
/// :meth:`scatter`; bring it back whole with :meth:`gather`. Every method
/// that communicates is collective over the communicator: every rank calls
/// it, with the same arguments, and a failure raises the same exception on
/// every rank.
///
/// >>> import numpy as np, ndcyclic
/// >>> from mpi4py import MPI
/// >>> p = MPI.COMM_WORLD.size
/// >>> a = ndcyclic.DistArray.zeros(MPI.COMM_WORLD, ndcyclic.Layout((8, 6), f"cyclic(2),*@{p}x1"))
/// >>> a.local[...] = 1.0
/// >>> a.sum() == 48.0
/// True
#[pyclass(name = "DistArray", module = "ndcyclic")]
pub struct PyDistArray {
    /// The array (dropped before `owner`, whose memory it may borrow).
    pub array: Held<AnyArray>,
    /// The numpy array whose memory the local part is, for `from_local`.
    pub owner: Option<PyObject>,
    /// The communicator's context.
    pub context: Shared,
    /// The mpi4py communicator it was made on.
    pub comm: PyObject,
}

impl PyDistArray {
    /// Wraps a Rust array.
    pub fn new<T: Element>(array: DistArray<T>, context: Shared, comm: PyObject) -> PyDistArray
    where
        AnyArray: Wrap<DistArray<T>>,
    {
        PyDistArray {
            array: Held::new(AnyArray::wrap(array)),
            owner: None,
            context,
            comm,
        }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.array.dtype()
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        each!(AnyArray, &*self.array, a, T => a.layout())
    }
}

/// The local shape `rank` of the communicator holds under `layout`
/// (nothing for ranks beyond the layout's grid).
fn local_shape_of(layout: &Layout, rank: usize) -> Vec<usize> {
    if rank < layout.ranks() {
        layout
            .local_shape(rank)
            .unwrap_or_else(|_| vec![0; layout.ndim()])
    } else {
        vec![0; layout.ndim()]
    }
}

/// Ghost widths: one int for every axis of `ndim`, or a sequence of one
/// per axis.
pub fn per_axis_widths(widths: &Bound<'_, PyAny>, ndim: usize) -> Result<Vec<usize>, Failure> {
    if let Ok(w) = widths.extract::<usize>() {
        return Ok(vec![w; ndim]);
    }
    match widths.extract::<Vec<usize>>() {
        Ok(w) if w.len() == ndim => Ok(w),
        _ => Err(Failure::value(format!(
            "ghost widths {widths}: expected one non-negative int, or one per axis ({ndim})"
        ))),
    }
}

/// Whether `a`'s memory is contiguous in `order`.
fn contiguous_in(a: &Bound<'_, PyUntypedArray>, order: Order) -> bool {
    match order {
        Order::RowMajor => a.is_c_contiguous(),
        Order::ColumnMajor => a.is_fortran_contiguous(),
    }
}

/// What a numpy array must be to become the local part of `layout` on
/// `rank`: its element type, or why it cannot.
fn check_local(a: &Bound<'_, PyAny>, layout: &Layout, rank: usize) -> Result<DType, Failure> {
    let a = a.downcast::<PyUntypedArray>().map_err(|_| {
        Failure::type_error(format!(
            "from_local expects a numpy.ndarray as the local part, got {}",
            a.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let dtype = DType::of(&a.dtype())?;
    let expected = local_shape_of(layout, rank);
    if a.shape() != expected.as_slice() {
        return Err(Failure::value(format!(
            "rank {rank}: the local part has shape {:?}, but layout {} gives this rank shape {:?}",
            a.shape(),
            layout,
            expected
        )));
    }
    let order = layout.storage();
    if !contiguous_in(a, order) {
        return Err(Failure::value(format!(
            "rank {rank}: the local part is not {}-contiguous, as the layout's storage order \
             asks (numpy.ascontiguousarray / numpy.asfortranarray make a contiguous copy)",
            crate::layout::order_name(order)
        )));
    }
    // SAFETY: reading the flags of a live array object.
    let flags = unsafe { (*a.as_array_ptr()).flags };
    if flags & numpy::npyffi::NPY_ARRAY_WRITEABLE == 0 {
        return Err(Failure::value(format!(
            "rank {rank}: the local part is read-only"
        )));
    }
    if flags & numpy::npyffi::NPY_ARRAY_ALIGNED == 0 {
        return Err(Failure::value(format!(
            "rank {rank}: the local part is not aligned"
        )));
    }
    Ok(dtype)
}

/// The numpy view of `a`'s local part, kept alive by `container`.
fn local_view<'py, T: Element + numpy::Element>(
    a: &mut DistArray<T>,
    container: Bound<'py, PyAny>,
) -> Bound<'py, PyAny> {
    let view = a.local_mut();
    // SAFETY: the view's memory is the array's local part, which lives as
    // long as `container` (the DistArray object) and never moves: numpy keeps
    // `container` alive as the view's base.
    unsafe { PyArray::borrow_from_array(&view, container) }.into_any()
}

/// A numpy view of `a`'s whole padded block, ghosts included, kept alive
/// by `container`.
fn padded_view<'py, T: Element + numpy::Element>(
    a: &mut DistArray<T>,
    container: Bound<'py, PyAny>,
) -> Bound<'py, PyAny> {
    let view = a.padded_mut();
    // SAFETY: as for `local_view`: the padded storage lives as long as
    // `container` and never moves.
    unsafe { PyArray::borrow_from_array(&view, container) }.into_any()
}

#[pymethods]
impl PyDistArray {
    /// An array of zeros of ``dtype`` laid out as ``layout`` over ``comm``
    /// (an ``mpi4py.MPI.Intracomm``). Collective.
    #[staticmethod]
    #[pyo3(signature = (comm, layout, dtype = None))]
    fn zeros(
        py: Python<'_>,
        comm: &Bound<'_, PyAny>,
        layout: &PyLayout,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyDistArray> {
        let ctx = context(comm)?;
        let dtype = match dtype {
            None => Ok(DType::F64),
            Some(d) => DType::from_py(d),
        };
        let l = &layout.layout;
        let fp = Fingerprint::default()
            .text(&l.to_string())
            .text(dtype.as_ref().map(|d| d.name()).unwrap_or("?"));
        let dtype = agreed(ctx.comm(), dtype, fp, "DistArray.zeros")?;
        let grid = ctx.grid(l.grid_extents())?;
        let made = with_type!(dtype, T => {
            DistArray::<T>::zeros(&grid, l.clone())
                .map(|a| PyDistArray::new(a, ctx.clone(), comm.clone().unbind()))
                .map_err(Failure::from)
        });
        let _ = py;
        Ok(agreed(
            ctx.comm(),
            made,
            Fingerprint::default(),
            "DistArray.zeros",
        )?)
    }

    /// Wraps ``local``, a numpy array this rank owns, as its local part of an
    /// array laid out as ``layout`` over ``comm`` — without a copy: the
    /// array and ``local`` share memory (``numpy.shares_memory``) for as
    /// long as the array lives. ``local`` must have this rank's local shape
    /// (``layout.local_shape(rank)``; empty on ranks beyond the layout's
    /// grid), a supported dtype, be writeable, aligned and contiguous in the
    /// layout's order (C for ``order="C"``, Fortran for ``"F"``); otherwise
    /// every rank raises the same ``ValueError`` or ``TypeError``.
    /// Collective.
    #[staticmethod]
    fn from_local(
        comm: &Bound<'_, PyAny>,
        layout: &PyLayout,
        local: &Bound<'_, PyAny>,
    ) -> PyResult<PyDistArray> {
        let ctx = context(comm)?;
        let l = &layout.layout;
        let dtype = check_local(local, l, ctx.rank());
        let fp = Fingerprint::default()
            .text(&l.to_string())
            .text(dtype.as_ref().map(|d| d.name()).unwrap_or("?"));
        let dtype = agreed(ctx.comm(), dtype, fp, "DistArray.from_local")?;
        let grid = ctx.grid(l.grid_extents())?;
        let made = with_type!(dtype, T => {
            let a = local.downcast::<PyArrayDyn<T>>().map_err(|e| Failure::type_error(e.to_string()))?;
            let len = a.len();
            let ptr = a.data();
            // SAFETY: `ptr` is `len` aligned, writeable, contiguous elements
            // of `local` (checked above), kept alive by `owner` for as long
            // as the array lives (the array is dropped first).
            unsafe { DistArray::<T>::from_raw_parts(&grid, l.clone(), ptr, len) }
                .map_err(Failure::from)
                .map(|a| {
                    let mut w = PyDistArray::new(a, ctx.clone(), comm.clone().unbind());
                    w.owner = Some(local.clone().unbind());
                    w
                })
        });
        Ok(agreed(
            ctx.comm(),
            made,
            Fingerprint::default(),
            "DistArray.from_local",
        )?)
    }

    /// Distributes ``array``, a numpy array of the layout's shape given on
    /// rank ``root`` (``None`` elsewhere), as ``layout`` over ``comm``. The
    /// element type is the root's array's. Collective.
    #[staticmethod]
    #[pyo3(signature = (comm, layout, array = None, root = 0))]
    fn scatter(
        comm: &Bound<'_, PyAny>,
        layout: &PyLayout,
        array: Option<&Bound<'_, PyAny>>,
        root: usize,
    ) -> PyResult<PyDistArray> {
        let ctx = context(comm)?;
        let l = &layout.layout;
        let me = ctx.rank();
        let check = if root >= ctx.size() {
            Err(Failure::value(format!(
                "root {root} is not a rank of the communicator (size {})",
                ctx.size()
            )))
        } else if me != root {
            Ok(None)
        } else {
            match array {
                None => Err(Failure::value(format!(
                    "scatter: the root (rank {root}) passed no array"
                ))),
                Some(a) => match a.downcast::<PyUntypedArray>() {
                    Err(_) => Err(Failure::type_error(
                        "scatter: the root's array is not a numpy.ndarray",
                    )),
                    Ok(a) => {
                        let t = DType::of(&a.dtype())?;
                        if a.shape() != l.shape() {
                            Err(Failure::value(format!(
                                "scatter: the root's array has shape {:?}, the layout shape {:?}",
                                a.shape(),
                                l.shape()
                            )))
                        } else {
                            Ok(Some(t))
                        }
                    }
                },
            }
        };
        let fp = Fingerprint::default()
            .text(&l.to_string())
            .number(root as u64);
        let root_type = agreed(ctx.comm(), check, fp, "DistArray.scatter")?;
        let mut code = [root_type.map_or(0u8, |t| {
            u8::try_from(DType::ALL.iter().position(|&x| x == t).unwrap_or(0)).unwrap_or(0)
        })];
        let root_rank = i32::try_from(root).unwrap_or(0); // below the size: checked and agreed
        procgrid::waits::broadcast_into(ctx.comm(), root_rank, &mut code[..]);
        let dtype = DType::ALL[usize::from(code[0]).min(DType::ALL.len() - 1)];
        let grid = ctx.grid(l.grid_extents())?;
        let made = with_type!(dtype, T => {
            let whole = match array {
                Some(a) if me == root => Some(a.downcast::<PyArrayDyn<T>>().map_err(|e| Failure::type_error(e.to_string()))?.readonly()),
                _ => None,
            };
            let view = whole.as_ref().map(|w| w.as_array());
            DistArray::<T>::scatter(&grid, l.clone(), root, view)
                .map(|a| PyDistArray::new(a, ctx.clone(), comm.clone().unbind()))
        });
        Ok(unify(ctx.comm(), made, "DistArray.scatter")?)
    }

    /// The whole array, as a numpy array, on rank ``root``; ``None`` on the
    /// other ranks. Collective.
    #[pyo3(signature = (root = 0))]
    fn gather(&self, py: Python<'_>, root: usize) -> PyResult<PyObject> {
        let comm = self.context.comm();
        let check = if root >= self.context.size() {
            Err(Failure::value(format!(
                "root {root} is not a rank of the communicator (size {})",
                self.context.size()
            )))
        } else {
            Ok(())
        };
        agree(
            comm,
            check,
            Fingerprint::default().number(root as u64),
            "DistArray.gather",
        )?;
        let out = each!(AnyArray, &*self.array, a, T => {
            let whole = unify(comm, a.gather(root), "DistArray.gather")?;
            whole.map(|w| w.into_pyarray(py).into_any().unbind())
        });
        Ok(out.unwrap_or_else(|| py.None()))
    }

    /// This rank's local part: a numpy view of the array's memory (no copy;
    /// writes change the array). Empty on ranks beyond the layout's grid.
    #[getter]
    fn local<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let container = slf.clone().into_any();
        let mut this = slf.borrow_mut();
        Ok(each!(AnyArray, &mut *this.array, a, T => local_view(a, container)))
    }

    /// The whole padded local block, ghosts included (a numpy view, no
    /// copy): :attr:`local` is its interior, offset by :attr:`ghosts` on
    /// every axis. The same as :attr:`local` for an array without ghosts.
    /// Ghosts beyond a non-periodic edge are the caller's to set (its
    /// boundary condition): an update never writes them.
    #[getter]
    fn padded<'py>(slf: Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let container = slf.clone().into_any();
        let mut this = slf.borrow_mut();
        Ok(each!(AnyArray, &mut *this.array, a, T => padded_view(a, container)))
    }

    /// The ghost widths per axis (zeros for an array without ghosts).
    #[getter]
    fn ghosts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let widths = each!(AnyArray, &*self.array, a, T => a.ghost_widths().to_vec());
        pyo3::types::PyTuple::new(py, widths)
    }

    /// A copy of this array with ``widths[d]`` ghost layers on both sides
    /// of axis ``d`` (one int for every axis, or one per axis): its
    /// :attr:`local` part the same, its ghosts zero, for
    /// :class:`GhostUpdate` to fill. Not collective.
    fn with_ghosts(&self, widths: &Bound<'_, PyAny>) -> PyResult<PyDistArray> {
        let ndim = self.layout().ndim();
        let widths = per_axis_widths(widths, ndim)?;
        let ctx = self.context.clone();
        let comm = Python::with_gil(|py| self.comm.clone_ref(py));
        let made = each!(AnyArray, &*self.array, a, T => {
            DistArray::<T>::zeros_with_ghosts(a.grid(), a.layout().clone(), &widths).map(|mut g| {
                g.local_mut().assign(&a.local());
                PyDistArray::new(g, ctx.clone(), comm)
            })
        });
        Ok(made.map_err(Failure::from)?)
    }

    /// The layout.
    #[getter(layout)]
    fn get_layout(&self) -> PyLayout {
        PyLayout {
            layout: self.layout().clone(),
        }
    }

    /// The global shape.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        pyo3::types::PyTuple::new(py, self.layout().shape())
    }

    /// The element type, as a numpy dtype.
    #[getter(dtype)]
    fn get_dtype<'py>(&self, py: Python<'py>) -> Bound<'py, PyArrayDescr> {
        self.dtype().descr(py)
    }

    /// The mpi4py communicator the array was made on.
    #[getter(comm)]
    fn get_comm(&self, py: Python<'_>) -> PyObject {
        self.comm.clone_ref(py)
    }

    /// Whether the local part is memory the node's other ranks can map, so
    /// redistributions on the node copy straight from it.
    #[getter]
    fn shared(&self) -> bool {
        each!(AnyArray, &*self.array, a, T => a.shared_storage().is_some())
    }

    /// The sum of all elements (``float`` for floats, ``complex`` for
    /// complex numbers, ``int`` for integers, summed without overflow).
    /// Collective.
    fn sum(&self, py: Python<'_>) -> PyResult<PyObject> {
        let comm = self.context.comm();
        Ok(each!(AnyArray, &*self.array, a, T => {
            let s = unify(comm, a.sum(), "DistArray.sum")?;
            s.into_pyobject(py)?.into_any().unbind()
        }))
    }

    /// The largest absolute value (modulus for complex numbers), as a float.
    /// Collective.
    fn max_abs(&self) -> PyResult<f64> {
        let comm = self.context.comm();
        Ok(each!(AnyArray, &*self.array, a, T => unify(comm, a.max_abs(), "DistArray.max_abs")?))
    }

    /// The 2-norm of all elements, as a float. Collective.
    fn norm(&self) -> PyResult<f64> {
        let comm = self.context.comm();
        Ok(each!(AnyArray, &*self.array, a, T => unify(comm, a.norm2(), "DistArray.norm")?))
    }

    /// A copy with its own memory (of the same layout). Local.
    fn copy(&self, py: Python<'_>) -> PyDistArray {
        let array = each!(AnyArray, &*self.array, a, T => AnyArray::wrap(a.clone()));
        PyDistArray {
            array: Held::new(array),
            owner: None,
            context: self.context.clone(),
            comm: self.comm.clone_ref(py),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "DistArray({}, dtype={})",
            self.layout(),
            self.dtype().name()
        )
    }
}
