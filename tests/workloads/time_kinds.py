"""time_kinds.py - one thread cycles through phases that spend their time
in different places, and measures each phase's truth: wall time
(time.perf_counter) and the thread's own user and system CPU time
(resource.getrusage(RUSAGE_THREAD)).

Phases (each a function with one hot line marked '# HOT <name>'):
  py_loop      pure Python arithmetic: user time, all Python
  hash_blocks  hashlib.sha256 over 1 MiB buffers: native (drops the GIL)
  sort_list    list.sort() of 50,000 strings: native (keeps the GIL); the
               seconds its bytecode spends copying and freeing the list
               are measured apart ("bytecode")
  compress     zlib.compress: native
  read_file    os.pread of 1 MiB from a cached file: mostly system time
  sleep_phase  time.sleep: off CPU (only with --sleep)
  grow_memory  appends fresh 64 KiB bytearrays to a list it keeps: memory
               growth on one known line (only with --grow MIB)
  page_in      reads one byte per page of a file mapping whose pages it has
               just dropped from the page cache: major faults (only with
               --page-in MIB)

Rounds of --phase-ms per phase keep the mix stationary, so any window of a
second or two sees the same shares as the whole run.

Truth (JSON, see workload_common.write_truth):
  phases: {qualname: {wall, user, sys, file, line, hot_line[, bytecode]}}
  grown:  bytes kept by grow_memory
  cpu_wait_share: of the main thread's runnable time over the rounds, the
          share it waited in the run queue for a CPU (schedstat)
"""
import time

T0 = time.perf_counter()

import hashlib  # noqa: E402
import mmap  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import zlib  # noqa: E402

import workload_common as wc  # noqa: E402

perf_counter = time.perf_counter
thread_time = time.thread_time
BLOCK = bytes(range(256)) * 4096                 # 1 MiB
TEXT = b"".join(b"line %d of some log text\n" % i for i in range(12000))
# Strings compare slowly and copying the list only copies pointers, so the
# phase is the sort (ints would make the copy's reference counting, a cache
# miss per object, as long as the sort itself).
_R = random.Random(7)
WORDS = ["%016x" % _R.getrandbits(64) for _ in range(50000)]
KEPT = []


def py_loop(budget):
    x = 1.0
    deadline = perf_counter() + budget
    while perf_counter() < deadline:
        for _ in range(200):
            x = (x * 1.000001 + 0.25) % 977.0  # HOT py_loop
    return x


def hash_blocks(budget):
    deadline = perf_counter() + budget
    while perf_counter() < deadline:
        hashlib.sha256(BLOCK).digest()  # HOT hash_blocks


def sort_list(budget, bytecode):
    # Sorting a copy in place.  Copying the list and freeing the previous
    # copy are done by bytecode (BINARY_SLICE, STORE_FAST), not by a call:
    # timed apart (bytecode[0]) so the truth can leave them out.  Timed in
    # the thread's CPU time, as the truth's user time is: on a busy machine
    # wall time would add the waits for a CPU.
    deadline = perf_counter() + budget
    work = None
    while perf_counter() < deadline:
        t0 = thread_time()
        work = None
        work = WORDS[:]
        bytecode[0] += thread_time() - t0
        work.sort()  # HOT sort_list


def compress(budget):
    deadline = perf_counter() + budget
    while perf_counter() < deadline:
        zlib.compress(TEXT, 6)  # HOT compress


def read_file(budget, fd):
    deadline = perf_counter() + budget
    while perf_counter() < deadline:
        os.pread(fd, 1 << 20, 0)  # HOT read_file


def sleep_phase(budget):
    deadline = perf_counter() + budget
    while perf_counter() < deadline:
        time.sleep(0.01)  # HOT sleep_phase


def grow_memory(budget, limit):
    deadline = perf_counter() + budget
    while perf_counter() < deadline and len(KEPT) * 65536 < limit:
        KEPT.append(bytearray(65536))  # HOT grow_memory
    while perf_counter() < deadline:
        time.sleep(0.001)


class PagedFile:
    """A file mapping whose pages can be pushed out of memory again."""

    def __init__(self, mib):
        self.size = int(mib * 1024 * 1024)
        fd, path = tempfile.mkstemp(prefix="pytop-pages-", dir="/var/tmp")
        os.unlink(path)
        chunk = b"x" * (1 << 20)
        for _ in range(self.size >> 20):
            os.write(fd, chunk)
        os.fsync(fd)  # clean pages can be dropped
        self.fd = fd
        self.map = mmap.mmap(fd, self.size, prot=mmap.PROT_READ)
        self.evict()

    def evict(self):
        self.map.madvise(mmap.MADV_DONTNEED)
        os.posix_fadvise(self.fd, 0, self.size, os.POSIX_FADV_DONTNEED)


def page_in(budget, paged):
    deadline = perf_counter() + budget
    page = mmap.PAGESIZE
    m = paged.map
    while perf_counter() < deadline:
        for at in range(0, paged.size, page):
            m[at]  # HOT page_in
        paged.evict()


