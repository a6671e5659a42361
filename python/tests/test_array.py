"""DistArray: making, viewing, gathering, scattering, reducing, on every dtype."""

import numpy as np
import pytest
from mpi4py import MPI

import ndcyclic

DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.int32, np.int64,
          np.uint8, np.uint32, np.uint64]

comm = MPI.COMM_WORLD
P = comm.size


def layouts(shape=(7, 5)):
    """Layouts over every rank and over fewer, C and F."""
    out = [
        ndcyclic.Layout(shape, f"cyclic(2),*@{P}x1"),
        ndcyclic.Layout(shape, f"*,block@1x{P}", order="F"),
        ndcyclic.Layout(shape, "cyclic,cyclic@1x1"),
    ]
    if P >= 2:
        out.append(ndcyclic.Layout(shape, f"block,cyclic(3)@{P // 2}x2"))
    if P >= 3:
        out.append(ndcyclic.Layout(shape, "cyclic,block@2x1", rank_map=[1, 0]))
    return out


def values(shape, dtype):
    g = np.arange(int(np.prod(shape))).reshape(shape)
    if np.issubdtype(dtype, np.complexfloating):
        return (g + 1j * (g % 3)).astype(dtype)
    return (g % 251).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_from_function_gather_scatter_round_trip(dtype):
    for l in layouts():
        whole = values(l.shape, dtype)
        a = ndcyclic.from_function(comm, l, lambda i, j: whole[i, j], dtype=dtype)
        assert a.dtype == np.dtype(dtype) and a.layout == l and a.shape == l.shape
        local = a.local
        expected_shape = l.local_shape(comm.rank) if comm.rank < l.ranks else (0, 0)
        assert local.shape == tuple(expected_shape)
        if comm.rank < l.ranks:
            assert (local == whole[np.ix_(*l.local_indices(comm.rank))]).all()
        assert local.flags["C_CONTIGUOUS" if l.order == "C" else "F_CONTIGUOUS"]
        g = a.gather(root=P - 1)
        if comm.rank == P - 1:
            assert g.dtype == np.dtype(dtype) and (g == whole).all()
        else:
            assert g is None
        s = ndcyclic.DistArray.scatter(comm, l, whole if comm.rank == 0 else None)
        assert s.dtype == np.dtype(dtype)
        assert (s.local == a.local).all()


def test_local_is_a_view_and_from_local_does_not_copy():
    l = ndcyclic.Layout((9, 4), f"cyclic(2),*@{P}x1")
    a = ndcyclic.DistArray.zeros(comm, l, np.float64)
    v = a.local
    v[...] = comm.rank + 1
    assert np.shares_memory(a.local, v)
    assert a.sum() == sum((r + 1) * np.prod(l.local_shape(r)) for r in range(P))
    mine = np.full(l.local_shape(comm.rank), 2.0)
    b = ndcyclic.DistArray.from_local(comm, l, mine)
    assert np.shares_memory(b.local, mine)
    mine[...] = 3.0  # seen by the array
    assert b.sum() == 3.0 * 36
    del mine  # the array keeps the memory alive
    assert b.sum() == 3.0 * 36
    fl = l.with_order("F")
    mine_f = np.asfortranarray(np.ones(fl.local_shape(comm.rank), dtype=np.complex64))
    c = ndcyclic.DistArray.from_local(comm, fl, mine_f)
    assert np.shares_memory(c.local, mine_f)
    assert c.sum() == 36


def test_reductions():
    l = ndcyclic.Layout((6, 5), f"block,*@{P}x1")
    a = ndcyclic.from_function(comm, l, lambda i, j: (i - 3.0) * (j + 1), dtype=np.float64)
    whole = np.fromfunction(lambda i, j: (i - 3.0) * (j + 1), (6, 5))
    assert a.sum() == pytest.approx(whole.sum())
    assert a.max_abs() == pytest.approx(np.abs(whole).max())
    assert a.norm() == pytest.approx(np.linalg.norm(whole))
    u = ndcyclic.from_function(comm, l, lambda i, j: np.full(np.broadcast(i, j).shape, 200), dtype=np.uint8)
    assert u.sum() == 200 * 30  # summed without overflow
    z = ndcyclic.from_function(comm, l, lambda i, j: 1j * i + j, dtype=np.complex128)
    assert z.sum() == pytest.approx(complex(np.fromfunction(lambda i, j: j, (6, 5)).sum(),
                                            np.fromfunction(lambda i, j: i, (6, 5)).sum()))


def test_copy_owns_its_memory():
    l = ndcyclic.Layout((4, 4), f"block,*@{P}x1")
    a = ndcyclic.from_function(comm, l, lambda i, j: i + j, dtype=np.int32)
    b = a.copy()
    b.local[...] = 0
    assert a.sum() == 48 and b.sum() == 0
    assert not np.shares_memory(a.local, b.local) or a.local.size == 0


def test_communicators_split_and_cartesian():
    half = comm.Split(comm.rank % 2, comm.rank)
    l = ndcyclic.Layout((5, 3), f"cyclic,*@{half.size}x1")
    a = ndcyclic.from_function(half, l, lambda i, j: i * 3 + j + comm.rank % 2, dtype=np.int64)
    assert a.sum() == sum(range(15)) + 15 * (comm.rank % 2)
    assert a.comm is half
    cart = comm.Create_cart([P], periods=[False])
    b = ndcyclic.DistArray.zeros(cart, ndcyclic.Layout((4,), f"block@{P}"), "f4")
    assert b.dtype == np.float32
    half.Free()
    assert a.sum() == sum(range(15)) + 15 * (comm.rank % 2)  # still works: its own duplicate
    cart.Free()


def test_unsupported_dtype_is_a_type_error():
    l = ndcyclic.Layout((4, 4), f"block,*@{P}x1")
    for bad in [np.bool_, np.float16, ">f8", object]:
        with pytest.raises(TypeError):
            ndcyclic.DistArray.zeros(comm, l, bad)
    with pytest.raises(TypeError):
        ndcyclic.DistArray.zeros("not a communicator", l, np.float64)
