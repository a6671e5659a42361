"""The examples of python/examples run and check their own results at this
launch's rank count (scripts/test-python.sh also runs the checkpoint saved
on 4 ranks and loaded on 3)."""

import os
import pathlib
import runpy
import sys
import uuid

import pytest
from mpi4py import MPI

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"
comm = MPI.COMM_WORLD


def run(name, *args):
    argv = sys.argv
    sys.argv = [str(EXAMPLES / name), *args]
    try:
        runpy.run_path(str(EXAMPLES / name), run_name="__main__")
    finally:
        sys.argv = argv


@pytest.mark.parametrize("name", ["fft2d.py", "fft3d.py", "scalapack_matrix.py", "heat.py"])
def test_example_checks_itself(name):
    run(name)


def test_checkpoint_saves_and_loads():
    path = comm.bcast(f"/dev/shm/ndcyclic-ck-{uuid.uuid4().hex}.npy" if comm.rank == 0 else None)
    try:
        run("checkpoint.py", "save", path)
        run("checkpoint.py", "load", path)
    finally:
        comm.Barrier()
        if comm.rank == 0 and os.path.exists(path):
            os.remove(path)


def test_every_example_is_tested():
    here = {p.name for p in EXAMPLES.glob("*.py")}
    assert here == {"fft2d.py", "fft3d.py", "scalapack_matrix.py", "checkpoint.py", "heat.py"}


def test_heat_without_overlap():
    run("heat.py", "--n", "40", "--steps", "7", "--no-overlap")
