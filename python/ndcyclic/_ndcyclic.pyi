"""Type stubs of ndcyclic's compiled part (re-exported by ``ndcyclic``)."""

from os import PathLike
from typing import Any, Callable, Literal, Optional, Sequence, Tuple, Union, final, overload

import numpy as np
import numpy.typing as npt
from mpi4py import MPI

_Order = Literal["C", "F"]
_Path = Union[str, PathLike]
_DType = npt.DTypeLike
_Aggregators = Union[Literal["auto"], int, Sequence[int], None]

__all__ = [
    "DistArray",
    "GhostUpdate",
    "Layout",
    "Redistribution",
    "build_info",
    "choose_grid",
    "grids",
    "info",
    "load",
    "load_into",
    "load_window",
    "save",
    "save_window",
]

@final
class Layout:
    """A block-cyclic layout: a shape, one distribution per dimension over a
    grid of ranks (``"cyclic(64),block@2x2"``), and the local parts' storage
    order. Local: no MPI."""

    def __new__(
        cls,
        shape: Sequence[int],
        spec: str,
        order: _Order = "C",
        rank_map: Optional[Sequence[int]] = None,
    ) -> "Layout": ...
    @property
    def shape(self) -> Tuple[int, ...]:
        """The global array's shape."""
    @property
    def ndim(self) -> int:
        """Number of dimensions."""
    @property
    def size(self) -> int:
        """Number of elements of the global array."""
    @property
    def spec(self) -> str:
        """The spec string, as ``str()`` gives it."""
    @property
    def order(self) -> _Order:
        """The local parts' storage order."""
    @property
    def grid(self) -> Tuple[int, ...]:
        """The grid's extents."""
    @property
    def ranks(self) -> int:
        """Ranks the layout spreads over."""
    @property
    def rank_map(self) -> list[int]:
        """The rank at each grid position (row-major positions)."""
    def owner(self, index: Sequence[int]) -> int:
        """The rank holding the element at global ``index``."""
    def global_to_local(self, index: Sequence[int]) -> Tuple[int, Tuple[int, ...]]:
        """``(rank, local_index)`` of the element at global ``index``."""
    def local_to_global(self, rank: int, local: Sequence[int]) -> Tuple[int, ...]:
        """The global index of ``rank``'s element at ``local``."""
    def local_shape(self, rank: int) -> Tuple[int, ...]:
        """The shape of ``rank``'s local part."""
    def local_shapes(self) -> list[list[int]]:
        """Every rank's local shape, in rank order."""
    def local_indices(self, rank: int) -> list[npt.NDArray[np.int64]]:
        """The global indices ``rank`` holds along each dimension."""
    def coords(self, rank: int) -> Tuple[int, ...]:
        """``rank``'s coordinates in the layout's grid."""
    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]: ...
    def with_order(self, order: _Order) -> "Layout":
        """The same layout with local parts stored in ``order``."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

@final
class DistArray:
    """An array distributed block-cyclically over an mpi4py communicator's
    ranks; ``local`` is a numpy view of this rank's part."""

    @staticmethod
    def zeros(
        comm: MPI.Intracomm, layout: Layout, dtype: Optional[_DType] = None
    ) -> "DistArray":
        """Zeros of ``dtype`` (default float64). Collective."""
    @staticmethod
    def from_local(comm: MPI.Intracomm, layout: Layout, local: np.ndarray) -> "DistArray":
        """Wraps this rank's numpy array as its local part, without a copy. Collective."""
    @staticmethod
    def scatter(
        comm: MPI.Intracomm, layout: Layout, array: Optional[np.ndarray] = None, root: int = 0
    ) -> "DistArray":
        """Distributes the root's numpy array. Collective."""
    def gather(self, root: int = 0) -> Optional[np.ndarray]:
        """The whole array on ``root``, ``None`` elsewhere. Collective."""
    @property
    def local(self) -> np.ndarray:
        """This rank's local part: a numpy view, no copy (the interior of
        :attr:`padded` for an array with ghosts)."""
    @property
    def padded(self) -> np.ndarray:
        """The whole padded local block, ghosts included: a numpy view."""
    @property
    def ghosts(self) -> Tuple[int, ...]:
        """Ghost widths per axis (zeros without ghosts)."""
    def with_ghosts(self, widths: Union[int, Sequence[int]]) -> "DistArray":
        """A copy with ghost layers of ``widths`` around its local part. Local."""
    @property
    def layout(self) -> Layout:
        """The layout."""
    @property
    def shape(self) -> Tuple[int, ...]:
        """The global shape."""
    @property
    def dtype(self) -> np.dtype:
        """The element type."""
    @property
    def comm(self) -> MPI.Intracomm:
        """The communicator it was made on."""
    @property
    def shared(self) -> bool:
        """Whether the local part is in memory the node's ranks can map."""
    def sum(self) -> Union[int, float, complex]:
        """The sum of all elements. Collective."""
    def max_abs(self) -> float:
        """The largest absolute value. Collective."""
    def norm(self) -> float:
        """The 2-norm. Collective."""
    def copy(self) -> "DistArray":
        """A copy with its own memory. Local."""

