"""Tuning from Python: a Redistribution measures its admissible ways on
real arrays and runs the fastest; a wisdom file keeps it for later
Redistributions (the ``wisdom`` keyword); a wisdom file that does not fit
is a warning, the same on every rank, never an error."""


import numpy as np
import pytest
from mpi4py import MPI

import ndcyclic

comm = MPI.COMM_WORLD
P = comm.size


def layouts():
    rows = ndcyclic.Layout((512, 256), f"block,*@{P}x1")
    blocks = ndcyclic.Layout((512, 256), f"cyclic(8),cyclic(64)@{P}x1")
    return rows, blocks


def test_tuned_choices_run_and_are_remembered(wisdom):
    rows, blocks = layouts()
    a = ndcyclic.from_function(comm, rows, lambda i, j: 1000.0 * i + j)
    b = ndcyclic.DistArray.zeros(comm, blocks)
    r = ndcyclic.Redistribution(comm, rows, blocks)
    t = r.tune(a, b, warmups=1, reps=2, wisdom=wisdom)
    assert t["best_ms"] <= t["auto_ms"] and len(t["tried"]) >= 2 and t["executions"] > 0
    assert comm.allgather(t["best"]) == [t["best"]] * P
    r.execute(a, b)
    assert r.report()["measured_choice"] == t["best"]
    expected = np.fromfunction(lambda i, j: 1000.0 * i + j, (512, 256))
    g = b.gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(g, expected)
        assert open(wisdom).read().startswith("ndcyclic-wisdom 1")
    later = ndcyclic.Redistribution(comm, rows, blocks, dtype="float64", wisdom=wisdom)
    rep = later.report()
    assert rep["measured_choice"] == t["best"] and not rep["tries_routes"] and rep["warnings"] == []
    c = later.execute(a)
    gc = c.gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(gc, expected)


@pytest.mark.parametrize("content", [None, "garbage\n", "ndcyclic-wisdom 1\nnot\tan\tentry\n"])
def test_unfit_wisdom_is_a_warning_alike_on_every_rank(wisdom, content):
    if comm.rank == 0 and content is not None:
        with open(wisdom, "w") as f:
            f.write(content)
    comm.Barrier()
    rows, blocks = layouts()
    r = ndcyclic.Redistribution(comm, rows, blocks, dtype="float64", wisdom=wisdom)
    rep = r.report()
    assert rep["measured_choice"] is None and len(rep["warnings"]) == 1
    assert comm.allgather(rep["warnings"]) == [rep["warnings"]] * P
    a = ndcyclic.from_function(comm, rows, lambda i, j: i - 2.0 * j)
    g = r.execute(a).gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(g, np.fromfunction(lambda i, j: i - 2.0 * j, (512, 256)))


def test_tune_refuses_what_it_does_not_measure():
    rows, blocks = layouts()
    a = ndcyclic.from_function(comm, rows, lambda i, j: 1.0 * i)
    b = ndcyclic.DistArray.zeros(comm, blocks)
    r = ndcyclic.Redistribution(comm, rows, blocks, beta=1.0)
    with pytest.raises(ValueError) as e:
        r.tune(a, b)
    assert "whole-array" in str(e.value)


def test_ghost_ways_are_tuned_and_remembered(wisdom):
    layout = ndcyclic.Layout((8 * P + 3, 40), f"block,block@{P}x1")
    value = lambda i, j: 100.0 * i + j  # noqa: E731
    a = ndcyclic.from_function(comm, layout, value).with_ghosts(1)
    g = ndcyclic.GhostUpdate(a, periodic=True, wisdom="")
    t = g.tune(a, warmups=1, reps=2, wisdom=wisdom)
    assert t["best_ms"] <= t["default_ms"] and t["executions"] > 0
    assert len(t["tried"]) == (2 if P > 1 else 1)
    assert comm.allgather(t["best"]) == [t["best"]] * P
    # The ghosts are right after tuning, and after an update of the kept way.
    whole = np.fromfunction(value, layout.shape)
    for _ in range(2):
        lo = int(layout.local_indices(comm.rank)[0][0])
        rows = np.arange(lo - 1, lo + a.local.shape[0] + 1) % layout.shape[0]
        np.testing.assert_array_equal(a.padded[:, 1:-1], whole[rows])
        g.update(a)
    later = ndcyclic.GhostUpdate(a, periodic=True, wisdom=wisdom)
    assert later.warnings == []
    # A corrupt file: the rule decides, one warning alike on every rank.
    if comm.rank == 0:
        with open(wisdom, "w") as f:
            f.write("garbage\n")
    comm.Barrier()
    other = ndcyclic.GhostUpdate(a, periodic=True, wisdom=wisdom)
    assert len(other.warnings) == 1 and "not a wisdom file" in other.warnings[0]
    assert comm.allgather(other.warnings) == [other.warnings] * P
    other.update(a)


def test_batches_are_tuned_whole(wisdom):
    rows, blocks = layouts()
    a = [ndcyclic.from_function(comm, rows, lambda i, j, k=k: 1000.0 * i + j + 1e6 * k) for k in range(3)]
    b = [ndcyclic.DistArray.zeros(comm, blocks) for _ in range(3)]
    r = ndcyclic.Redistribution(comm, rows, blocks)
    t = r.tune(a, b, warmups=1, reps=2, wisdom=wisdom)
    assert t["best_ms"] <= t["auto_ms"] and len(t["tried"]) >= 2
    for k in range(3):
        g = b[k].gather()
        if comm.rank == 0:
            expected = np.fromfunction(lambda i, j: 1000.0 * i + j + 1e6 * k, (512, 256))
            np.testing.assert_array_equal(g, expected)
    later = ndcyclic.Redistribution(comm, rows, blocks, dtype="float64", wisdom=wisdom)
    assert later.report()["measured_choice"] == t["best"]
    # Unequal lists, or something else than arrays: refused on every rank.
    with pytest.raises(ValueError, match="as many targets as sources"):
        r.tune(a, b[:2])
    with pytest.raises(TypeError, match="DistArray or lists"):
        r.tune(a, [1, 2, 3])