def hot_line(fn):
    """Line number of the '# HOT <name>' comment in fn's source file."""
    marker = "# HOT " + fn.__name__
    with open(fn.__code__.co_filename) as f:
        for number, text in enumerate(f, start=1):
            if text.rstrip().endswith(marker):
                return number
    return None


def thread_cpu():
    r = resource.getrusage(resource.RUSAGE_THREAD)
    return r.ru_utime, r.ru_stime


def schedstat():
    """(seconds on a CPU, seconds runnable waiting for one) of this thread."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            run, delay = f.read().split()[:2]
        return int(run) / 1e9, int(delay) / 1e9
    except (OSError, ValueError):
        return 0.0, 0.0


def run_phase(name, call, budget, cpu_budget):
    """One phase: `budget` seconds of wall time, or with cpu_budget (not
    for the sleeping phase) until it has had that much of the thread's CPU
    time, however long a busy machine makes it wait for a CPU (at most ten
    times the budget).  The kernel splits user from system time only per
    clock tick, so what decides how sharply a phase's split can be told
    apart from its neighbours' is the CPU time it gets, not its wall time."""
    if not cpu_budget or name == "sleep_phase":
        call(budget)
        return
    cpu0, give_up = thread_time(), perf_counter() + 10 * budget
    while True:
        left = budget - (thread_time() - cpu0)
        if left <= 0.001 or perf_counter() >= give_up:
            return
        call(left)


def run_rounds(plan, seconds, spent, cpu_budget=False):
    """Run each phase for its budget, round after round, until `seconds`
    have passed; spent[name] accumulates [wall, user, sys]."""
    end = perf_counter() + seconds
    current = None

    def close():
        name, w0, (u0, s0) = current
        u1, s1 = thread_cpu()
        acc = spent[name]
        acc[0] += perf_counter() - w0
        acc[1] += u1 - u0
        acc[2] += s1 - s0

    try:
        while perf_counter() < end:
            for name, call, budget in plan:
                current = (name, perf_counter(), thread_cpu())
                run_phase(name, call, budget, cpu_budget)
                close()
                current = None
    finally:
        if current is not None:
            close()


def main():
    def extra(ap):
        ap.add_argument("--phase-ms", type=float, default=250.0,
                        help="length of each phase in a round")
        ap.add_argument("--sleep", action="store_true",
                        help="add a phase that sleeps")
        ap.add_argument("--grow", type=float, default=0.0, metavar="MIB",
                        help="add a phase that keeps MIB MiB of new memory")
        ap.add_argument("--page-in", type=float, default=0.0, metavar="MIB",
                        help="add a phase that faults in a MIB MiB file")
        ap.add_argument("--phase-cpu", action="store_true",
                        help="phases last --phase-ms of the thread's CPU "
                             "time, not of wall time (but the sleeping one)")
        ap.add_argument("--only", default="",
                        help="comma-separated phase names to run (default all)")
    args = wc.parse_args(__doc__.splitlines()[0], extra)
    budget = args.phase_ms / 1000.0
    fd, path = tempfile.mkstemp(prefix="pytop-kinds-")
    os.write(fd, BLOCK)
    os.pread(fd, 1 << 20, 0)  # now in the page cache
    os.unlink(path)
    phases = [py_loop, hash_blocks, sort_list, compress, read_file]
    if args.sleep:
        phases.append(sleep_phase)
    if args.grow > 0:
        phases.append(grow_memory)
    paged = PagedFile(args.page_in) if args.page_in > 0 else None
    if paged is not None:
        phases.append(page_in)
    if args.only:
        wanted = set(args.only.split(","))
        phases = [fn for fn in phases if fn.__name__ in wanted]
    limit = int(args.grow * 1024 * 1024)
    sort_bytecode = [0.0]
    calls = {
        "sort_list": lambda b: sort_list(b, sort_bytecode),
        "read_file": lambda b: read_file(b, fd),
        "grow_memory": lambda b: grow_memory(b, limit),
        "page_in": lambda b: page_in(b, paged),
    }
    plan = [(fn.__name__, calls.get(fn.__name__, fn), budget) for fn in phases]
    spent = {name: [0.0, 0.0, 0.0] for name, _, _ in plan}
    wc.announce_ready(args)
    reason = "deadline"
    run0, delay0 = schedstat()
    try:
        run_rounds(plan, args.seconds, spent, args.phase_cpu)
    except wc.Stop:
        reason = "sigterm"
    run1, delay1 = schedstat()
    ran, waited = run1 - run0, delay1 - delay0
    out = {}
    for fn in phases:
        info = wc.code_info(fn)
        wall, user, sys_ = spent[fn.__name__]
        info.update(wall=wall, user=user, sys=sys_, hot_line=hot_line(fn))
        if fn is sort_list:
            info["bytecode"] = sort_bytecode[0]
        out[fn.__name__] = info
    wc.write_truth(args, {
        "workload": "time_kinds",
        "reason": reason,
        "phases": out,
        "grown": len(KEPT) * 65536,
        # The share of its runnable time the thread waited for a CPU.
        "cpu_wait_share": waited / (ran + waited) if ran + waited > 0 else 0.0,
        "wall": perf_counter() - T0,
    })
    wc.finish(args)


if __name__ == "__main__":
    sys.exit(main())
