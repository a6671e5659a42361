"""Ghost updates from Python: random layouts, widths, periodic axes and
corners checked cell by cell against numpy's wrap-around indexing of the
whole array; views without copies; begin/finish; errors alike on every rank."""

import random

import numpy as np
import pytest
from mpi4py import MPI

import ndcyclic

comm = MPI.COMM_WORLD
P = comm.size


def grids(p, ndim):
    """Every grid of ndim extents whose product is p."""
    if ndim == 1:
        return [(p,)]
    return [(a,) + g for a in range(1, p + 1) if p % a == 0 for g in grids(p // a, ndim - 1)]


def expected_padded(whole, layout, rank, widths, periodic, corners, sentinel):
    """What the padded block of ``rank`` holds after an update, from the
    whole array alone: numpy's wrap-around indexing along periodic axes."""
    idx = layout.local_indices(rank)
    local = [len(i) for i in idx]
    if 0 in local:
        return None
    axes = []
    for d, (i, w) in enumerate(zip(idx, widths)):
        lo = int(i[0])
        g = np.arange(lo - w, lo + len(i) + w)
        g[w:w + len(i)] = i
        axes.append(g)
    out = np.full([len(a) for a in axes], sentinel, dtype=whole.dtype)
    for p in np.ndindex(*out.shape):
        g, ghosts, outside = [], 0, False
        for d, x in enumerate(p):
            inside = widths[d] <= x < widths[d] + local[d]
            ghosts += not inside
            gi = axes[d][x]
            if not 0 <= gi < whole.shape[d]:
                if not periodic[d]:
                    outside = True
                gi %= whole.shape[d]
            g.append(gi)
        if outside or (corners == "star" and ghosts > 1):
            continue
        out[p] = whole[tuple(g)]
    return out


@pytest.mark.parametrize("seed", range(10))
def test_random_updates_match_numpy(seed):
    rng = random.Random(seed * 131 + P)
    ndim = rng.choice([1, 2, 3])
    grid = rng.choice(grids(P, ndim))
    shape = tuple(rng.randint(1, 7) * e + rng.randint(0, 2) for e in grid)
    dists = ["block" if e > 1 or rng.random() < 0.5 else "*" for e in grid]
    spec = ",".join(dists) + "@" + "x".join(map(str, grid))
    widths = tuple(rng.randint(0, min(2, n)) for n in shape)
    periodic = tuple(rng.random() < 0.6 for _ in shape)
    corners = rng.choice(["box", "star"])
    dtype = rng.choice([np.float64, np.int32, np.complex128, np.uint8])
    layout = ndcyclic.Layout(shape, spec, order=rng.choice("CF"))
    whole = (np.arange(int(np.prod(shape))).reshape(shape) % 200 + 1).astype(dtype)
    a = ndcyclic.DistArray.scatter(comm, layout, whole if comm.rank == 0 else None).with_ghosts(widths)
    a.padded[...] = 0
    a.local[...] = whole[np.ix_(*layout.local_indices(comm.rank))] if comm.rank < layout.ranks else 0
    g = ndcyclic.GhostUpdate(a, periodic=periodic, corners=corners, node_direct=rng.random() < 0.7)
    g.update(a)
    if comm.rank < layout.ranks:
        want = expected_padded(whole, layout, comm.rank, widths, periodic, corners, 0)
        if want is not None:
            np.testing.assert_array_equal(a.padded, want, err_msg=f"{spec} {widths} {periodic} {corners}")


def test_views_share_the_padded_storage():
    layout = ndcyclic.Layout((4 * P, 6), f"block,*@{P}x1")
    a = ndcyclic.DistArray.zeros(comm, layout).with_ghosts((1, 2))
    assert a.ghosts == (1, 2)
    assert a.padded.shape == (6, 10) and a.local.shape == (4, 6)
    assert np.shares_memory(a.local, a.padded)
    a.local[...] = 3.0
    assert a.padded[1:-1, 2:-2].sum() == 72.0 and a.padded.sum() == 72.0
    assert a.sum() == 72.0 * P  # reductions see the interior only


def test_begin_finish_with_work_between():
    layout = ndcyclic.Layout((3 * P, 8), f"block,block@{P}x1")
    whole = np.arange(3 * P * 8, dtype=np.float64).reshape(3 * P, 8)
    a = ndcyclic.DistArray.scatter(comm, layout, whole if comm.rank == 0 else None).with_ghosts(1)
    g = ndcyclic.GhostUpdate(a, corners="star")
    g.begin(a)
    interior = a.local.sum()  # reading the interior while ghosts move
    g.finish(a)
    assert interior == a.local.sum()
    lo = 3 * comm.rank
    np.testing.assert_array_equal(a.padded[0, 1:-1], whole[(lo - 1) % (3 * P)])
    np.testing.assert_array_equal(a.padded[-1, 1:-1], whole[(lo + 3) % (3 * P)])


def test_bad_arguments_raise_on_every_rank():
    layout = ndcyclic.Layout((4 * P, 6), f"block,block@{P}x1")
    a = ndcyclic.DistArray.zeros(comm, layout).with_ghosts(1)
    with pytest.raises(ValueError, match="corners"):
        ndcyclic.GhostUpdate(a, corners="round")
    with pytest.raises(ValueError, match="periodic"):
        ndcyclic.GhostUpdate(a, periodic=(True,))
    if P > 1:
        # One rank passes other flags: every rank raises.
        with pytest.raises(ValueError):
            ndcyclic.GhostUpdate(a, periodic=(comm.rank != P - 1, True))
    g = ndcyclic.GhostUpdate(a)
    # One rank hands in an array of other widths: every rank raises, none hangs.
    other = ndcyclic.DistArray.zeros(comm, layout).with_ghosts((1, 0))
    with pytest.raises(ValueError):
        g.update(other if comm.rank == P - 1 else a)
    with pytest.raises(TypeError):
        g.update(ndcyclic.DistArray.zeros(comm, layout, dtype=np.int32).with_ghosts(1))
    g.update(a)  # and the update still works
    if P > 1:
        cyclic = ndcyclic.DistArray.zeros(comm, ndcyclic.Layout((4 * P, 6), f"cyclic,block@{P}x1")).with_ghosts(1)
        with pytest.raises(ValueError, match="one block per rank"):
            ndcyclic.GhostUpdate(cyclic)
