"""Side-by-side benchmark: ndcyclic from Python against mpi4py-fft, a
hand-written ``comm.Alltoallv`` with numpy packing, and ndcyclic from Rust
(``redist run``).

Run it under MPI; rank 0 prints a table (and, with ``--json``, one JSON
object on one line as the last line of stdout)::

    mpirun -n 2 python -m ndcyclic.bench
    mpirun -n 4 python -m ndcyclic.bench --json --reps 9 --cases pencils

To put ``redist run`` (the Rust tool, ``target/release/redist``; build it
with ``cargo build --release -p redist-cli``) beside it, run the driver
*without* mpirun: it launches ``mpirun -n P python -m ndcyclic.bench --json``
and then ``mpirun -n P redist run ... --json`` for each case, one job after
the other, and prints the combined table with the ratios::

    python -m ndcyclic.bench --with-redist --ranks 2
    python -m ndcyclic.bench --with-redist --ranks 4 --redist /path/to/redist

A smoke check that finishes in seconds (tiny shapes, 2 repetitions, every
column that is available; exit status 0 when every result was verified)::

    mpirun -n 2 python -m ndcyclic.bench --quick --json
    python -m ndcyclic.bench --quick --json --with-redist --ranks 2

The cases (``--cases``, comma-separated; all by default):

``pencils``
    256³ float64 pencils, "axis 2 whole -> axis 1 whole":
    ``block,block,*@p0xp1x1 -> block,*,block@p0x1xp1`` with ``P = p0*p1``
    (1x2 on 2 ranks, 2x2 on 4). Columns: ``Redistribution.execute(a, b)``
    into a preallocated ``b``; mpi4py-fft's ``Pencil.transfer(...).forward``
    on the same pencils (skipped when mpi4py-fft is not installed or splits
    differently); ``comm.Alltoallv`` on the row sub-communicator with numpy
    packing into preallocated buffers; ``redist run`` (driver only). Every
    result is checked against the global formula before timing.
``cyclic``
    4096² float64 ``cyclic(64),cyclic(64)@1xP -> @Px1``: Python against
    ``redist run`` (the Python binding's overhead on a large move).
``cyclic-small``
    64² of the same with 200 repetitions, in µs per call: the per-call
    overhead (with 64-wide blocks the whole 64² array is rank 0's on both
    sides, so no message moves: only the call's own cost is measured).

Times: a warm-up of 8 executions (1, plus the up to 7 during which an
``"async"`` redistribution tries its two ways of routing messages, as
``redist run`` does), then ``--reps`` repetitions, each after a barrier
(one that yields the core while it waits where ranks outnumber cores),
each counted as the slowest rank's time; the median is reported. Ratios:
mpi4py-fft / ndcyclic-py and alltoallv-numpy / ndcyclic-py (above 1: the
alternative is slower), ndcyclic-py / redist-run (the binding's cost; 1 is
ideal).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np

WARMUP = 8
CASES = ("pencils", "cyclic", "cyclic-small")


# ----------------------------------------------------------------------------
# Arguments and the cases' sizes


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m ndcyclic.bench",
        description="Benchmark ndcyclic from Python against mpi4py-fft, "
        "comm.Alltoallv with numpy packing and redist run (Rust). Run under "
        "mpirun, or without it with --with-redist --ranks P.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Example: mpirun -n 2 python -m ndcyclic.bench --json\n"
        "         python -m ndcyclic.bench --with-redist --ranks 4",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object on one line (last line of stdout, rank 0)")
    p.add_argument("--reps", type=int, default=None, help="timed repetitions (default 11; 200 for cyclic-small; 2 with --quick)")
    p.add_argument("--cases", default=",".join(CASES), help=f"comma-separated cases among {', '.join(CASES)} (default: all)")
    p.add_argument("--quick", action="store_true", help="smoke check: tiny shapes, 2 repetitions, seconds")
    p.add_argument("--with-redist", action="store_true", help="driver: run without mpirun; launches the Python bench and redist run under mpirun -n RANKS and combines them")
    p.add_argument("--ranks", type=int, default=2, help="with --with-redist: the number of ranks (default 2)")
    p.add_argument("--redist", default=None, help="with --with-redist: the redist binary (default: target/release/redist of this checkout, or redist on PATH)")
    p.add_argument("--mpirun", default="mpirun", help="with --with-redist: the MPI launcher (default mpirun)")
    p.add_argument("--timeout", type=float, default=600, help="with --with-redist: seconds allowed to each launched job (default 600)")
    args = p.parse_args(argv)
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        p.error(f"unknown case(s) {unknown}: expected some of {list(CASES)}")
    args.cases = cases
    if args.reps is not None and args.reps < 1:
        p.error("--reps must be at least 1")
    return args


def pencil_grid(p):
    """``(p0, p1)`` with ``p0 * p1 == p`` and ``p0 <= p1`` as close as can be:
    1x2 for 2 ranks, 2x2 for 4, 1x3 for 3."""
    p0 = max(d for d in range(1, int(p**0.5) + 1) if p % d == 0)
    return p0, p // p0


def case_setups(ranks, quick, reps):
    """Each case's shape, source and target spec, dtype and repetitions."""
    p0, p1 = pencil_grid(ranks)
    n3 = 24 if quick else 256
    n2, nb = (256, 64) if quick else (4096, 64)
    big = 2 if quick else (reps or 11)
    small = 2 if quick else (reps or 200)
    return {
        "pencils": dict(
            shape=(n3, n3, n3),
            source=f"block,block,*@{p0}x{p1}x1",
            target=f"block,*,block@{p0}x1x{p1}",
            reps=big,
        ),
        "cyclic": dict(
            shape=(n2, n2),
            source=f"cyclic({nb}),cyclic({nb})@1x{ranks}",
            target=f"cyclic({nb}),cyclic({nb})@{ranks}x1",
            reps=big,
        ),
        "cyclic-small": dict(
            shape=(64, 64),
            source=f"cyclic({nb}),cyclic({nb})@1x{ranks}",
            target=f"cyclic({nb}),cyclic({nb})@{ranks}x1",
            reps=small,
        ),
    }


