#!/usr/bin/env python3
"""The suite's times, read from a log of its output.

    scripts/suite-times.py LOG [--top N] [--status S]

LOG is the output of the test suite with every line prefixed by the seconds
since the start (what `.ci/run` writes to target/suite/log, through
`scripts/stamp-lines.sh`). Prints, for every step of the suite, its compile
time and its run time, then the N (default 10) slowest test programs and MPI
launches, then one closing line with the tests passed and failed over the
whole suite (S, the suite's exit status, makes a failed run say so
even where no test runner counted the failure).

A step begins where its first line shows: `setup: ...` (scripts/setup.sh),
`test-NAME: ...` (scripts/test-NAME.sh), or, after a step that said it
ended (`setup: ready`, `test-NAME: passed in`), cargo's first line of a
command run bare (`cargo test`); `suite: step NAME` names one outright.
Inside a step, cargo's `Finished ... target(s) in ...` line ends a build
(its time is compile time); `Running ...` and `Doc-tests ...` lines start
test programs; the MPI harness's `test NAME np=K ... ok (T s)` lines are
launches. The closing line adds up libtest's `test result:` lines, the
scripts' `N passed, M failed` lines and pytest's summaries.
"""
import re
import sys

STEP = re.compile(r"^suite: step (\S+)")
PREFIX = re.compile(r"^(setup|test-[\w-]+): ")
ENDED = re.compile(r"^(setup: ready|test-[\w-]+: passed in)")
CARGO = re.compile(
    r"^\s*(Compiling|Downloaded|Downloading|Updating|Locking|Adding|Blocking|Finished|Running|Fresh|Building) "
)
FINISHED = re.compile(r"^\s*Finished `[^`]+` profile")
COMPILING = re.compile(r"^\s*(Compiling|Building|Checking) ")
PROGRAM = re.compile(r"^\s*(Running (?:unittests )?(\S+)|Doc-tests (\S+))")
LAUNCH = re.compile(r"^test (.+? np=\d+|\S+) \.\.\. (ok|FAILED) \(([\d.]+) s\)")
LIBTEST = re.compile(
    r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored"
)
SCRIPT_TALLY = re.compile(r"^(?:test-\w+: )?(\d+) passed, (\d+) failed")
PYTEST = re.compile(r"^=*\s*\d+ (passed|failed|skipped|errors?)\b.* in [\d.]+s")
PYTEST_COUNT = re.compile(r"(\d+) (passed|failed|errors?)\b")


class Step:
    def __init__(self, name, start):
        self.name = name
        self.start = start
        self.end = start
        self.compile_end = None  # the last `Finished` line of a build
        self.compile = 0.0
        self.last_build_start = None

    def add_compile(self, t, previous):
        """A `Finished` line at t: the time since the build began is compile
        time. A build that compiled nothing began at the line before
        (`previous`), or with the step if it is the step's first."""
        if self.last_build_start is not None:
            begin = self.last_build_start
        elif self.compile_end is None:
            begin = self.start
        else:
            begin = previous
        self.compile += max(0.0, t - begin)
        self.last_build_start = None
        self.compile_end = t


def step_name(text, current, ended):
    """The name of the step that `text` begins, or None if it continues one."""
    s = STEP.match(text)
    if s:
        return s.group(1)
    p = PREFIX.match(text)
    if p and (current is None or current.name != p.group(1)):
        return p.group(1)
    if CARGO.match(text) and (current is None or ended):
        return "cargo test"
    if current is None:
        return "suite"
    return None


def parse(lines):
    steps = []
    programs = []  # (seconds, name)
    launches = []  # (seconds, name)
    passed = failed = 0
    current = None
    program = None  # (start, name)
    ended = False
    last_t = 0.0
    for raw in lines:
        m = re.match(r"^\s*([\d.]+) (.*)$", raw.rstrip("\n"))
        if not m:
            continue
        t, text = float(m.group(1)), m.group(2)
        previous = last_t
        last_t = t
        name = step_name(text, current, ended)
        if name:
            if program:
                programs.append((t - program[0], program[1]))
                program = None
            if current:
                current.end = t
            current = Step(name, t)
            steps.append(current)
            ended = False
            if STEP.match(text):
                continue
        current.end = t
        if ENDED.match(text):
            ended = True
        if COMPILING.match(text) and current.last_build_start is None:
            # A build began (a test program may build examples: its own time).
            current.last_build_start = t if program is None else None
            if program is None:
                continue
        if FINISHED.match(text):
            if program is None:
                current.add_compile(t, previous)
            previous = t
            continue
        p = PROGRAM.match(text)
        if p:
            if program:
                programs.append((t - program[0], program[1]))
            name = p.group(2) or ("doc tests of " + p.group(3))
            program = (t, f"{current.name}: {name}")
            continue
        lm = LAUNCH.match(text)
        if lm:
            launches.append((float(lm.group(3)), f"{current.name}: {lm.group(1)}"))
        r = LIBTEST.match(text)
        if r:
            passed += int(r.group(2))
            failed += int(r.group(3))
            continue
        st = SCRIPT_TALLY.match(text)
        if st:
            passed += int(st.group(1))
            failed += int(st.group(2))
            continue
        if PYTEST.match(text):
            for n, what in PYTEST_COUNT.findall(text):
                if what == "passed":
                    passed += int(n)
                else:
                    failed += int(n)
    if program:
        programs.append((last_t - program[0], program[1]))
    if current:
        current.end = last_t
    return steps, programs, launches, passed, failed


def minutes(s):
    return f"{s:7.0f} s" if s < 120 else f"{s:7.0f} s ({s / 60:.1f} min)"


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    top = 10
    if "--top" in argv:
        top = int(argv[argv.index("--top") + 1])
    status = 0
    if "--status" in argv:
        status = int(argv[argv.index("--status") + 1])
    with open(argv[1], encoding="utf-8", errors="replace") as f:
        steps, programs, launches, passed, failed = parse(f)
    total = sum(s.end - s.start for s in steps)
    print()
    print("suite times (seconds)")
    print(f"| {'step':<24} | {'compile':>8} | {'run':>8} | {'total':>8} |")
    print(f"|{'-' * 26}|{'-' * 10}|{'-' * 10}|{'-' * 10}|")
    for s in steps:
        whole = s.end - s.start
        print(
            f"| {s.name:<24} | {s.compile:8.0f} | {whole - s.compile:8.0f} | {whole:8.0f} |"
        )
    comp = sum(s.compile for s in steps)
    print(f"| {'whole suite':<24} | {comp:8.0f} | {total - comp:8.0f} | {total:8.0f} |")
    print()
    print(f"the {top} slowest test programs")
    for secs, name in sorted(programs, reverse=True)[:top]:
        print(f"  {secs:7.1f} s  {name}")
    print(f"the {top} slowest MPI launches")
    for secs, name in sorted(launches, reverse=True)[:top]:
        print(f"  {secs:7.1f} s  {name}")
    print(f"{len(launches)} MPI launches in all, {sum(x for x, _ in launches):.0f} s")
    print()
    if status != 0:
        last = steps[-1].name if steps else "?"
        print(f"the suite stopped with exit status {status} in step {last}")
        failed = max(failed, 1)
    print(f"suite: {passed} passed, {failed} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
