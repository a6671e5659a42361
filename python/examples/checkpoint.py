"""Checkpoint and restart on a different number of ranks, through a plain
``.npy`` file.

``save`` makes a 3-D array in one layout and saves it; ``load`` reads it
back in another layout (any number of ranks), checks every element against
the same formula, and checks that ``numpy.load(path, mmap_mode='r')`` on
rank 0 sees the same global array::

    mpirun -n 4 python checkpoint.py save /dev/shm/ck.npy && mpirun -n 3 python checkpoint.py load /dev/shm/ck.npy
"""
import sys

import numpy as np
from mpi4py import MPI

import ndcyclic

SHAPE = (40, 27, 19)


def value(i, j, k):
    return 1e4 * i + 1e2 * j + k + 0.25


comm = MPI.COMM_WORLD
p = comm.size
p0, p1 = MPI.Compute_dims(p, 2)
if len(sys.argv) != 3 or sys.argv[1] not in ("save", "load"):
    sys.exit(f"usage: mpirun -n P python {sys.argv[0]} save|load PATH")
mode, path = sys.argv[1], sys.argv[2]

if mode == "save":
    layout = ndcyclic.Layout(SHAPE, f"block,cyclic(4),*@{p0}x{p1}x1")
    a = ndcyclic.from_function(comm, layout, value, dtype=np.float64)
    ndcyclic.save(a, path)
    if comm.rank == 0:
        print(f"checkpoint: ok (saved {'x'.join(map(str, SHAPE))} float64 laid out as {layout} "
              f"on {p} ranks to {path}: {ndcyclic.info(path)['file_bytes']} bytes)")
else:
    layout = ndcyclic.Layout(SHAPE, f"*,cyclic(5),block@1x{p0}x{p1}", order="F")
    a = ndcyclic.load(comm, path, layout)
    expected = value(*np.ix_(*layout.local_indices(comm.rank)))
    np.testing.assert_array_equal(a.local, expected)  # every element, on every rank
    whole = a.gather()
    if comm.rank == 0:
        on_disk = np.load(path, mmap_mode="r")
        np.testing.assert_array_equal(on_disk, np.fromfunction(value, SHAPE))
        np.testing.assert_array_equal(on_disk, whole)
        print(f"checkpoint: ok (loaded {path} as {layout}, order F, on {p} ranks; "
              f"every element checked, numpy.load(mmap_mode='r') agrees)")
