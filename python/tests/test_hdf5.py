"""HDF5 datasets from Python: what ndcyclic saves h5py reads, what h5py
writes ndcyclic loads into any layout, windows both ways, and refusals
agreed on every rank.

A build without HDF5 (``ndcyclic.build_info()["hdf5"]`` false) skips these
tests, unless ``NDCYCLIC_EXPECT_HDF5=1`` (``scripts/test-python.sh`` sets
it where parallel HDF5 is installed): then they fail, so that a build that
lost the feature cannot pass unnoticed. Such a build checks instead that
its refusal names the build switch.
"""

import importlib
import os
import uuid

import numpy as np
import pytest
from mpi4py import MPI

import ndcyclic

comm = MPI.COMM_WORLD
P = comm.size
BUILT = ndcyclic.build_info()["hdf5"]
EXPECTED = os.environ.get("NDCYCLIC_EXPECT_HDF5") == "1"

DTYPES = [np.float32, np.float64, np.complex64, np.complex128,
          np.int32, np.int64, np.uint8, np.uint32, np.uint64]

needs_hdf5 = pytest.mark.skipif(not BUILT and not EXPECTED,
                                reason="ndcyclic built without HDF5")


@pytest.fixture
def path():
    name = comm.bcast(f"/dev/shm/ndcyclic-py-{uuid.uuid4().hex}.h5" if comm.rank == 0 else None)
    yield name
    comm.Barrier()
    if comm.rank == 0:
        for f in (name, name + ".npy"):
            if os.path.exists(f):
                os.remove(f)


@pytest.fixture
def h5py():
    """h5py (a skip without it, a failure where HDF5 is expected); reached
    without HDF5 in the build only where it is expected: a failure."""
    if not BUILT:
        pytest.fail("ndcyclic was built without HDF5, but NDCYCLIC_EXPECT_HDF5=1 asks for it")
    return importlib.import_module("h5py") if EXPECTED else pytest.importorskip("h5py")


def values(shape, dtype):
    """A test array of every dtype: distinct values, complex parts apart."""
    n = np.arange(int(np.prod(shape))).reshape(shape)
    if np.issubdtype(dtype, np.complexfloating):
        return (n + 1j * (1000 - n)).astype(dtype)
    return (n % 251 if dtype == np.uint8 else n * 7 + 1).astype(dtype)


def on_root(f):
    """Runs ``f`` on rank 0; an exception there is raised on every rank."""
    error = None
    if comm.rank == 0:
        try:
            f()
        except Exception as e:  # noqa: BLE001 (raised again on every rank)
            error = repr(e)
    error = comm.bcast(error)
    if error is not None:
        raise AssertionError(f"on rank 0: {error}")


def agreed(e):
    """The message of ``e``, checked to be the same on every rank."""
    msgs = comm.allgather(str(e.value))
    assert all(m == msgs[0] for m in msgs), msgs
    return msgs[0]


@needs_hdf5
@pytest.mark.parametrize("dtype", DTYPES)
def test_saved_datasets_are_what_h5py_reads(h5py, path, dtype):
    shape = (7, 5)
    whole = values(shape, dtype)
    l = ndcyclic.Layout(shape, f"cyclic(3),block@{P}x1")
    a = ndcyclic.DistArray.scatter(comm, l, whole if comm.rank == 0 else None)
    ndcyclic.save(a, path, dataset="run/u")
    ndcyclic.save(a, path, dataset="/run/v")  # a second dataset of the same file

    def read():
        with h5py.File(path, "r") as f:
            for name in ("run/u", "run/v"):
                d = f[name]
                assert d.dtype == np.dtype(dtype) and d.shape == shape
                np.testing.assert_array_equal(d[...], whole)
                np.testing.assert_array_equal(d[1:6, 1:4], whole[1:6, 1:4])
                assert d.attrs["layout"] == str(l)
    on_root(read)
    i = ndcyclic.info(path, dataset="run/u")
    assert (i["format"], i["dtype"], i["shape"], i["layout"]) == ("h5", np.dtype(dtype).name, shape, str(l))
    b = ndcyclic.load(comm, path, f"block,cyclic@1x{P}", dataset="run/u")
    w = ndcyclic.load_window(comm, path, f"block,cyclic@1x{P}", (1, 1), (5, 3), dataset="run/u")
    g, gw = b.gather(), w.gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(g, whole)
        np.testing.assert_array_equal(gw, whole[1:6, 1:4])


