"""The benchmark's smoke run: every column it can run computes the right
result (mpi4py-fft's too, when installed), and the report has its shape."""

import contextlib
import io
import json

from mpi4py import MPI

from ndcyclic import bench

comm = MPI.COMM_WORLD


def test_quick_bench_verifies_every_column():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = bench.main(["--quick", "--json"])
    assert status == 0
    if comm.rank != 0:
        return
    lines = out.getvalue().strip().splitlines()
    report = json.loads(lines[-1])
    assert report["ranks"] == comm.size
    assert set(report["cases"]) == {"pencils", "cyclic", "cyclic-small"}
    pencils = report["cases"]["pencils"]
    assert pencils["verified"]["ndcyclic_py"] and pencils["verified"]["alltoallv_numpy"]
    assert pencils["ndcyclic_py_ms"] > 0 and pencils["alltoallv_numpy_ms"] > 0
    try:
        import mpi4py_fft  # noqa: F401
    except ImportError:
        assert pencils["mpi4py_fft_ms"] is None
    else:
        if "mpi4py_fft" not in pencils["notes"]:
            assert pencils["verified"]["mpi4py_fft"] and pencils["mpi4py_fft_ms"] > 0
    assert "ndcyclic-py" in out.getvalue()
