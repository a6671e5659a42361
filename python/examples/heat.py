"""The explicit heat equation u_t = Δu on the periodic unit square, the
5-point stencil in numpy slicing on each rank's padded block, one ghost
layer refreshed every step by a GhostUpdate planned once — overlapped: the
cells whose stencil needs no ghost are computed between ``begin`` and
``finish``, the rim after. It starts from the Fourier mode
sin(2πx)·sin(4πy), which each step multiplies by a known factor, and checks
the final field against that. Any number of ranks::

    mpirun -n 4 python python/examples/heat.py
    mpirun -n 2 python python/examples/heat.py --n 1024 --steps 200
"""
import argparse
import time

import numpy as np
from mpi4py import MPI

import ndcyclic

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--n", type=int, default=128, help="grid points per axis")
parser.add_argument("--steps", type=int, default=50)
parser.add_argument("--no-overlap", action="store_true", help="update the ghosts, then compute")
args = parser.parse_args()

comm = MPI.COMM_WORLD
n, steps = args.n, args.steps
px = max(d for d in range(1, int(comm.size ** 0.5) + 1) if comm.size % d == 0)
layout = ndcyclic.Layout((n, n), f"block,block@{comm.size // px}x{px}")
r = 0.125  # dt / h², stable up to 1/4
waves = (1, 2)


def mode(i, j):
    return np.sin(2 * np.pi * waves[0] * i / n) * np.sin(2 * np.pi * waves[1] * j / n)


u = ndcyclic.from_function(comm, layout, mode).with_ghosts(1)
v = ndcyclic.DistArray.zeros(comm, layout).with_ghosts(1)
ghosts = ndcyclic.GhostUpdate(u, periodic=True, corners="star")


def stencil(p, out, rows, cols):
    """out[rows, cols] of the padded block ``p`` (padded indices)."""
    c = p[rows, cols]
    north = p[rows.start - 1:rows.stop - 1, cols]
    south = p[rows.start + 1:rows.stop + 1, cols]
    west = p[rows, cols.start - 1:cols.stop - 1]
    east = p[rows, cols.start + 1:cols.stop + 1]
    out[rows, cols] = (1 - 4 * r) * c + r * (north + south + west + east)


m0, m1 = u.local.shape
inner, deep = (slice(1, m0 + 1), slice(1, m1 + 1)), (slice(2, m0), slice(2, m1))
rim = [(slice(1, 2), inner[1]), (slice(m0, m0 + 1), inner[1]),
       (slice(2, m0), slice(1, 2)), (slice(2, m0), slice(m1, m1 + 1))]
empty = m0 == 0 or m1 == 0
comm.Barrier()
start = time.perf_counter()
for _ in range(steps):
    if args.no_overlap:
        ghosts.update(u)
        if not empty:
            stencil(u.padded, v.padded, *inner)
    else:
        ghosts.begin(u)
        if not empty and m0 > 2 and m1 > 2:
            stencil(u.padded, v.padded, *deep)  # reads the interior only
        ghosts.finish(u)
        if not empty:
            for box in (rim if m0 > 2 and m1 > 2 else [inner]):
                stencil(u.padded, v.padded, *box)
    u, v = v, u
elapsed = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)

h = 1.0 / n
g = 1 - 4 * r * sum(np.sin(np.pi * m * h) ** 2 for m in waves)
exact = ndcyclic.from_function(comm, layout, lambda i, j: g ** steps * mode(i, j))
error = comm.allreduce(float(np.abs(u.local - exact.local).max(initial=0.0)), op=MPI.MAX) / abs(g ** steps)
ghost_bytes = comm.allreduce(ghosts.ghost_bytes)
assert error < 1e-12, f"relative error {error}"
if comm.rank == 0:
    print(f"heat: ok ({n}x{n} periodic, {steps} steps on {comm.size} ranks, "
          f"{'no overlap' if args.no_overlap else 'overlapped'}; relative error {error:.1e}; "
          f"{steps / elapsed:.1f} steps/s; {ghost_bytes} ghost bytes per step)")