# ----------------------------------------------------------------------------
# Under mpirun: the Python columns


def oversubscribed():
    """Whether this node runs more of the job's ranks than it has cores."""
    for k in ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_LOCAL_SIZE"):
        if os.environ.get(k, "").strip().isdigit():
            return int(os.environ[k]) > (os.cpu_count() or 1)
    return False


def barrier(comm):
    """A barrier that, where ranks outnumber cores, yields the core while it
    waits: MPICH's blocking barrier spins, and a rank spinning there takes
    the core of a rank it waits for, so each timed repetition would start
    with the ranks milliseconds apart. Collective."""
    if not oversubscribed():
        comm.Barrier()
        return
    request = comm.Ibarrier()
    while not request.Test():
        os.sched_yield()


def timed(comm, f, reps, warmup=WARMUP):
    """Median over ``reps`` runs of ``f`` (after ``warmup`` untimed ones) of
    the slowest rank's seconds, each run after a barrier. Collective."""
    from mpi4py import MPI

    for _ in range(warmup):
        f()
    times = np.empty(reps)
    for i in range(reps):
        barrier(comm)
        t = MPI.Wtime()
        f()
        times[i] = MPI.Wtime() - t
    comm.Allreduce(MPI.IN_PLACE, times, op=MPI.MAX)
    return float(np.median(times))


def everywhere(comm, ok):
    """Whether ``ok`` holds on every rank. Collective."""
    from mpi4py import MPI

    return bool(comm.allreduce(bool(ok), op=MPI.LAND))


def formula(shape):
    """The value of each element: its row-major global position (exact in float64)."""
    strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]

    def f(*ix):
        return sum(np.asarray(i, dtype=np.float64) * s for i, s in zip(ix, strides))

    return f


def expected_local(layout, rank, f):
    return np.asarray(f(*np.ix_(*layout.local_indices(rank))), dtype=np.float64)


def ndcyclic_column(comm, setup):
    """Plans, checks and times ``Redistribution.execute(a, b)``; returns
    ``({ms, verified, strategy}, a, b, (source_layout, target_layout))``."""
    import ndcyclic

    shape = setup["shape"]
    la = ndcyclic.Layout(shape, setup["source"])
    lb = ndcyclic.Layout(shape, setup["target"])
    f = formula(shape)
    a = ndcyclic.from_function(comm, la, f, dtype=np.float64)
    b = ndcyclic.DistArray.zeros(comm, lb, np.float64)
    r = ndcyclic.Redistribution(comm, la, lb, dtype=np.float64)
    r.execute(a, b)
    ok = everywhere(comm, comm.rank >= lb.ranks or np.array_equal(b.local, expected_local(lb, comm.rank, f)))
    s = timed(comm, lambda: r.execute(a, b), setup["reps"])
    return dict(ms=s * 1e3, verified=ok, strategy=r.report()["strategy"]), a, b, (la, lb)


