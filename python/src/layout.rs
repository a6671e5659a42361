//! `ndcyclic.Layout`: a shape distributed block-cyclically over a grid of
//! ranks, with its index maps. Local: no MPI.

use crate::errors::Failure;
use dist_array::{Layout, Order};
use numpy::PyArray1;
use pyo3::prelude::*;

/// A block-cyclic layout: an array's shape, one distribution per dimension
/// over a grid of ranks, and the storage order of each rank's local part.
///
/// ``spec`` is a spec string as in the Rust API and the ``redist`` tool:
/// one distribution per dimension, separated by commas — ``block``,
/// ``cyclic`` (``cyclic(1)``), ``cyclic(b)``, ``*`` (not distributed) —
/// then ``@`` and the grid's extents, e.g. ``"cyclic(64),cyclic(64)@2x2"``.
/// ``order`` is the local parts' storage order: ``"C"`` (row-major) or
/// ``"F"`` (column-major, as ScaLAPACK's). ``rank_map``, when given, lists
/// the rank at each grid position (row-major positions).
///
/// >>> import ndcyclic
/// >>> l = ndcyclic.Layout((10, 7), "cyclic(3),block+1@2x2")
/// >>> l.local_shape(0), l.owner((9, 0))
/// ((6, 3), 3)
/// >>> ndcyclic.Layout(l.shape, str(l)) == l
/// True
#[pyclass(name = "Layout", module = "ndcyclic", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyLayout {
    pub layout: Layout,
}

/// `"C"` or `"F"` as an order.
pub fn parse_order(order: &str) -> Result<Order, Failure> {
    match order {
        "C" | "c" => Ok(Order::RowMajor),
        "F" | "f" => Ok(Order::ColumnMajor),
        _ => Err(Failure::value(format!(
            "invalid order {order:?}: expected \"C\" (row-major) or \"F\" (column-major)"
        ))),
    }
}

/// An order as `"C"` or `"F"`.
pub fn order_name(order: Order) -> &'static str {
    match order {
        Order::RowMajor => "C",
        Order::ColumnMajor => "F",
    }
}

fn tuple<'py>(py: Python<'py>, v: &[usize]) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    pyo3::types::PyTuple::new(py, v)
}

#[pymethods]
impl PyLayout {
    #[new]
    #[pyo3(signature = (shape, spec, order = "C", rank_map = None))]
    fn new(
        shape: Vec<usize>,
        spec: &str,
        order: &str,
        rank_map: Option<Vec<usize>>,
    ) -> PyResult<Self> {
        let order = parse_order(order)?;
        let mut layout = Layout::parse(&shape, spec).map_err(Failure::from)?;
        if let Some(map) = rank_map {
            layout = layout.with_rank_map(map).map_err(Failure::from)?;
        }
        Ok(PyLayout {
            layout: layout.with_storage(order),
        })
    }

