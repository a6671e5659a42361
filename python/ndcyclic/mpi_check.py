"""Whether ndcyclic and mpi4py call the same MPI library.

The extension is linked to the MPI it was built against; mpi4py to the one
*it* was built against. Two different libraries in one process cannot work
(each has its own state: ndcyclic would see an MPI that was never started),
and nothing fails clearly at import. :func:`check_mpi` compares the two:
their version texts and, where the loader says, their files.
"""

import ctypes
import ctypes.util
import os

__all__ = ["check_mpi", "compare"]


def compare(ndcyclic, mpi4py):
    """What is wrong when ``ndcyclic`` and ``mpi4py`` describe the MPI
    library each calls (dicts with ``mpi_library``, the version text's first
    line, and ``libmpi``, the file or ``None``): ``None`` when they call
    the same one, a sentence otherwise. Files decide where both are known;
    else the version texts do.

    >>> from ndcyclic.mpi_check import compare
    >>> same = {"mpi_library": "MPICH Version: 4.0.2", "libmpi": "/lib/libmpich.so.12"}
    >>> compare(same, dict(same)) is None
    True
    >>> compare(same, {"mpi_library": "Open MPI v4.1.4", "libmpi": "/lib/libmpi.so.40"})[:29]
    'ndcyclic calls MPICH Version:'
    """
    ours, theirs = ndcyclic.get("libmpi"), mpi4py.get("libmpi")
    if ours and theirs:
        if os.path.realpath(ours) == os.path.realpath(theirs):
            return None
    elif (ndcyclic.get("mpi_library") or "") == (mpi4py.get("mpi_library") or ""):
        return None

    def said(d):
        where = f" ({d['libmpi']})" if d.get("libmpi") else ""
        return f"{d.get('mpi_library') or 'an MPI library that gives no version'}{where}"

    return f"ndcyclic calls {said(ndcyclic)}, but mpi4py calls {said(mpi4py)}"


def _file_of(handle, symbol):
    """The file of the loaded object that ``symbol`` resolves to when looked
    up from ``handle`` (a ``ctypes.CDLL``); ``None`` when it is not found
    or the loader does not say."""

    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

    try:
        address = ctypes.cast(getattr(handle, symbol), ctypes.c_void_p).value
        loader = ctypes.CDLL(ctypes.util.find_library("dl") or None)
        info = DlInfo()
        if not address or not loader.dladdr(ctypes.c_void_p(address), ctypes.byref(info)):
            return None
        return os.path.realpath(info.dli_fname.decode()) if info.dli_fname else None
    except (AttributeError, OSError, ValueError):
        return None


def _mpi4py_library():
    """The MPI library mpi4py calls: its version text's first line, and
    the file ``MPI_Get_library_version`` resolves to from mpi4py's
    extension (or, where it loads MPI at run time, from the process)."""
    from mpi4py import MPI

    lines = MPI.Get_library_version().strip().splitlines()
    libmpi = None
    for handle in (lambda: ctypes.CDLL(MPI.__file__), lambda: ctypes.CDLL(None)):
        try:
            libmpi = _file_of(handle(), "MPI_Get_library_version")
        except OSError:
            libmpi = None
        if libmpi:
            break
    return {"mpi_library": lines[0].strip() if lines else None, "libmpi": libmpi}


def check_mpi(raise_error=True):
    """Checks that ndcyclic and mpi4py call the same MPI library, and says
    what each calls: a dict with ``same`` (bool), ``ndcyclic`` and
    ``mpi4py`` (each ``{"mpi_library": ..., "libmpi": ...}``) and
    ``problem`` (a sentence, or ``None``). With ``raise_error`` (the
    default), a mismatch raises ``RuntimeError`` saying how to rebuild.
    Local: no communication.

    >>> import ndcyclic
    >>> ndcyclic.check_mpi()["same"]
    True
    """
    from ._ndcyclic import build_info

    info = build_info()
    ours = {"mpi_library": info["mpi_library"], "libmpi": info["libmpi"]}
    theirs = _mpi4py_library()
    problem = compare(ours, theirs)
    if problem is not None and raise_error:
        raise RuntimeError(
            f"{problem}. Build mpi4py from source against the MPI ndcyclic was built "
            "with (MPICC=<that MPI's mpicc> python -m pip install --no-binary=mpi4py "
            "--no-cache-dir --force-reinstall mpi4py), or build ndcyclic against "
            "mpi4py's (MPICC=<its mpicc> python -m pip install --force-reinstall ./python)"
        )
    return {"same": problem is None, "ndcyclic": ours, "mpi4py": theirs, "problem": problem}
