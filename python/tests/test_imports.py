"""ndcyclic works whichever of it and mpi4py is imported first, and never
starts or ends MPI itself (a fresh interpreter each, as a singleton: MPICH
runs one rank without mpirun)."""

import os
import subprocess
import sys

from mpi4py import MPI

PROGRAM = """
{first}
{second}
import numpy as np
comm = MPI.COMM_WORLD
a = ndcyclic.DistArray.zeros(comm, ndcyclic.Layout((4, 3), "block,*@1x1"), np.int32)
a.local[...] = 2
assert a.sum() == 24
assert MPI.Is_initialized() and not MPI.Is_finalized()
print("ok")
"""

ORDERS = [
    ("import ndcyclic", "from mpi4py import MPI"),
    ("from mpi4py import MPI", "import ndcyclic"),
    # MPI started at the funneled level: only the calling thread calls MPI
    # (the engine's rayon threads copy, never call MPI).
    ("import mpi4py; mpi4py.rc.thread_level = 'funneled'; from mpi4py import MPI",
     "import ndcyclic; assert MPI.Query_thread() == MPI.THREAD_FUNNELED\n"
     "l = ndcyclic.Layout((2048, 2048), 'block,*@1x1')\n"
     "r = ndcyclic.Redistribution(MPI.COMM_WORLD, l, ndcyclic.Layout((2048, 2048), '*,cyclic@1x1'))\n"
     "b = r.execute(ndcyclic.from_function(MPI.COMM_WORLD, l, lambda i, j: i + j, dtype='f8'))\n"
     "assert b.sum() == 2048 * 2047 * 2048"),
]


def singleton_env():
    """This environment without the launcher's variables."""
    launcher = ("PMI_", "PMIX_", "HYDRA_", "MPI_LOCAL", "OMPI_")
    return {k: v for k, v in os.environ.items() if not k.startswith(launcher)}


def test_either_import_order_works():
    if MPI.COMM_WORLD.rank != 0:
        return  # one rank starts the fresh interpreters; nothing collective here
    for first, second in ORDERS:
        out = subprocess.run(
            [sys.executable, "-c", PROGRAM.format(first=first, second=second)],
            env=singleton_env(), capture_output=True, text=True, timeout=120,
        )
        assert out.returncode == 0 and out.stdout.strip() == "ok", (first, out.stdout, out.stderr)