@final
class GhostUpdate:
    """Refreshes the ghost layers of arrays of one layout and widths,
    planned once, executed every step."""

    def __new__(
        cls,
        array: DistArray,
        periodic: Union[None, bool, Sequence[bool]] = None,
        corners: str = "box",
        node_direct: bool = True,
        wisdom: Optional[_Path] = None,
    ) -> "GhostUpdate": ...
    def update(self, array: DistArray) -> None:
        """Refreshes ``array``'s ghosts. Collective."""
    def tune(
        self,
        array: DistArray,
        *,
        warmups: int = 3,
        reps: int = 5,
        wisdom: Optional[_Path] = None,
    ) -> dict[str, Any]:
        """Measures node-direct reads against messages on ``array``, keeps
        the fastest (and adds it to ``wisdom``). Collective."""
    @property
    def warnings(self) -> list[str]:
        """What the wisdom file could not give this update."""
    def begin(self, array: DistArray) -> None:
        """Starts refreshing ``array``'s ghosts. Collective."""
    def finish(self, array: DistArray) -> None:
        """Completes the update begun on ``array``. Collective."""
    @property
    def ghost_bytes(self) -> int:
        """Bytes of ghosts this rank's update fills."""
    @property
    def plan_bytes(self) -> int:
        """Bytes this rank's plan holds."""
    @property
    def copies(self) -> dict:
        """How this rank's last update moved its ghosts."""

@final
class Redistribution:
    """A redistribution from ``source`` to ``target`` layouts over a
    communicator, planned once and executed many times."""

    def __new__(
        cls,
        comm: MPI.Intracomm,
        source: Layout,
        target: Layout,
        *,
        dtype: Optional[_DType] = None,
        strategy: Literal["auto", "alltoallv", "scheduled", "async", "combined"] = "auto",
        remap: Literal["none", "closed-form", "optimal"] = "none",
        window: Optional[Tuple[Sequence[int], Sequence[int], Sequence[int]]] = None,
        permute: Optional[Sequence[int]] = None,
        alpha: Optional[complex] = None,
        beta: Optional[complex] = None,
        conjugate: bool = False,
        node_direct: bool = True,
        streaming: str = "auto",
        max_message_elements: Optional[int] = None,
        wisdom: Optional[_Path] = None,
    ) -> "Redistribution": ...
    @overload
    def execute(self, a: DistArray, b: None = None) -> DistArray:
        """Into a new array it returns. Collective."""
    @overload
    def execute(self, a: DistArray, b: DistArray) -> None:
        """Into ``b``. Collective."""
    def tune(
        self,
        a: Union[DistArray, list[DistArray]],
        b: Union[DistArray, list[DistArray]],
        *,
        warmups: int = 3,
        reps: int = 5,
        wisdom: Optional[_Path] = None,
    ) -> dict[str, Any]:
        """Measures every admissible way on ``a`` into ``b`` (lists: whole
        batches) and keeps the fastest (added to ``wisdom`` if given).
        Collective."""
    def execute_batch(self, sources: list[DistArray], targets: list[DistArray]) -> None:
        """Each source into its target, as one exchange. Collective."""
    @property
    def target_layout(self) -> Layout:
        """The target layout (remapped, if asked)."""
    @property
    def source_layout(self) -> Layout:
        """The source layout."""
    @property
    def comm(self) -> MPI.Intracomm:
        """The communicator it was planned over."""
    def report(self) -> dict[str, Any]:
        """The plan's figures and the executions' times. Collective."""

