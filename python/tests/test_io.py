"""save / load / load_window / load_into / info: numpy reads what we write,
any layout and any rank count reads it back, refusals are agreed."""

import os
import uuid

import numpy as np
import pytest
from mpi4py import MPI

import ndcyclic

comm = MPI.COMM_WORLD
P = comm.size


@pytest.fixture
def path():
    name = comm.bcast(f"/dev/shm/ndcyclic-py-{uuid.uuid4().hex}.npy" if comm.rank == 0 else None)
    yield name
    comm.Barrier()
    if comm.rank == 0 and os.path.exists(name):
        os.remove(name)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.int32, np.uint8])
@pytest.mark.parametrize("order", "CF")
def test_save_is_what_numpy_loads_and_loads_back_anywhere(path, dtype, order):
    shape = (7, 5, 3)
    l = ndcyclic.Layout(shape, f"cyclic(2),*,*@{P}x1x1", order=order)
    whole = (np.arange(105).reshape(shape) % 200).astype(dtype)
    a = ndcyclic.DistArray.scatter(comm, l, whole if comm.rank == 0 else None)
    ndcyclic.save(a, path)
    if comm.rank == 0:
        m = np.load(path, mmap_mode="r")
        assert m.dtype == np.dtype(dtype) and m.shape == shape
        assert m.flags["F_CONTIGUOUS" if order == "F" else "C_CONTIGUOUS"]
        np.testing.assert_array_equal(m, whole)
    i = ndcyclic.info(path)
    assert i["shape"] == shape and i["dtype"] == np.dtype(dtype).name and i["order"] == order
    b = ndcyclic.load(comm, path, f"*,block,cyclic@1x1x{P}")
    assert b.dtype == np.dtype(dtype) and b.layout.order == order
    g = b.gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(g, whole)
    c = ndcyclic.load(comm, path, ndcyclic.Layout(shape, "block,*,*@1x1x1", order="C"))
    assert c.layout.order == "C"
    w = ndcyclic.load_window(comm, path, f"cyclic,*,*@{P}x1x1", (2, 0, 1), (4, 5, 1))
    gw = w.gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(gw, whole[2:6, 0:5, 1:2])
    into = ndcyclic.DistArray.zeros(comm, l, dtype)
    ndcyclic.load_into(into, path)
    assert (into.local == a.local).all()


def test_numpy_files_load_and_windows_write(path):
    if comm.rank == 0:
        np.save(path, np.arange(24, dtype=np.int64).reshape(4, 6))
    comm.Barrier()
    a = ndcyclic.load(comm, path, f"block,*@{P}x1", dtype=np.int64)
    assert a.sum() == sum(range(24))
    patch = ndcyclic.from_function(comm, ndcyclic.Layout((2, 2), f"cyclic,*@{min(P, 2)}x1"),
                                   lambda i, j: -1 + 0 * (i + j), dtype=np.int64)
    ndcyclic.save_window(patch, path, (1, 3))
    if comm.rank == 0:
        m = np.load(path)
        assert (m[1:3, 3:5] == -1).all() and m[0, 0] == 0 and m[3, 5] == 23


def test_refusals_are_agreed(path):
    with pytest.raises(FileNotFoundError) as e:
        ndcyclic.load(comm, path + ".missing", f"block@{P}")
    msgs = comm.allgather(str(e.value))
    assert all(m == msgs[0] for m in msgs) and ".missing" in msgs[0]
    a = ndcyclic.from_function(comm, ndcyclic.Layout((6,), f"block@{P}"), lambda i: i * 1.0)
    ndcyclic.save(a, path)
    with pytest.raises(TypeError):
        ndcyclic.load(comm, path, f"block@{P}", dtype=np.float32)
    with pytest.raises(ValueError):
        ndcyclic.load(comm, path, f"block,*@{P}x1")  # 2-D layout, 1-D file
    with pytest.raises(ValueError) as e:
        ndcyclic.load(comm, path, ndcyclic.Layout((7,), f"block@{P}"))  # a Layout of another shape
    assert "(7,)" in str(e.value) or "[7]" in str(e.value)
    with pytest.raises(ValueError):
        ndcyclic.load_window(comm, path, f"block@{P}", (4,), (3,))
    wrong = ndcyclic.DistArray.zeros(comm, ndcyclic.Layout((6,), f"block@{P}"), np.int32)
    with pytest.raises(ValueError):
        ndcyclic.load_into(wrong, path)
    if comm.rank == 0:
        with open(path, "r+b") as f:
            f.truncate(100)
    comm.Barrier()
    with pytest.raises(ValueError) as e:
        ndcyclic.load(comm, path, f"block@{P}")
    msgs = comm.allgather(str(e.value))
    assert all(m == msgs[0] for m in msgs)
    if P > 1:
        other = comm.bcast(path + ".other.npy" if comm.rank == 0 else None)
        name = other if comm.rank == P - 1 else path
        with pytest.raises(ValueError) as e:
            ndcyclic.save(a, name)
        assert "different arguments" in str(e.value)
    with pytest.raises(OSError):
        ndcyclic.save(a, "/nonexistent-folder/x.npy")


def test_checkpoint_on_these_ranks_loads_on_fewer(path):
    """Saved by every rank, loaded by a sub-communicator of fewer ranks."""
    shape = (9, 4, 5)
    l = ndcyclic.Layout(shape, f"*,*,cyclic@1x1x{P}")
    a = ndcyclic.from_function(comm, l, lambda i, j, k: 100 * i + 10 * j + k, dtype=np.int64)
    ndcyclic.save(a, path)
    q = max(1, P - 1)
    sub = comm.Split(0 if comm.rank < q else MPI.UNDEFINED, comm.rank)
    if sub != MPI.COMM_NULL:
        b = ndcyclic.load(sub, path, f"cyclic(2),*,*@{q}x1x1")
        g = b.gather()
        if sub.rank == 0:
            np.testing.assert_array_equal(g, np.fromfunction(lambda i, j, k: 100 * i + 10 * j + k, shape))
        sub.Free()
    comm.Barrier()