def mpi4py_fft_column(comm, setup, layouts, b):
    """mpi4py-fft's Pencil.transfer on the pencils: ``(ms or None, note, verified)``."""
    try:
        from mpi4py_fft.pencil import Pencil, Subcomm
    except ImportError as e:
        return None, f"skipped: mpi4py-fft is not installed ({e}; pip install mpi4py-fft)", None
    except Exception as e:  # noqa: BLE001 (installed but broken: the same on every rank)
        return None, f"skipped: mpi4py-fft does not import ({type(e).__name__}: {e})", None
    la, lb = layouts
    shape = setup["shape"]
    p0, p1 = la.grid[0], la.grid[1]
    subcomm = Subcomm(comm, [p0, p1, 1])
    pa = Pencil(subcomm, shape, axis=2)
    pb = pa.pencil(1)
    rank = comm.rank

    def same(pencil, layout):
        ix = layout.local_indices(rank)
        return tuple(pencil.subshape) == tuple(len(i) for i in ix) and all(
            len(i) == 0 or np.array_equal(i, np.arange(s, s + len(i))) for i, s in zip(ix, pencil.substart)
        )

    if not everywhere(comm, same(pa, la) and same(pb, lb)):
        subcomm.destroy()
        return None, "skipped: mpi4py-fft splits the pencils differently from ndcyclic's block layouts", None
    transfer = pa.transfer(pb, np.float64)
    f = formula(shape)
    array_a = np.ascontiguousarray(f(*np.ix_(*(np.arange(s, s + n) for s, n in zip(pa.substart, pa.subshape)))))
    array_b = np.zeros(pb.subshape, dtype=np.float64)
    transfer.forward(array_a, array_b)
    ok = everywhere(comm, np.array_equal(array_b, b.local))
    s = timed(comm, lambda: transfer.forward(array_a, array_b), setup["reps"])
    transfer.destroy()
    subcomm.destroy()
    return s * 1e3, "", ok