@needs_hdf5
def test_column_major_arrays_save_as_c_order_datasets(h5py, path):
    shape = (6, 4, 3)
    whole = values(shape, np.float64)
    l = ndcyclic.Layout(shape, f"*,cyclic,block@1x{P}x1", order="F")
    a = ndcyclic.DistArray.scatter(comm, l, whole if comm.rank == 0 else None)
    ndcyclic.save(a, path)  # the default dataset, "data"

    def read():
        with h5py.File(path, "r") as f:
            np.testing.assert_array_equal(f["data"][...], whole)
    on_root(read)
    b = ndcyclic.load(comm, path, f"block,*,*@{P}x1x1", order="F")
    assert b.layout.order == "F"
    g = b.gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(g, whole)


@needs_hdf5
@pytest.mark.parametrize("dtype", DTYPES)
def test_h5py_datasets_load_into_any_layout(h5py, path, dtype):
    shape = (9, 6)
    whole = values(shape, dtype)

    def write():
        with h5py.File(path, "w") as f:
            f.create_dataset("a/b/x", data=whole)
            f.create_dataset("other", data=np.zeros(3, dtype=np.int16))
            f.create_group("g")
    on_root(write)
    comm.Barrier()
    a = ndcyclic.load(comm, path, f"block,cyclic@1x{P}", dataset="a/b/x")
    assert a.dtype == np.dtype(dtype) and a.shape == shape
    g = a.gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(g, whole)
    w = ndcyclic.load_window(comm, path, f"cyclic,*@{P}x1", (2, 1), (5, 4), dataset="a/b/x")
    gw = w.gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(gw, whole[2:7, 1:5])
    into = ndcyclic.DistArray.zeros(comm, ndcyclic.Layout(shape, f"cyclic(2),*@{P}x1"), dtype)
    ndcyclic.load_into(into, path, dataset="a/b/x")
    gi = into.gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(gi, whole)
    part = ndcyclic.DistArray.zeros(comm, ndcyclic.Layout((3, 2), f"block,*@{min(P, 3)}x1"), dtype)
    ndcyclic.load_into(part, path, (4, 3), dataset="a/b/x")
    gp = part.gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(gp, whole[4:7, 3:5])


@needs_hdf5
def test_float32_from_h5py_on_two_ranks_as_block_cyclic(h5py, path):
    """The issue's case: an h5py-written float32 dataset loaded on 2 ranks
    (a sub-communicator where there are more) into ``block,cyclic``; a
    window of it too."""
    shape = (10, 7)
    whole = (np.arange(70).reshape(shape) / 8).astype(np.float32)
    on_root(lambda: h5py.File(path, "w").create_dataset("u", data=whole).file.close())
    q = min(P, 2)
    sub = comm.Split(0 if comm.rank < q else MPI.UNDEFINED, comm.rank)
    if sub != MPI.COMM_NULL:
        a = ndcyclic.load(sub, path, f"block,cyclic@1x{q}", dataset="u")
        w = ndcyclic.load_window(sub, path, f"block,cyclic@1x{q}", (3, 2), (4, 5), dataset="u")
        g, gw = a.gather(), w.gather()
        if sub.rank == 0:
            np.testing.assert_array_equal(g, whole)
            np.testing.assert_array_equal(gw, whole[3:7, 2:7])
        sub.Free()
    comm.Barrier()


@needs_hdf5
def test_windows_write_into_h5py_datasets(h5py, path):
    shape = (8, 6)

    def write():
        with h5py.File(path, "w") as f:
            f.create_dataset("run/u", data=np.zeros(shape))
            f.create_dataset("keep", data=np.arange(4.0))
            f["run/u"].attrs["note"] = "kept"
    on_root(write)
    comm.Barrier()
    patch = ndcyclic.from_function(comm, ndcyclic.Layout((3, 4), f"cyclic,*@{min(P, 3)}x1"),
                                   lambda i, j: 1.0 + 10 * i + j)
    ndcyclic.save_window(patch, path, (4, 1), dataset="run/u")

    def read():
        with h5py.File(path, "r") as f:
            u = f["run/u"][...]
            expected = np.zeros(shape)
            expected[4:7, 1:5] = 1.0 + np.fromfunction(lambda i, j: 10 * i + j, (3, 4))
            np.testing.assert_array_equal(u, expected)
            np.testing.assert_array_equal(f["keep"][...], np.arange(4.0))
            assert f["run/u"].attrs["note"] == "kept"
    on_root(read)


