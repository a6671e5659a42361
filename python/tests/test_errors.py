"""Errors: the same exception on every rank, also when only one rank's
arguments are wrong; never a hang."""

import numpy as np
import pytest
from mpi4py import MPI

import ndcyclic

comm = MPI.COMM_WORLD
P = comm.size
LAST = P - 1


def same_everywhere(excinfo):
    """The exception's class and message are the same on every rank."""
    mine = (type(excinfo.value).__name__, str(excinfo.value))
    everyone = comm.allgather(mine)
    assert all(e == everyone[0] for e in everyone), everyone
    return mine


def test_wrong_dtype_on_one_rank():
    l = ndcyclic.Layout((6, 4), f"block,*@{P}x1")
    shape = l.local_shape(comm.rank)
    local = np.zeros(shape, dtype=np.float32 if comm.rank == LAST else np.float64)
    if P == 1:
        local = np.zeros(shape, dtype=np.float16)
    with pytest.raises((TypeError, ValueError)) as e:
        ndcyclic.DistArray.from_local(comm, l, local)
    same_everywhere(e)


def test_unsupported_dtype_on_one_rank_is_a_type_error_everywhere():
    l = ndcyclic.Layout((6, 4), f"block,*@{P}x1")
    local = np.zeros(l.local_shape(comm.rank), dtype=np.bool_ if comm.rank == LAST else np.float64)
    with pytest.raises(TypeError) as e:
        ndcyclic.DistArray.from_local(comm, l, local)
    kind, message = same_everywhere(e)
    assert "bool" in message


def test_wrong_shape_on_one_rank():
    l = ndcyclic.Layout((6, 4), f"block,*@{P}x1")
    shape = l.local_shape(comm.rank)
    local = np.zeros((shape[0] + (comm.rank == LAST), shape[1]))
    with pytest.raises(ValueError) as e:
        ndcyclic.DistArray.from_local(comm, l, local)
    _, message = same_everywhere(e)
    assert f"rank {LAST}" in message


def test_wrong_memory_order_on_one_rank():
    l = ndcyclic.Layout((8, 4), f"block,*@{P}x1")
    rows = l.local_shape(comm.rank)[0]
    local = np.zeros((rows, 4))
    if comm.rank == LAST:
        local = np.zeros((rows, 8))[:, ::2]  # strided: not contiguous
    with pytest.raises(ValueError) as e:
        ndcyclic.DistArray.from_local(comm, l, local)
    _, message = same_everywhere(e)
    assert "contiguous" in message


def test_different_layouts_on_different_ranks():
    spec = f"block,*@{P}x1" if comm.rank != LAST else f"cyclic,*@{P}x1"
    if P == 1:
        pytest.skip("needs two ranks")
    with pytest.raises(ValueError) as e:
        ndcyclic.DistArray.zeros(comm, ndcyclic.Layout((6, 4), spec), np.float64)
    _, message = same_everywhere(e)
    assert "different arguments" in message


def test_execute_with_wrong_arrays():
    rows = ndcyclic.Layout((6, 4), f"block,*@{P}x1")
    cols = ndcyclic.Layout((6, 4), f"*,block@1x{P}")
    r = ndcyclic.Redistribution(comm, rows, cols)
    a = ndcyclic.DistArray.zeros(comm, rows, np.float64)
    wrong_type = ndcyclic.DistArray.zeros(comm, cols, np.float32)
    with pytest.raises(TypeError) as e:
        r.execute(a, wrong_type)
    same_everywhere(e)
    wrong_layout = ndcyclic.DistArray.zeros(comm, rows, np.float64)
    with pytest.raises(ValueError) as e:
        r.execute(a, wrong_layout)
    same_everywhere(e)
    b = ndcyclic.DistArray.zeros(comm, cols, np.float64)
    with pytest.raises(ValueError) as e:
        r.execute(a, a)  # a target that is also the source
    same_everywhere(e)
    if P > 1:
        # a dtype that differs on one rank only
        # arrays of a dtype that differs on one rank cannot even be made
        with pytest.raises(ValueError) as e:
            ndcyclic.DistArray.zeros(comm, rows, np.float32 if comm.rank == LAST else np.float64)
        same_everywhere(e)
    other = comm.Dup()
    with pytest.raises(ValueError) as e:
        ndcyclic.Redistribution(other, rows, cols).execute(a, b)
    _, message = same_everywhere(e)
    assert "another communicator" in message
    other.Free()
    r.execute(a, b)  # and the plan still works


def test_bad_redistribution_arguments():
    rows = ndcyclic.Layout((6, 4), f"block,*@{P}x1")
    other = ndcyclic.Layout((6, 5), f"block,*@{P}x1")
    with pytest.raises(ValueError) as e:
        ndcyclic.Redistribution(comm, rows, other)
    same_everywhere(e)
    with pytest.raises(ValueError) as e:
        ndcyclic.Redistribution(comm, rows, rows, strategy="fastest" if comm.rank == LAST else "auto")
    same_everywhere(e)
    with pytest.raises(ValueError) as e:
        ndcyclic.Redistribution(comm, rows, rows, streaming="sometimes")
    same_everywhere(e)
    with pytest.raises(TypeError) as e:
        ndcyclic.Redistribution(comm, rows, rows, alpha=2.0, dtype=np.int32)
    same_everywhere(e)
    big = ndcyclic.Layout((6, 4), f"block,*@{P + 1}x1")
    with pytest.raises(ValueError) as e:
        ndcyclic.Redistribution(comm, rows, big)
    same_everywhere(e)


def test_function_raising_on_one_rank():
    l = ndcyclic.Layout((6, 4), f"block,*@{P}x1")

    def f(i, j):
        if comm.rank == LAST:
            raise KeyError("only here")
        return i + j

    with pytest.raises(KeyError if P == 1 else Exception) as e:
        ndcyclic.from_function(comm, l, f)
    name = comm.allgather(type(e.value).__name__)
    assert all(n == "KeyError" for n in name)


def test_scatter_and_gather_misuse():
    l = ndcyclic.Layout((6, 4), f"block,*@{P}x1")
    with pytest.raises(ValueError) as e:
        ndcyclic.DistArray.scatter(comm, l, np.zeros((5, 4)) if comm.rank == 0 else None)
    same_everywhere(e)
    with pytest.raises(ValueError) as e:
        ndcyclic.DistArray.scatter(comm, l, None)
    same_everywhere(e)
    a = ndcyclic.DistArray.zeros(comm, l)
    with pytest.raises(ValueError) as e:
        a.gather(root=P)
    same_everywhere(e)
