"""A ScaLAPACK-style block-cyclic matrix, its distributed transpose and a
PDTRAN-like update ``C := beta*C + alpha*A^T``.

The m x n matrix is distributed ``cyclic(nb),cyclic(nb)`` on a pr x pc grid
of ranks (row-major, as BLACS's default), each local part stored
column-major (``order="F"``), exactly as ScaLAPACK's descriptor
``(m, n, nb, nb, 0, 0)`` would have it: its shape is NUMROC's and its
local-to-global map INDXL2G's. Any number of ranks::

    mpirun -n 4 python python/examples/scalapack_matrix.py
"""
import numpy as np
from mpi4py import MPI

import ndcyclic


def numroc(n, nb, iproc, nprocs):
    """ScaLAPACK's NUMROC (first process 0): rows or columns of a process."""
    nblocks = n // nb
    count = (nblocks // nprocs) * nb
    extra = nblocks % nprocs
    return count + (nb if iproc < extra else n % nb if iproc == extra else 0)


def indxl2g(local, nb, iproc, nprocs):
    """ScaLAPACK's INDXL2G, 0-based: global index of local index ``local``."""
    return nprocs * nb * (local // nb) + local % nb + iproc * nb


comm = MPI.COMM_WORLD
rank = comm.rank
pr, pc = MPI.Compute_dims(comm.size, 2)
myrow, mycol = divmod(rank, pc)
m, n, nb = 150, 97, 16

blocks = ndcyclic.Layout((m, n), f"cyclic({nb}),cyclic({nb})@{pr}x{pc}", order="F")
blocks_t = ndcyclic.Layout((n, m), f"cyclic({nb}),cyclic({nb})@{pr}x{pc}", order="F")

rng = np.random.default_rng(1)
A_whole = rng.standard_normal((m, n)) if rank == 0 else None
C_whole = rng.standard_normal((n, m)) if rank == 0 else None
A = ndcyclic.DistArray.scatter(comm, blocks, A_whole)
C = ndcyclic.DistArray.scatter(comm, blocks_t, C_whole)

# Each local part is what ScaLAPACK would hold: NUMROC's shape, column-major,
# and the global matrix at INDXL2G's rows and columns.
rows, cols = blocks.local_indices(rank)
assert A.local.shape == (numroc(m, nb, myrow, pr), numroc(n, nb, mycol, pc))
assert A.local.flags.f_contiguous
np.testing.assert_array_equal(rows, indxl2g(np.arange(len(rows)), nb, myrow, pr))
np.testing.assert_array_equal(cols, indxl2g(np.arange(len(cols)), nb, mycol, pc))
A_bcast = comm.bcast(A_whole)
np.testing.assert_array_equal(A.local, A_bcast[np.ix_(rows, cols)])

# The distributed transpose B = A^T (PDTRAN with alpha=1, beta=0)...
transpose = ndcyclic.Redistribution(comm, blocks, blocks_t, permute=[1, 0])
B = transpose.execute(A)
# ...and an update in place, C := -1*C + 2*A^T (PDTRAN with alpha=2, beta=-1).
update = ndcyclic.Redistribution(comm, blocks, blocks_t, permute=[1, 0], alpha=2.0, beta=-1.0)
update.execute(A, C)

B_whole, C_new = B.gather(), C.gather()
if rank == 0:
    np.testing.assert_array_equal(B_whole, A_whole.T)
    np.testing.assert_allclose(C_new, -C_whole + 2.0 * A_whole.T, rtol=1e-15, atol=1e-15)
    print(f"scalapack_matrix: ok ({m}x{n} in {nb}x{nb} blocks on a {pr}x{pc} grid, column-major "
          f"local parts as NUMROC/INDXL2G; transpose and C = 2*A^T - C checked)")