def save(
    a: DistArray,
    path: _Path,
    *,
    format: Optional[Literal["npy", "h5"]] = None,
    dataset: Optional[str] = None,
    aggregators: _Aggregators = None,
    staging_bytes: Optional[int] = None,
    sync: bool = False,
) -> None:
    """Saves ``a`` to ``path`` (a ``.npy`` numpy opens), atomically. Collective."""

def save_window(
    a: DistArray,
    path: _Path,
    origin: Sequence[int],
    *,
    format: Optional[Literal["npy", "h5"]] = None,
    dataset: Optional[str] = None,
    aggregators: _Aggregators = None,
    staging_bytes: Optional[int] = None,
    sync: bool = False,
) -> None:
    """Writes ``a`` into the window at ``origin`` of an existing file. Collective."""

def load(
    comm: MPI.Intracomm,
    path: _Path,
    layout: Union[str, Layout],
    *,
    dtype: Optional[_DType] = None,
    order: Optional[_Order] = None,
    format: Optional[Literal["npy", "h5"]] = None,
    dataset: Optional[str] = None,
    aggregators: _Aggregators = None,
    staging_bytes: Optional[int] = None,
) -> DistArray:
    """Loads a file into a new array of any layout. Collective."""

def load_window(
    comm: MPI.Intracomm,
    path: _Path,
    layout: Union[str, Layout],
    origin: Sequence[int],
    shape: Sequence[int],
    *,
    dtype: Optional[_DType] = None,
    order: Optional[_Order] = None,
    format: Optional[Literal["npy", "h5"]] = None,
    dataset: Optional[str] = None,
    aggregators: _Aggregators = None,
    staging_bytes: Optional[int] = None,
) -> DistArray:
    """Loads a window of a file into a new array. Collective."""

def load_into(
    a: DistArray,
    path: _Path,
    origin: Optional[Sequence[int]] = None,
    *,
    format: Optional[Literal["npy", "h5"]] = None,
    dataset: Optional[str] = None,
    aggregators: _Aggregators = None,
    staging_bytes: Optional[int] = None,
) -> None:
    """Loads a file (or a window at ``origin``) into ``a``. Collective."""

def info(path: _Path, *, dataset: Optional[str] = None) -> dict[str, Any]:
    """A file's header: format, dtype, shape, order... Local."""

def grids(ranks: int, dims: int) -> list[list[int]]:
    """Every grid of ``dims`` extents whose product is ``ranks``, the most
    nearly square first. Local."""

def choose_grid(
    comm: Any,
    name: str,
    job: Callable[[tuple[int, ...]], Callable[[], object]],
    candidates: Sequence[Sequence[int]] | None = None,
    *,
    warmups: int = 8,
    reps: int = 3,
    wisdom: str | PathLike[str] | None = None,
) -> dict[str, Any]:
    """The fastest of ``candidates`` (default: every 2-D grid of the
    communicator's ranks) for the job ``name``, timed on whole steps:
    ``job(grid)`` sets the job up and returns one step. A wisdom file keeps
    the choice. Returns ``grid``, ``recalled``, ``tried``, ``ratio``,
    ``steps``, ``tuning_s``, ``warnings``. Collective."""

def build_info() -> dict[str, Any]:
    """What this build is: ``version``, ``hdf5`` (whether HDF5 files work),
    ``mpi_library`` and ``libmpi`` (the MPI library the extension calls).
    Local."""
