"""A 2-D FFT of an N x M complex array with numpy.fft on each rank's local part.

Rows whole (``block,*``): FFT along axis 1; redistribute to columns whole
(``*,block``): FFT along axis 0. The result is checked against
``numpy.fft.fft2`` of the gathered input on rank 0. Any number of ranks::

    mpirun -n 4 python python/examples/fft2d.py
"""
import numpy as np
from mpi4py import MPI

import ndcyclic

comm = MPI.COMM_WORLD
p = comm.size
N, M = 90, 77  # on purpose not divisible by most rank counts

rows = ndcyclic.Layout((N, M), f"block,*@{p}x1")  # each rank: some whole rows
cols = ndcyclic.Layout((N, M), f"*,block@1x{p}")  # each rank: some whole columns
to_cols = ndcyclic.Redistribution(comm, rows, cols, dtype=np.complex128)

x = ndcyclic.from_function(comm, rows, lambda i, j: np.cos(0.1 * i * j) + 1j * np.sin(0.3 * i + j), dtype=np.complex128)
original = x.gather()  # the whole input on rank 0, for the check

x.local[...] = np.fft.fft(x.local, axis=1)  # rows are whole here
y = to_cols.execute(x)                      # a new array laid out as `cols`
y.local[...] = np.fft.fft(y.local, axis=0)  # columns are whole here

result = y.gather()
if comm.rank == 0:
    expected = np.fft.fft2(original)
    np.testing.assert_allclose(result, expected, rtol=0, atol=1e-10 * np.abs(expected).max())
    err = np.abs(result - expected).max() / np.abs(expected).max()
    print(f"fft2d: ok ({N}x{M} complex128 on {p} ranks, rows -> columns; max relative error {err:.1e})")
