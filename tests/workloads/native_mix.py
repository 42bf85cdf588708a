"""native_mix.py - one thread splits its time between zlib.compress (native
code in libz), hashlib.sha256 (OpenSSL's libcrypto) and a pure-Python loop,
in short rounds of fixed work, and measures how long the two native calls really took.

Each call's time is all the native code under its line: the library's, and
the C library's that the call or the library asks for (zlib.compress
allocates and clears a quarter of a megabyte of deflate state per call:
malloc, brk or mmap, memset and the page faults they take, which can be a
third of the call on a machine where page faults are slow).  The figures
are the thread's CPU time (time.thread_time: user and system), so that a
busy machine's waits for a CPU count nowhere; wall times are given too.
The clock reads themselves are outside every measured part: they are
system calls (CPU clocks have no vDSO path), and on a busy machine a
profiler that counts a thread waiting for a CPU as running finds far more
samples on them than their CPU time (pytop --native: up to 38 % of the
samples in __vdso_clock_gettime, for about 1 % of the CPU time).

Truth (JSON, see workload_common.write_truth):
  calls:     {"zlib": {seconds, wall, line}, "sha256": {...}}: CPU seconds
             inside each call (wall: the same in wall-clock seconds) and
             the line that makes it
  python:    CPU seconds in the pure-Python loop
  python_lines: its lines
  loop_cpu:  CPU seconds spent in the measured rounds
  loop_wall: wall-clock seconds spent in the measured rounds
  rounds:    how many rounds ran (a round is fixed work: CPU per round
             against an unprofiled run's is what profiling cost the
             thread)
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


def spin(spent, rounds):
    """A fixed amount of pure-Python work, not a time budget: on a busy
    machine, waiting for a CPU must stretch every phase of a round alike,
    as it does a real program's, or the phases' CPU shares would drift
    from their shares of the time the thread is runnable."""
    c = cpu_clock()
    x = 1.0
    for _ in range(rounds):  # LOOP python
        x = (x * 1.000001 + 0.25) % 977.0  # LOOP python
    spent["python"] += cpu_clock() - c


def main():
    args = wc.parse_args(__doc__.splitlines()[0])
    spent = {"zlib": 0.0, "sha256": 0.0, "python": 0.0}
    wall = {"zlib": 0.0, "sha256": 0.0}
    wc.announce_ready(args)
    start, start_cpu = perf_counter(), cpu_clock()
    end = start + args.seconds
    reason = "deadline"
    rounds = 0
    try:
        while perf_counter() < end:
            squeeze(spent, wall)
            digest(spent, wall)
            spin(spent, 30000)  # ~2 ms
            rounds += 1
    except wc.Stop:
        reason = "sigterm"
    loop_end, loop_end_cpu = perf_counter(), cpu_clock()
    wc.write_truth(args, {
        "workload": "native_mix",
        "reason": reason,
        "calls": {name: {"seconds": spent[name], "wall": wall[name],
                         "line": wc.marked_lines(__file__, name)[0]}
                  for name in ("zlib", "sha256")},
        "python": spent["python"],
        "python_lines": wc.marked_lines(__file__, "python"),
        "loop_cpu": loop_end_cpu - start_cpu,
        "loop_wall": loop_end - start,
        "rounds": rounds,
    })
    wc.finish(args)


if __name__ == "__main__":
    sys.exit(main())