    /// The global array's shape.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        tuple(py, self.layout.shape())
    }

    /// Number of dimensions.
    #[getter]
    fn ndim(&self) -> usize {
        self.layout.ndim()
    }

    /// Number of elements of the global array.
    #[getter]
    fn size(&self) -> usize {
        self.layout.len()
    }

    /// The spec string (distributions and grid), as ``str()`` gives it.
    #[getter]
    fn spec(&self) -> String {
        self.layout.spec().to_string()
    }

    /// The local parts' storage order: ``"C"`` or ``"F"``.
    #[getter]
    fn order(&self) -> &'static str {
        order_name(self.layout.storage())
    }

    /// The grid's extents.
    #[getter]
    fn grid<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        tuple(py, self.layout.grid_extents())
    }

    /// Number of ranks the layout spreads over (the product of the grid's extents).
    #[getter]
    fn ranks(&self) -> usize {
        self.layout.ranks()
    }

    /// The rank at each grid position (row-major positions).
    #[getter]
    fn rank_map(&self) -> Vec<usize> {
        self.layout.rank_map()
    }

    /// The rank holding the element at global ``index``.
    fn owner(&self, index: Vec<usize>) -> PyResult<usize> {
        Ok(self.layout.owner(&index).map_err(Failure::from)?)
    }

    /// ``(rank, local_index)`` of the element at global ``index``.
    fn global_to_local<'py>(
        &self,
        py: Python<'py>,
        index: Vec<usize>,
    ) -> PyResult<(usize, Bound<'py, pyo3::types::PyTuple>)> {
        let (rank, local) = self.layout.global_to_local(&index).map_err(Failure::from)?;
        Ok((rank, tuple(py, &local)?))
    }

    /// The global index of ``rank``'s element at ``local``.
    fn local_to_global<'py>(
        &self,
        py: Python<'py>,
        rank: usize,
        local: Vec<usize>,
    ) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let g = self
            .layout
            .local_to_global(rank, &local)
            .map_err(Failure::from)?;
        tuple(py, &g)
    }

    /// The shape of ``rank``'s local part.
    fn local_shape<'py>(
        &self,
        py: Python<'py>,
        rank: usize,
    ) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let s = self.layout.local_shape(rank).map_err(Failure::from)?;
        tuple(py, &s)
    }

    /// The local shapes of every rank, in rank order.
    fn local_shapes(&self) -> Vec<Vec<usize>> {
        self.layout.local_shapes()
    }

    /// The global indices ``rank`` holds along each dimension: one int64
    /// array per dimension, so that ``rank``'s local part is the global
    /// array at ``numpy.ix_(*layout.local_indices(rank))``.
    fn local_indices<'py>(
        &self,
        py: Python<'py>,
        rank: usize,
    ) -> PyResult<Vec<Bound<'py, PyArray1<i64>>>> {
        let coords = self.layout.coords_of_rank(rank).map_err(Failure::from)?;
        Ok(coords
            .iter()
            .enumerate()
            .map(|(d, &c)| {
                let table: Vec<i64> = self
                    .layout
                    .axis(d)
                    .local_to_global_table(c)
                    .into_iter()
                    .map(|g| i64::try_from(g).unwrap_or(i64::MAX))
                    .collect();
                PyArray1::from_vec(py, table)
            })
            .collect())
    }

    /// ``rank``'s coordinates in the layout's grid (row-major positions,
    /// through the rank map): BLACS' ``(myrow, mycol)`` for a 2-D grid.
    fn coords<'py>(
        &self,
        py: Python<'py>,
        rank: usize,
    ) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let c = self.layout.coords_of_rank(rank).map_err(Failure::from)?;
        tuple(py, &c)
    }

    /// Pickles as its constructor's arguments (so ``comm.bcast(layout)`` works).
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, pyo3::types::PyTuple>)> {
        let py = slf.py();
        let this = slf.get();
        let args = (
            tuple(py, this.layout.shape())?,
            this.layout.spec().to_string(),
            this.order(),
            this.layout.rank_map(),
        );
        Ok((slf.get_type().into_any(), args.into_pyobject(py)?))
    }

    /// The same layout with local parts stored in ``order`` (``"C"`` or ``"F"``).
    fn with_order(&self, order: &str) -> PyResult<PyLayout> {
        Ok(PyLayout {
            layout: self.layout.clone().with_storage(parse_order(order)?),
        })
    }

    fn __str__(&self) -> String {
        self.layout.spec().to_string()
    }

    fn __repr__(&self) -> String {
        let shape: Vec<String> = self.layout.shape().iter().map(|n| n.to_string()).collect();
        let shape = if shape.len() == 1 {
            format!("({},)", shape[0])
        } else {
            format!("({})", shape.join(", "))
        };
        let mut s = format!(
            "Layout({shape}, {:?}, order={:?}",
            self.layout.spec().to_string(),
            self.order()
        );
        let map = self.layout.rank_map();
        if map.iter().enumerate().any(|(i, &r)| i != r) {
            s.push_str(&format!(", rank_map={map:?}"));
        }
        s.push(')');
        s
    }

    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.layout.to_string().hash(&mut h);
        h.finish()
    }
}
