"""What the build says of itself (``build_info``), and the check that
ndcyclic and mpi4py call one MPI library (``check_mpi``): the comparison as
a table, and this environment, which must pass it."""

import os
import subprocess

import pytest

import ndcyclic
from ndcyclic.mpi_check import compare

MPICH = {"mpi_library": "MPICH Version:\t4.0.2", "libmpi": "/usr/lib/x86_64-linux-gnu/libmpich.so.12.2.2"}
OPENMPI = {"mpi_library": "Open MPI v4.1.4, package: Debian OpenMPI", "libmpi": "/usr/lib/x86_64-linux-gnu/libmpi.so.40.30.2"}
UNKNOWN = {"mpi_library": "MPICH Version:\t4.0.2", "libmpi": None}


@pytest.mark.parametrize("ours, theirs, same", [
    (MPICH, MPICH, True),
    (MPICH, OPENMPI, False),
    (OPENMPI, MPICH, False),
    # The same version text from two files: two libraries all the same.
    (MPICH, dict(MPICH, libmpi="/opt/mpich/lib/libmpi.so.12"), False),
    # One file unknown: the version texts decide.
    (UNKNOWN, MPICH, True),
    (MPICH, UNKNOWN, True),
    (UNKNOWN, dict(OPENMPI, libmpi=None), False),
    ({"mpi_library": None, "libmpi": None}, {"mpi_library": None, "libmpi": None}, True),
])
def test_mpi_libraries_compare_by_file_then_version(ours, theirs, same):
    problem = compare(ours, theirs)
    assert (problem is None) == same
    if not same:
        assert problem.startswith("ndcyclic calls ") and ", but mpi4py calls " in problem
        for d in (ours, theirs):
            assert (d["libmpi"] or d["mpi_library"] or "") in problem


def test_this_environment_calls_one_mpi():
    r = ndcyclic.check_mpi()
    assert r["same"] and r["problem"] is None
    assert r["ndcyclic"] == r["mpi4py"]
    libmpi = r["ndcyclic"]["libmpi"]
    assert libmpi and os.path.isabs(libmpi) and "mpi" in os.path.basename(libmpi)
    # The loader agrees: the extension's own libmpi, as ldd resolves it.
    so = ndcyclic._ndcyclic.__file__
    ldd = subprocess.run(["ldd", so], capture_output=True, text=True).stdout
    found = [os.path.realpath(line.split("=>")[1].split()[0])
             for line in ldd.splitlines() if "libmpi" in line and "=>" in line]
    assert libmpi in found, (libmpi, ldd)


def test_a_mismatch_raises_saying_how_to_rebuild(monkeypatch):
    import ndcyclic.mpi_check as check
    monkeypatch.setattr(check, "_mpi4py_library", lambda: dict(OPENMPI))
    with pytest.raises(RuntimeError) as e:
        ndcyclic.check_mpi()
    assert "--no-binary=mpi4py" in str(e.value) and "Open MPI" in str(e.value)
    r = ndcyclic.check_mpi(raise_error=False)
    assert not r["same"] and r["mpi4py"] == OPENMPI and r["problem"]


def test_build_info_says_what_the_build_is():
    i = ndcyclic.build_info()
    assert i["version"] == ndcyclic.__version__
    assert isinstance(i["hdf5"], bool)
    assert i["mpi_library"] and i["mpi_library"].split()[0] in ("MPICH", "Open")
    if os.environ.get("NDCYCLIC_EXPECT_HDF5") == "1":
        assert i["hdf5"]