@needs_hdf5
def test_compressed_h5py_datasets_load(h5py, path):
    whole = np.arange(600, dtype=np.int64).reshape(20, 30)

    def write():
        with h5py.File(path, "w") as f:
            f.create_dataset("z", data=whole, chunks=(5, 7), compression="gzip")
    on_root(write)
    a = ndcyclic.load(comm, path, f"cyclic(4),block@{P}x1", dataset="z")
    g = a.gather()
    if comm.rank == 0:
        np.testing.assert_array_equal(g, whole)


@needs_hdf5
def test_hdf5_refusals_are_agreed(h5py, path):
    def write():
        with h5py.File(path, "w") as f:
            f.create_dataset("run/3/u", data=np.zeros((4, 4)))
            f.create_dataset("run/3/w", data=np.zeros(4))
            f.create_dataset("half", data=np.zeros(4, dtype=np.float16))
            f.create_dataset("big", data=np.zeros(4, dtype=">f8"))
    on_root(write)
    comm.Barrier()
    with pytest.raises(ValueError) as e:
        ndcyclic.load(comm, path, f"block@{P}", dataset="run/3/v")
    m = agreed(e)
    assert "run/3/v" in m and "u" in m and "w" in m
    with pytest.raises(ValueError) as e:
        ndcyclic.load(comm, path, f"block@{P}", dataset="run")
    assert "group" in agreed(e)
    for name in ("half", "big"):
        with pytest.raises(ValueError) as e:
            ndcyclic.load(comm, path, f"block@{P}", dataset=name)
        agreed(e)
    with pytest.raises(TypeError) as e:
        ndcyclic.load(comm, path, f"block,*@{P}x1", dataset="run/3/u", dtype=np.float32)
    agreed(e)
    with pytest.raises(ValueError) as e:
        ndcyclic.load_window(comm, path, f"block,*@{P}x1", (2, 0), (3, 4), dataset="run/3/u")
    agreed(e)
    a = ndcyclic.from_function(comm, ndcyclic.Layout((4,), f"block@{min(P, 4)}"), lambda i: 1.0 * i)
    with pytest.raises(OSError) as e:  # dist-io's Write: found while writing
        ndcyclic.save(a, path, dataset="run/3/u/inside")  # through a dataset
    assert "not a group" in agreed(e)
    with pytest.raises(ValueError) as e:
        ndcyclic.save(a, path, format="npy", dataset="u")
    agreed(e)
    npy = path + ".npy"
    ndcyclic.save(a, npy)
    with pytest.raises(ValueError) as e:
        ndcyclic.load(comm, npy, f"block@{P}", format="h5", dataset="u")
    agreed(e)
    if P > 1:
        with pytest.raises(ValueError) as e:
            ndcyclic.save(a, path, dataset="u" if comm.rank == 0 else "v")
        assert "different arguments" in agreed(e)

    def untouched():
        with h5py.File(path, "r") as f:
            assert sorted(f) == ["big", "half", "run"] and sorted(f["run/3"]) == ["u", "w"]
    on_root(untouched)


@pytest.mark.skipif(BUILT, reason="a build with HDF5")
def test_a_build_without_hdf5_names_the_switch(path):
    if EXPECTED:
        pytest.fail("ndcyclic was built without HDF5, but NDCYCLIC_EXPECT_HDF5=1 asks for it")
    a = ndcyclic.from_function(comm, ndcyclic.Layout((4,), f"block@{min(P, 4)}"), lambda i: 1.0 * i)
    with pytest.raises(ValueError) as e:
        ndcyclic.save(a, path, dataset="u")
    m = agreed(e)
    assert "--features hdf5" in m and "HDF5_DIR" in m
