"""pytest under MPI: every rank runs the whole suite on ``MPI.COMM_WORLD``.

Run by ``scripts/test-python.sh`` as
``mpirun -n N .venv/bin/python -m pytest -q -x python/tests`` for N = 1-4;
plain ``python -m pytest python/tests`` runs it on one rank.

- Rank 0 reports. The other ranks' terminal output is discarded: their
  failures reach rank 0's report (below).
- The ranks agree on the outcome of each phase (setup, call, teardown) of
  each test: a phase that failed on any rank fails on every rank, and rank
  0's report carries the tracebacks (and captured output) of the ranks it
  failed on. So every rank runs the same tests and stops at the same one
  under ``-x``, and no rank is left in a collective that another rank will
  never enter.
- A rank whose phase failed waits at most ``NDCYCLIC_PYTEST_AGREE_TIMEOUT``
  seconds (default 60) for the others to finish the phase. When they do not
  (they wait in a collective the failing rank left), it prints its failure
  to stderr and aborts the job (``MPI_Abort``), which ends every rank: a
  failure never turns into a hang.
- The ranks must collect the same tests; when they do not, every rank exits
  before running any.
- A test must skip on every rank alike: make the condition depend on the
  number of ranks, not on the rank, e.g. at the top of a file
  ``pytestmark = pytest.mark.skipif(MPI.COMM_WORLD.size > 4, reason="...")``.
- Fixture ``comm``: ``MPI.COMM_WORLD``; fixture ``wisdom``: a wisdom file's
  path in ``/dev/shm``, the same on every rank, removed (with its lock)
  after the test.
"""

import os
import sys
import time
import zlib
from array import array

import pytest
from mpi4py import MPI

_world = MPI.COMM_WORLD
_rank = _world.Get_rank()
_size = _world.Get_size()
# The harness's own communicator: its agreements never match a collective
# of a test left running on another rank.
_agree = None
_quiet = None
_collect_failures = []


@pytest.fixture(scope="session")
def comm():
    """The communicator of every rank of the job."""
    return _world


@pytest.fixture
def wisdom():
    """A wisdom file's path, rank 0's on every rank; removed after the test."""
    import uuid

    name = _world.bcast(f"/dev/shm/ndcyclic-wisdom-{uuid.uuid4().hex}" if _rank == 0 else None)
    yield name
    _world.Barrier()
    if _rank == 0:
        for f in (name, name + ".lock"):
            if os.path.exists(f):
                os.remove(f)


def _agree_timeout():
    try:
        return float(os.environ.get("NDCYCLIC_PYTEST_AGREE_TIMEOUT", "60"))
    except ValueError:
        return 60.0


def _stderr(text):
    """Write text to fd 2, each line marked with the rank, in one write."""
    data = "".join(f"[rank {_rank}/{_size}] {line}\n" for line in text.splitlines())
    data = data.encode(errors="replace")
    while data:
        try:
            data = data[os.write(2, data) :]
        except OSError:
            return


def _abort(text):
    _stderr(text)
    _world.Abort(1)


def _describe(report):
    """A failed report as text: the traceback and the captured output."""
    text = report.longreprtext
    for title, content in report.sections:
        text += f"\n---- {title} ----\n{content}"
    return text


def _ranks(ranks):
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    global _agree, _quiet
    _agree = _world.Dup()
    if _rank != 0:
        # pytest's terminal reporter, made next, writes to sys.stdout as it
        # is now; pytest_sessionstart puts sys.stdout back for the tests.
        _quiet = (sys.stdout, open(os.devnull, "w"))
        sys.stdout = _quiet[1]


def pytest_sessionstart(session):
    if _quiet is not None and sys.stdout is _quiet[1]:
        sys.stdout = _quiet[0]


def pytest_unconfigure(config):
    global _agree
    if _agree is not None:
        _agree.Free()
        _agree = None


def pytest_collectreport(report):
    if report.failed:
        _collect_failures.append(f"{report.nodeid}\n{report.longreprtext}")


def pytest_collection_finish(session):
    nodeids = "\n".join(item.nodeid for item in session.items)
    mine = (len(session.items), zlib.crc32(nodeids.encode()), len(_collect_failures))
    try:
        everyone = _agree.allgather(mine)
    except BaseException as e:  # noqa: BLE001 - never leave the ranks apart
        _abort(f"conftest: agreeing on the collected tests failed: {e!r}")
    if all(x == everyone[0] for x in everyone):
        return
    for failure in _collect_failures:
        _stderr(f"collection error: {failure}")
    counts = ", ".join(f"rank {r}: {n} tests, {e} errors" for r, (n, _, e) in enumerate(everyone))
    pytest.exit(f"the ranks collected different tests ({counts})", returncode=3)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    try:
        _agree_on(report)
    except BaseException as e:  # noqa: BLE001 - never leave the ranks apart
        _abort(f"conftest: agreeing on {report.nodeid} ({report.when}) failed: {e!r}")


def _agree_on(report):
    """Fail the phase on every rank when it failed on any (see the top)."""
    failed = report.failed
    mine, count = array("i", [int(failed)]), array("i", [0])
    request = _agree.Iallreduce(mine, count, op=MPI.SUM)
    if failed:
        timeout = _agree_timeout()
        deadline = time.monotonic() + timeout
        while not request.Test():
            if time.monotonic() > deadline:
                _abort(
                    f"FAILED {report.nodeid} ({report.when}) on this rank, and the other ranks "
                    f"did not finish it within {timeout:g} s (they wait in a collective?): "
                    f"aborting the job\n{_describe(report)}"
                )
            time.sleep(0.001)
    else:
        request.Wait()
    if count[0] == 0:
        return
    texts = _agree.gather(_describe(report) if failed else None, root=0)
    report.outcome = "failed"
    if _rank != 0:
        if not failed:
            report.longrepr = "failed on another rank (see rank 0's report)"
        return
    groups = {}
    for r, text in enumerate(texts):
        if text is not None and r != 0:
            groups.setdefault(text, []).append(r)
    if failed:
        # Rank 0's own traceback stays; the other ranks' follow as sections.
        for text, ranks in groups.items():
            if text == texts[0]:
                report.sections.append((f"{_ranks(ranks)} of {_size}: failed the same way", ""))
            else:
                report.sections.append((f"{_ranks(ranks)} of {_size}: failed too", text))
    else:
        report.longrepr = "\n\n".join(
            f"==== failed on {_ranks(ranks)} of {_size} (passed on rank 0) ====\n{text}"
            for text, ranks in groups.items()
        )