def alltoallv_column(comm, setup, layouts, a, b):
    """A hand-written Alltoallv on the row sub-communicator (the ranks that
    share a block of axis 0), packing with numpy into preallocated buffers:
    ``(ms, verified)``."""
    from mpi4py import MPI

    la, lb = layouts
    p1 = la.grid[1]
    rank = comm.rank
    # The grid is row-major: rank r sits at (r // p1, r % p1); the transpose
    # happens among the p1 ranks of one row.
    row = comm.Split(color=rank // p1, key=rank % p1)
    members = [(rank // p1) * p1 + j for j in range(p1)]

    def span(ix):  # a block layout's indices along one axis, as a slice
        return slice(int(ix[0]), int(ix[-1]) + 1) if len(ix) else slice(0, 0)

    src, dst = a.local, b.local
    n0, n1, _ = src.shape
    n2 = dst.shape[2]
    send_axis2 = [span(lb.local_indices(q)[2]) for q in members]  # what member j receives of axis 2
    recv_axis1 = [span(la.local_indices(q)[1]) for q in members]  # what member j sends of axis 1
    sendcounts = np.array([n0 * n1 * (s.stop - s.start) for s in send_axis2])
    recvcounts = np.array([n0 * (s.stop - s.start) * n2 for s in recv_axis1])
    senddispls = np.concatenate([[0], np.cumsum(sendcounts)[:-1]])
    recvdispls = np.concatenate([[0], np.cumsum(recvcounts)[:-1]])
    sendbuf = np.empty(sendcounts.sum(), dtype=np.float64)
    recvbuf = np.empty(recvcounts.sum(), dtype=np.float64)
    out = np.zeros_like(dst)

    def transpose():
        for j, s in enumerate(send_axis2):
            sendbuf[senddispls[j]:senddispls[j] + sendcounts[j]].reshape(n0, n1, s.stop - s.start)[...] = src[:, :, s]
        row.Alltoallv([sendbuf, (sendcounts, senddispls), MPI.DOUBLE],
                      [recvbuf, (recvcounts, recvdispls), MPI.DOUBLE])
        for j, s in enumerate(recv_axis1):
            out[:, s, :] = recvbuf[recvdispls[j]:recvdispls[j] + recvcounts[j]].reshape(n0, s.stop - s.start, n2)

    transpose()
    ok = everywhere(comm, np.array_equal(out, dst))
    s = timed(comm, transpose, setup["reps"])
    row.Free()
    return s * 1e3, ok


def run_under_mpi(args):
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    setups = case_setups(comm.size, args.quick, args.reps)
    results = {}
    for name in args.cases:
        setup = setups[name]
        res = dict(shape=list(setup["shape"]), source=setup["source"], target=setup["target"],
                   dtype="float64", reps=setup["reps"])
        nd, a, b, layouts = ndcyclic_column(comm, setup)
        res["ndcyclic_py_ms"] = nd["ms"]
        res["strategy"] = nd["strategy"]
        verified = {"ndcyclic_py": nd["verified"]}
        notes = {}
        if name == "pencils":
            ms, note, ok = mpi4py_fft_column(comm, setup, layouts, b)
            res["mpi4py_fft_ms"] = ms
            if note:
                notes["mpi4py_fft"] = note
            if ok is not None:
                verified["mpi4py_fft"] = ok
            ms, ok = alltoallv_column(comm, setup, layouts, a, b)
            res["alltoallv_numpy_ms"] = ms
            verified["alltoallv_numpy"] = ok
        res["verified"] = verified
        res["notes"] = notes
        del a, b
        results[name] = res
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    report = dict(ranks=comm.size, cores=cores, quick=args.quick, warmup=WARMUP, cases=results)
    if comm.rank == 0:
        print(table(report), flush=True)
        if args.json:
            print(json.dumps(report), flush=True)
    return 0 if all_verified(report) else 1


# ----------------------------------------------------------------------------
# Without mpirun: the driver


def default_redist():
    here = os.path.dirname(os.path.abspath(__file__))
    checkout = os.path.dirname(os.path.dirname(here))
    targets = [os.environ.get("CARGO_TARGET_DIR"), os.path.join(checkout, "target")]
    for t in targets:
        if t and os.access(os.path.join(t, "release", "redist"), os.X_OK):
            return os.path.join(t, "release", "redist")
    return shutil.which("redist")


def last_json(stdout):
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError("no JSON line in the output")


def launch(cmd, timeout):
    """Runs ``cmd``; its last JSON line, or raises with its output."""
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return last_json(done.stdout)


def run_driver(args):
    if "PMI_RANK" in os.environ or "OMPI_COMM_WORLD_RANK" in os.environ or "PMIX_RANK" in os.environ:
        print("--with-redist launches its own MPI jobs: run it without mpirun", file=sys.stderr)
        return 2
    ranks = args.ranks
    py = [args.mpirun, "-n", str(ranks), sys.executable, "-m", "ndcyclic.bench", "--json", "--cases", ",".join(args.cases)]
    if args.quick:
        py.append("--quick")
    if args.reps is not None:
        py += ["--reps", str(args.reps)]
    report = launch(py, args.timeout)
    status = 0 if all_verified(report) else 1
    redist = args.redist or default_redist()
    setups = case_setups(ranks, args.quick, args.reps)
    for name, res in report["cases"].items():
        setup = setups[name]
        if not redist:
            res["redist_run_ms"] = None
            res["notes"]["redist_run"] = "skipped: no redist binary (cargo build --release -p redist-cli, or --redist PATH)"
            continue
        cmd = [args.mpirun, "-n", str(ranks), redist, "run", "--shape", "x".join(map(str, setup["shape"])),
               "--from", setup["source"], "--to", setup["target"], "--type", "f64",
               "--reps", str(setup["reps"]), "--verify", "--json"]
        if name == "pencils":
            cmd += ["--baseline", "alltoallv"]
        try:
            out = launch(cmd, args.timeout)
        except (RuntimeError, ValueError, OSError, subprocess.TimeoutExpired) as e:
            res["redist_run_ms"] = None
            res["notes"]["redist_run"] = f"failed: {e}"
            status = 1
            continue
        res["redist_run_ms"] = out["exec_ms_median"]
        res["redist_strategy"] = out.get("strategy")
        res["verified"]["redist_run"] = out.get("verified")
        if out.get("verified") is False:
            status = 1
        if out.get("alltoallv_ms_median") is not None:
            res["mpi_alltoallv_prepacked_ms"] = out["alltoallv_ms_median"]
    report["redist"] = redist
    print(table(report), flush=True)
    if args.json:
        print(json.dumps(report), flush=True)
    return status


# ----------------------------------------------------------------------------
# The table


def ratio(x, y):
    return x / y if x is not None and y is not None and y > 0 else None


def add_ratios(res):
    nd = res.get("ndcyclic_py_ms")
    res["mpi4py_fft_over_ndcyclic_py"] = ratio(res.get("mpi4py_fft_ms"), nd)
    res["alltoallv_numpy_over_ndcyclic_py"] = ratio(res.get("alltoallv_numpy_ms"), nd)
    res["ndcyclic_py_over_redist_run"] = ratio(nd, res.get("redist_run_ms"))
    if nd is not None and res.get("redist_run_ms") is not None:
        res["ndcyclic_py_minus_redist_run_us"] = (nd - res["redist_run_ms"]) * 1e3


def all_verified(report):
    return all(v is not False for r in report["cases"].values() for v in r["verified"].values())


def table(report):
    columns = [
        ("ndcyclic_py_ms", "ndcyclic-py"),
        ("mpi4py_fft_ms", "mpi4py-fft"),
        ("alltoallv_numpy_ms", "alltoallv+numpy"),
        ("redist_run_ms", "redist-run"),
        ("mpi_alltoallv_prepacked_ms", "MPI_Alltoallv*"),
    ]
    shown = [(k, h) for k, h in columns if any(k in r for r in report["cases"].values())]
    ratios = [
        ("mpi4py_fft_over_ndcyclic_py", "fft/py"),
        ("alltoallv_numpy_over_ndcyclic_py", "a2av/py"),
        ("ndcyclic_py_over_redist_run", "py/rust"),
    ]
    for r in report["cases"].values():
        add_ratios(r)
    ratios = [(k, h) for k, h in ratios if any(r.get(k) is not None for r in report["cases"].values())]

    def t(ms, small):
        if ms is None:
            return "-"
        return f"{ms * 1e3:.1f} us" if small else f"{ms:.2f} ms"

    head = f"{'case':<13}{'shape':<12}{'layouts':<46}" + "".join(f"{h:>16}" for _, h in shown) + "".join(f"{h:>9}" for _, h in ratios)
    lines = [f"ndcyclic bench: {report['ranks']} ranks, median of the slowest rank's time per call "
             f"(warm-up {report['warmup']}){', QUICK' if report.get('quick') else ''}", head, "-" * len(head)]
    notes = []
    if report.get("cores") and report["ranks"] > report["cores"]:
        notes.append(f"OVERSUBSCRIBED: {report['ranks']} ranks on {report['cores']} cores: a call that waits for "
                     "every rank (a collective) waits for the scheduler's time slices (milliseconds)")
    for name, r in report["cases"].items():
        small = r.get("ndcyclic_py_ms", 1) is not None and r.get("ndcyclic_py_ms", 1) < 1.0
        shape = "x".join(map(str, r["shape"]))
        lay = f"{r['source']} -> {r['target'].split('@')[-1] if r['source'].split('@')[0] == r['target'].split('@')[0] else r['target']}"
        if len(lay) > 45:
            lay = lay[:44] + "~"
        line = f"{name:<13}{shape:<12}{lay:<46}" + "".join(f"{t(r.get(k), small):>16}" for k, _ in shown)
        line += "".join(f"{(format(r[k], '.2f') if r.get(k) is not None else '-'):>9}" for k, _ in ratios)
        lines.append(line)
        bad = [k for k, v in r["verified"].items() if v is False]
        if bad:
            notes.append(f"{name}: RESULT MISMATCH in {', '.join(bad)}")
        for k, v in r["notes"].items():
            notes.append(f"{name}: {k} {v}")
        if r.get("ndcyclic_py_minus_redist_run_us") is not None and small:
            notes.append(f"{name}: ndcyclic-py costs {r['ndcyclic_py_minus_redist_run_us']:+.1f} us per call more than redist run")
        if "strategy" in r:
            notes.append(f"{name}: {r['reps']} reps, ndcyclic strategy {r['strategy']}"
                         + (f" (redist run: {r['redist_strategy']})" if r.get("redist_strategy") else ""))
    if any("mpi_alltoallv_prepacked_ms" in r for r in report["cases"].values()):
        notes.append("MPI_Alltoallv*: redist run's bare MPI_Alltoallv of the same bytes on pre-packed buffers (no packing)")
    if not any("redist_run_ms" in r for r in report["cases"].values()):
        notes.append("redist-run: run `python -m ndcyclic.bench --with-redist --ranks P` (without mpirun) for the Rust column")
    return "\n".join(lines + [""] + notes)


def main(argv=None):
    args = parse_args(argv)
    if args.with_redist:
        return run_driver(args)
    return run_under_mpi(args)


if __name__ == "__main__":
    sys.exit(main())
