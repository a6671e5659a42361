"""ndcyclic: block-cyclic distributed numpy arrays over mpi4py, and fast
redistribution between layouts.

An array of any shape is laid out over the ranks of an mpi4py communicator by
a :class:`Layout` (one block-cyclic distribution per dimension, as in
ScaLAPACK, on a grid of ranks); each rank holds its local part, which
:attr:`DistArray.local` lends to numpy without a copy. A
:class:`Redistribution` changes an array from one layout to another — rows to
columns, pencils to pencils, blocks to other blocks, on the same ranks or
others — planned once and executed many times at the speed of moving the
bytes once. :func:`save` and :func:`load` put arrays in ``.npy`` files any
numpy opens and read them back in any layout, on any number of ranks.

Every call that communicates is collective over its communicator: every
rank calls it with the same arguments. When anything is wrong on any rank,
every rank raises the same exception (``ValueError``, ``TypeError``,
``OSError``...), so no rank is left waiting.

The package uses MPI through mpi4py: it never initialises nor finalises MPI,
and works with any ``mpi4py.MPI.Intracomm`` (duplicated for its own
messages). Importing ndcyclic imports ``mpi4py.MPI`` first, which starts MPI
as mpi4py always does.

>>> import numpy as np, ndcyclic
>>> from mpi4py import MPI
>>> comm = MPI.COMM_WORLD
>>> rows = ndcyclic.Layout((6, 4), f"block,*@{comm.size}x1")
>>> a = ndcyclic.from_function(comm, rows, lambda i, j: 10.0 * i + j)
>>> b = ndcyclic.Redistribution(comm, rows, ndcyclic.Layout((6, 4), f"*,cyclic@1x{comm.size}")).execute(a)
>>> whole = b.gather()
>>> comm.rank != 0 or bool(whole[5, 3] == 53.0)
True
"""

from mpi4py import MPI as _MPI  # noqa: F401  (starts MPI before the extension's first call)
import numpy as _np

from ._ndcyclic import (
    DistArray,
    GhostUpdate,
    Layout,
    Redistribution,
    build_info,
    choose_grid,
    grids,
    info,
    load,
    load_into,
    load_window,
    save,
    save_window,
)
from .mpi_check import check_mpi

__all__ = [
    "DistArray",
    "GhostUpdate",
    "Layout",
    "Redistribution",
    "build_info",
    "check_mpi",
    "choose_grid",
    "from_function",
    "grids",
    "info",
    "load",
    "load_into",
    "load_window",
    "save",
    "save_window",
]

__version__ = "0.1.0"


def _agree_on_exception(comm, error, what):
    """Raises on every rank the exception of the lowest rank where ``error``
    is not None (with its class and message); returns when none failed.
    Collective over ``comm``."""
    failed = comm.allreduce(comm.rank if error is not None else comm.size, op=_MPI.MIN)
    if failed == comm.size:
        return
    described = None
    if comm.rank == failed:
        described = (type(error), str(error))
    kind, message = comm.bcast(described, root=failed)
    if not (isinstance(kind, type) and issubclass(kind, Exception)):
        kind = RuntimeError
    if error is not None and comm.rank == failed:
        raise error
    raise kind(f"{what}: rank {failed} failed: {message}")


def from_function(comm, layout, f, dtype=None):
    """A distributed array whose element at global index ``(i, j, ...)`` is
    ``f(i, j, ...)``, laid out as ``layout`` over ``comm``.

    As :func:`numpy.fromfunction`, ``f`` is called once per rank with one
    integer index array per dimension, broadcast against each other (the
    global indices of this rank's local part, ``numpy.ix_`` style), and must
    return values of the local part's shape (or that broadcast to it).
    ``dtype`` defaults to the dtype of ``f``'s result. Collective: an
    exception in ``f`` on any rank is raised on every rank.

    >>> import ndcyclic
    >>> from mpi4py import MPI
    >>> l = ndcyclic.Layout((4, 3), f"cyclic,*@{MPI.COMM_WORLD.size}x1")
    >>> a = ndcyclic.from_function(MPI.COMM_WORLD, l, lambda i, j: i * 3 + j)
    >>> int(a.sum())
    66
    """
    rank = comm.rank
    values, error = None, None
    try:
        if rank < layout.ranks:
            index = layout.local_indices(rank)
            shape = tuple(len(ix) for ix in index)
        else:
            index = [_np.zeros(0, dtype=_np.int64) for _ in range(layout.ndim)]
            shape = (0,) * layout.ndim
        values = _np.asarray(f(*_np.ix_(*index)))
        if dtype is None:
            dtype = values.dtype
        values = _np.broadcast_to(values, shape)
    except Exception as e:  # noqa: BLE001 (raised again on every rank below)
        error = e
    _agree_on_exception(comm, error, "from_function")
    a = DistArray.zeros(comm, layout, dtype)
    a.local[...] = values
    return a
