"""A job's grid chosen from Python: each candidate set up and timed on
whole steps, the fastest chosen on every rank and kept in a wisdom file a
later call reads instead of measuring; a Python exception in a step ends
the choosing on every rank."""

import time

import pytest
from mpi4py import MPI

import ndcyclic

comm = MPI.COMM_WORLD
P = comm.size


def test_grids_are_every_factorisation():
    assert ndcyclic.grids(4, 2) == [[2, 2], [4, 1], [1, 4]]
    assert ndcyclic.grids(7, 1) == [[7]]


def job_on(fast):
    """A job that redistributes blocks on ``grid`` into rows and checks them;
    every grid but ``fast`` pauses 30 ms a step."""

    def setup(grid):
        blocks = ndcyclic.Layout((37, 29), f"block,block@{grid[0]}x{grid[1]}")
        rows = ndcyclic.Layout((37, 29), f"cyclic(3),*@{P}x1")
        a = ndcyclic.from_function(comm, blocks, lambda i, j: 100.0 * i + j)
        r = ndcyclic.Redistribution(comm, blocks, rows)

        def step():
            b = r.execute(a)
            whole = b.gather()
            assert comm.rank != 0 or whole[36, 28] == 3628.0
            if tuple(grid) != tuple(fast):
                time.sleep(0.03)

        return step

    return setup


def test_the_fastest_grid_is_chosen_and_remembered(wisdom):
    candidates = ndcyclic.grids(P, 2)
    fast = tuple(candidates[-1])
    chosen = ndcyclic.choose_grid(comm, "python job", job_on(fast), warmups=1, reps=3, wisdom=wisdom)
    assert chosen["grid"] == fast
    assert not chosen["recalled"] and chosen["warnings"] == []
    assert len(chosen["tried"]) == len(candidates)
    assert chosen["steps"] == 4 * len(candidates)
    if len(candidates) > 1:
        assert chosen["ratio"] < 0.9
    assert comm.allgather(chosen["grid"]) == [fast] * P
    calls = []

    def counted(grid):
        calls.append(grid)
        return job_on(fast)(grid)

    again = ndcyclic.choose_grid(comm, "python job", counted, warmups=1, reps=3, wisdom=wisdom)
    assert again["recalled"] and again["grid"] == fast and calls == []


def test_a_failing_step_ends_it_on_every_rank():
    def setup(grid):
        inner = job_on(grid)(grid)

        def step():
            inner()
            if comm.rank == P - 1:
                raise ZeroDivisionError("the last rank's step")

        return step

    with pytest.raises(Exception) as raised:
        ndcyclic.choose_grid(comm, "failing", setup, warmups=1, reps=1)
    if comm.rank == P - 1:
        assert raised.type is ZeroDivisionError
    else:
        assert "rank" in str(raised.value)
