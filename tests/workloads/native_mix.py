"""native_mix.py - one thread splits its time between zlib.compress (native
code in libz), hashlib.sha256 (OpenSSL's libcrypto) and a pure-Python loop,
in short rounds, and measures how long the two native calls really took.

Each call's time is all the native code under its line: the library's, and
the C library's that the call or the library asks for (zlib.compress
allocates and clears a quarter of a megabyte of deflate state per call:
malloc, brk or mmap, memset and the page faults they take, which can be a
third of the call on a machine where page faults are slow).  The figures
are the thread's CPU time (time.thread_time: user and system), so that a
busy machine's waits for a CPU count nowhere; wall times are given too.

Truth (JSON, see workload_common.write_truth):
  calls:     {"zlib": {seconds, wall, line}, "sha256": {...}}: CPU seconds
             inside each call (wall: the same in wall-clock seconds) and
             the line that makes it
  python:    CPU seconds in the pure-Python loop
  loop_cpu:  CPU seconds spent in the measured rounds
  loop_wall: wall-clock seconds spent in the measured rounds
"""
import time

T0 = time.perf_counter()

import hashlib  # noqa: E402
import sys  # noqa: E402
import zlib  # noqa: E402

import workload_common as wc  # noqa: E402

perf_counter = time.perf_counter
cpu_clock = time.thread_time
# Random-looking but compressible input: deflate works hard on it.
DATA = bytes((i * 7919 + (i >> 3) * 31) % 251 for i in range(1 << 16)) * 8


def squeeze(spent, wall):
    c, t = cpu_clock(), perf_counter()
    zlib.compress(DATA, 9)  # LOOP zlib
    wall["zlib"] += perf_counter() - t
    spent["zlib"] += cpu_clock() - c


def digest(spent, wall):
    c, t = cpu_clock(), perf_counter()
    for _ in range(20):
        hashlib.sha256(DATA).digest()  # LOOP sha256
    wall["sha256"] += perf_counter() - t
    spent["sha256"] += cpu_clock() - c


def spin(spent, budget):
    c = cpu_clock()
    x = 1.0
    deadline = perf_counter() + budget
    while perf_counter() < deadline:
        x = (x * 1.000001 + 0.25) % 977.0
    spent["python"] += cpu_clock() - c


def loop_line(fn, marker):
    """Line number of the '# LOOP <marker>' comment in fn's source file."""
    with open(fn.__code__.co_filename) as f:
        for number, text in enumerate(f, start=1):
            if text.rstrip().endswith("# LOOP " + marker):
                return number
    return None


def main():
    args = wc.parse_args(__doc__.splitlines()[0])
    spent = {"zlib": 0.0, "sha256": 0.0, "python": 0.0}
    wall = {"zlib": 0.0, "sha256": 0.0}
    wc.announce_ready(args)
    start, start_cpu = perf_counter(), cpu_clock()
    end = start + args.seconds
    reason = "deadline"
    try:
        while perf_counter() < end:
            squeeze(spent, wall)
            digest(spent, wall)
            spin(spent, 0.002)
    except wc.Stop:
        reason = "sigterm"
    loop_end, loop_end_cpu = perf_counter(), cpu_clock()
    wc.write_truth(args, {
        "workload": "native_mix",
        "reason": reason,
        "calls": {name: {"seconds": spent[name], "wall": wall[name],
                         "line": loop_line(fn, name)}
                  for name, fn in (("zlib", squeeze), ("sha256", digest))},
        "python": spent["python"],
        "loop_cpu": loop_end_cpu - start_cpu,
        "loop_wall": loop_end - start,
    })
    wc.finish(args)


if __name__ == "__main__":
    sys.exit(main())
