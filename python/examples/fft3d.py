"""A 3-D FFT on pencils, with numpy.fft along the whole axis at each stage.

The array moves through three pencil layouts on a p0 x p1 grid of ranks,
each with one axis whole on every rank::

    block,block,*@p0xp1x1  (axis 2 whole)  -> FFT along axis 2
    block,*,block@p0x1xp1  (axis 1 whole)  -> FFT along axis 1
    *,block,block@1xp0xp1  (axis 0 whole)  -> FFT along axis 0

and the result is checked against ``numpy.fft.fftn`` on rank 0. Any number
of ranks::

    mpirun -n 4 python python/examples/fft3d.py
"""
import numpy as np
from mpi4py import MPI

import ndcyclic

comm = MPI.COMM_WORLD
p0, p1 = sorted(MPI.Compute_dims(comm.size, 2))  # 1x2 on 2 ranks, 2x2 on 4
shape = (36, 30, 25)

z_whole = ndcyclic.Layout(shape, f"block,block,*@{p0}x{p1}x1")
y_whole = ndcyclic.Layout(shape, f"block,*,block@{p0}x1x{p1}")
x_whole = ndcyclic.Layout(shape, f"*,block,block@1x{p0}x{p1}")
z_to_y = ndcyclic.Redistribution(comm, z_whole, y_whole, dtype=np.complex128)
y_to_x = ndcyclic.Redistribution(comm, y_whole, x_whole, dtype=np.complex128)

rng = np.random.default_rng(7)
whole = rng.standard_normal(shape) + 1j * rng.standard_normal(shape) if comm.rank == 0 else None
a = ndcyclic.DistArray.scatter(comm, z_whole, whole)  # from rank 0's array

a.local[...] = np.fft.fft(a.local, axis=2)
b = z_to_y.execute(a)
b.local[...] = np.fft.fft(b.local, axis=1)
c = y_to_x.execute(b)
c.local[...] = np.fft.fft(c.local, axis=0)

result = c.gather()
if comm.rank == 0:
    expected = np.fft.fftn(whole)
    np.testing.assert_allclose(result, expected, rtol=0, atol=1e-10 * np.abs(expected).max())
    err = np.abs(result - expected).max() / np.abs(expected).max()
    print(f"fft3d: ok ({'x'.join(map(str, shape))} complex128 on a {p0}x{p1} grid of pencils; "
          f"max relative error {err:.1e})")
