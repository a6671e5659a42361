"""Redistribution: random layouts against numpy, windows, transposes,
updates, batches, remaps, strategies, the report."""

import random

import numpy as np
import pytest
from mpi4py import MPI

import ndcyclic

comm = MPI.COMM_WORLD
P = comm.size


def factor_pairs(p):
    return [(a, p // a) for a in range(1, p + 1) if p % a == 0]


def random_spec(rng, ndim, p):
    """A random spec over p ranks (or fewer) for ndim dimensions."""
    grid = [1] * ndim
    ranks = rng.choice([q for q in range(1, p + 1)])
    grid[rng.randrange(ndim)] = ranks
    if ndim >= 2 and ranks >= 2:
        a, b = rng.choice(factor_pairs(ranks))
        d0, d1 = rng.sample(range(ndim), 2)
        grid = [1] * ndim
        grid[d0], grid[d1] = a, b
    dists = []
    for e in grid:
        choices = ["block", "cyclic", f"cyclic({rng.randint(1, 4)})"] + (["block+1"] if e >= 2 else [])
        if e == 1:
            choices.append("*")
        dists.append(rng.choice(choices))
    return ",".join(dists) + "@" + "x".join(map(str, grid))


def oracle(shape, dtype):
    g = np.arange(int(np.prod(shape))).reshape(shape)
    if np.issubdtype(dtype, np.complexfloating):
        return (g - 1j * g).astype(dtype)
    return g.astype(dtype)


@pytest.mark.parametrize("seed", range(12))
def test_random_redistributions_match_numpy(seed):
    rng = random.Random(seed * 7919 + P)
    ndim = rng.choice([1, 2, 3])
    shape = tuple(rng.randint(1, 9) for _ in range(ndim))
    dtype = rng.choice([np.float64, np.float32, np.complex128, np.int32, np.uint8])
    src = ndcyclic.Layout(shape, random_spec(rng, ndim, P), order=rng.choice("CF"))
    dst = ndcyclic.Layout(shape, random_spec(rng, ndim, P), order=rng.choice("CF"))
    strategy = rng.choice(["auto", "alltoallv", "scheduled", "async"])
    whole = oracle(shape, dtype)
    a = ndcyclic.DistArray.scatter(comm, src, whole if comm.rank == 0 else None)
    knobs = dict(node_direct=rng.random() < 0.7, streaming=rng.choice(["auto", "never", "always"]),
                 max_message_elements=rng.choice([None, 3, 1000]))
    r = ndcyclic.Redistribution(comm, src, dst, strategy=strategy, **knobs)
    b = r.execute(a)
    assert b.layout == dst
    c = ndcyclic.DistArray.zeros(comm, dst, dtype)
    for _ in range(2):
        r.execute(a, c)
    for x in (b, c):
        g = x.gather()
        if comm.rank == 0:
            assert g.dtype == np.dtype(dtype)
            np.testing.assert_array_equal(g, whole)


def test_one_plan_serves_every_dtype():
    rows = ndcyclic.Layout((5, 7), f"block,*@{P}x1")
    cols = ndcyclic.Layout((5, 7), f"*,cyclic(2)@1x{P}")
    r = ndcyclic.Redistribution(comm, rows, cols)
    for dtype in [np.float64, np.int64, np.complex64, np.uint32]:
        whole = oracle((5, 7), dtype)
        a = ndcyclic.DistArray.scatter(comm, rows, whole if comm.rank == 0 else None)
        g = r.execute(a).gather()
        if comm.rank == 0:
            np.testing.assert_array_equal(g, whole)


def test_window_moves_only_the_window():
    a_l = ndcyclic.Layout((9, 7), f"cyclic(2),*@{P}x1")
    b_l = ndcyclic.Layout((6, 8), f"*,block@1x{P}")
    r = ndcyclic.Redistribution(comm, a_l, b_l, window=((3, 1), (1, 2), (4, 5)))
    a = ndcyclic.from_function(comm, a_l, lambda i, j: 10.0 * i + j)
    b = ndcyclic.from_function(comm, b_l, lambda i, j: -1.0 + 0 * i * j)
    r.execute(a, b)
    g = b.gather()
    if comm.rank == 0:
        want = np.full((6, 8), -1.0)
        want[1:5, 2:7] = np.fromfunction(lambda i, j: 10.0 * i + j, (9, 7))[3:7, 1:6]
        np.testing.assert_array_equal(g, want)


def test_transpose_and_update():
    a_l = ndcyclic.Layout((4, 6), f"cyclic(2),*@{P}x1")
    c_l = ndcyclic.Layout((6, 4), f"block,*@{P}x1", order="F")
    r = ndcyclic.Redistribution(comm, a_l, c_l, permute=[1, 0], alpha=2.0, beta=3.0)
    a = ndcyclic.from_function(comm, a_l, lambda i, j: 10.0 * i + j)
    c = ndcyclic.from_function(comm, c_l, lambda i, j: np.ones(np.broadcast(i, j).shape))
    r.execute(a, c)
    g = c.gather()
    if comm.rank == 0:
        want = 3.0 + 2.0 * np.fromfunction(lambda i, j: 10.0 * i + j, (4, 6)).T
        np.testing.assert_array_equal(g, want)
    z_l = ndcyclic.Layout((3, 3), f"cyclic,*@{P}x1")
    rz = ndcyclic.Redistribution(comm, z_l, z_l, alpha=1j, conjugate=True)
    z = ndcyclic.from_function(comm, z_l, lambda i, j: i + 1j * j, dtype=np.complex128)
    g = rz.execute(z).gather()
    if comm.rank == 0:
        np.testing.assert_allclose(g, 1j * np.conj(np.fromfunction(lambda i, j: i + 1j * j, (3, 3))))
    with pytest.raises(TypeError):
        ndcyclic.Redistribution(comm, z_l, z_l, alpha=1j).execute(
            ndcyclic.DistArray.zeros(comm, z_l, np.float64))


def test_batch_is_one_exchange_of_many_arrays():
    rows = ndcyclic.Layout((8, 6), f"block,*@{P}x1")
    blocks = ndcyclic.Layout((8, 6), f"cyclic(2),cyclic(3)@{P}x1")
    r = ndcyclic.Redistribution(comm, rows, blocks, dtype=np.float64)
    srcs = [ndcyclic.from_function(comm, rows, lambda i, j, k=k: 100.0 * k + 10 * i + j) for k in range(3)]
    dsts = [ndcyclic.DistArray.zeros(comm, blocks) for _ in range(3)]
    r.execute_batch(srcs, dsts)
    for k, d in enumerate(dsts):
        g = d.gather()
        if comm.rank == 0:
            np.testing.assert_array_equal(g, np.fromfunction(lambda i, j: 100.0 * k + 10 * i + j, (8, 6)))
    with pytest.raises(ValueError):
        r.execute_batch(srcs, dsts[:2])


def test_remap_and_report():
    a_l = ndcyclic.Layout((12, 12), f"cyclic(2),*@{P}x1")
    b_l = ndcyclic.Layout((12, 12), f"cyclic(3),*@{P}x1")
    r = ndcyclic.Redistribution(comm, a_l, b_l, remap="optimal")
    t = r.target_layout
    assert t.shape == b_l.shape and t.spec == b_l.spec
    a = ndcyclic.from_function(comm, a_l, lambda i, j: 12 * i + j)
    b = r.execute(a)
    assert b.layout == t
    g = b.gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(g, np.arange(144).reshape(12, 12))
    if comm.rank == 0:
        assert r.report()["calls"] == 1  # local: one rank alone may ask
    fresh = ndcyclic.Redistribution(comm, a_l, b_l)
    if comm.rank == P - 1:
        assert fresh.report()["calls"] == 0  # nothing planned yet: no figures, no MPI
    rep = r.report()
    assert rep["calls"] == 1 and rep["elements"] == 144
    assert rep["elements_kept_local"] + rep["elements_moved"] == 144
    assert rep["ms_median"] > 0 and rep["strategy"] in ("async", "alltoallv", "scheduled", "combined")
    assert sum(comm.allgather(rep["elements_received"] + rep["elements_kept"])) == 144


def test_exchange_releases_the_gil():
    """Another Python thread runs while a (large) exchange moves data."""
    import threading
    import time

    n = 1024
    rows = ndcyclic.Layout((n, n), f"block,*@{P}x1")
    cols = ndcyclic.Layout((n, n), f"*,block@1x{P}")
    r = ndcyclic.Redistribution(comm, rows, cols, dtype=np.float64)
    a = ndcyclic.DistArray.zeros(comm, rows)
    b = ndcyclic.DistArray.zeros(comm, cols)
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0)

    th = threading.Thread(target=tick)
    th.start()
    try:
        while not ticks:
            time.sleep(0.001)
        start = time.perf_counter()
        for _ in range(30):  # collective: the same count on every rank
            r.execute(a, b)
        end = time.perf_counter()
    finally:
        stop.set()
        th.join()
    during = [t for t in ticks if start < t < end]
    assert len(during) > 0
