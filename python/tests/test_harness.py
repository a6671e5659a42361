"""The test harness itself (conftest.py): the ranks run together, and a
failure on some ranks fails the job on all of them instead of hanging it."""

import os
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
from mpi4py import MPI


def test_ranks_agree_on_size(comm):
    assert comm.allgather(comm.size) == [comm.size] * comm.size


def test_ranks_are_distinct(comm):
    assert sorted(comm.allgather(comm.rank)) == list(range(comm.size))


def test_allreduce(comm):
    assert comm.allreduce(comm.rank + 1) == comm.size * (comm.size + 1) // 2


def test_mpi_is_mpich():
    assert "MPICH" in MPI.Get_library_version()


def test_ndcyclic_imports():
    import ndcyclic  # noqa: F401


# A suite whose test fails on rank 1 only: in `test_fails_apart` the other
# ranks pass on; in `test_fails_in_collective` they wait in a barrier that
# rank 1 never enters.
_INNER = '''
import time
from mpi4py import MPI

def test_fails_apart(comm):
    assert comm.rank != 1, "rank 1 fails"

def test_after(comm):
    comm.barrier()

def test_fails_in_collective(comm):
    if comm.rank == 1:
        raise RuntimeError("rank 1 fails before the barrier")
    comm.barrier()
'''


def _launch(tmp_path, ranks, select, timeout=60):
    """Runs _INNER's tests named in `select` under `mpirun -n ranks`, with this
    directory's conftest.py, in a job of its own."""
    shutil.copy(os.path.join(os.path.dirname(__file__), "conftest.py"), tmp_path)
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(_INNER))
    # The launcher of this job must not take the inner job for its own.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "MPI_LOCAL", "HYDI_"))}
    env["NDCYCLIC_PYTEST_AGREE_TIMEOUT"] = "3"
    command = [os.environ.get("NDCYCLIC_MPIRUN", "mpirun"), "-n", str(ranks), sys.executable]
    command += ["-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
    command += [f"{tmp_path / 'test_inner.py'}::{name}" for name in select]
    for attempt in range(3):
        start = time.monotonic()
        run = subprocess.run(
            command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=timeout
        )
        # A launch that printed nothing at all never ran pytest (the launcher
        # failed to start the job: seen once in CI on a loaded machine, exit
        # status 1 and no output); launch again rather than judge the harness.
        if run.stdout or run.stderr:
            break
        time.sleep(1)
    return run, time.monotonic() - start


# A job of its own, started once (from the suite's one-rank launch).
needs_one_rank = pytest.mark.skipif(MPI.COMM_WORLD.size != 1, reason="launches its own 2-rank jobs")


@needs_one_rank
def test_failure_on_one_rank_fails_all(tmp_path):
    run, _ = _launch(tmp_path, 2, ["test_fails_apart", "test_after"])
    output = run.stdout + run.stderr
    assert run.returncode == 1, output
    # Rank 0 passed but reports rank 1's failure, and -x stopped every rank
    # before test_after. Rank 1 reports nothing.
    summary = run.stdout.strip().splitlines()[-1]
    assert summary.startswith("1 failed") and "passed" not in summary, output
    assert run.stdout.count("1 failed") == 1, output
    assert "failed on rank 1 of 2 (passed on rank 0)" in run.stdout, output
    assert "AssertionError: rank 1 fails" in run.stdout, output


@needs_one_rank
def test_failure_before_a_collective_aborts(tmp_path):
    run, seconds = _launch(tmp_path, 2, ["test_fails_in_collective"])
    output = run.stdout + run.stderr
    assert run.returncode != 0, output
    # Rank 1 waited 3 s (NDCYCLIC_PYTEST_AGREE_TIMEOUT) for rank 0, which
    # waits in the barrier, then printed its failure and aborted the job.
    assert "[rank 1/2] FAILED" in run.stderr and "aborting the job" in run.stderr, output
    assert "RuntimeError: rank 1 fails before the barrier" in run.stderr, output
    assert seconds < 30, f"{seconds:.0f} s\n{output}"
