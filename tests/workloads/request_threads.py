"""request_threads.py - a server that starts one thread per request, each
thread living about two milliseconds of CPU time: it parses the request
in pure Python (requests of different sizes: 0.6 to 1.4 ms), compresses
the reply with zlib (native code in libz, about 1 ms) and ends.  The main thread starts a request, waits for its handler to end
(so no two handlers compete for the GIL or a CPU: their time runnable is
their CPU time) and, a millisecond later, starts the next: every sample
of a handler is of a thread that started after the profiler attached and
that it sees at a tick or two.

Each handler measures the CPU time (time.thread_time) of its two parts;
the clock reads are outside both.

Truth (JSON, see workload_common.write_truth):
  requests:     handlers that finished
  parse_s:      CPU seconds in the pure-Python part, all handlers
  zlib_s:       CPU seconds inside zlib.compress, all handlers
  parse_lines:  the lines of the pure-Python part
  zlib_line:    the line that calls zlib.compress
  handler_cpu_us: median CPU time of a handler's two parts, microseconds
  start_cpu_us: median CPU time a handler thread ran before its first
                part (the thread's start-up), microseconds
"""
import statistics
import sys
import threading
import time
import zlib

import workload_common as wc

cpu_clock = time.thread_time
perf_counter = time.perf_counter
# Compressible but not trivially: deflate works on it for ~1 ms.
BODY = bytes((i * 7919 + (i >> 3) * 31) % 251 for i in range(1 << 18))


def parse(n):
    x = 1.0
    for _ in range(10000 + (n * 7919) % 12000):  # LOOP parse
        x = (x * 1.000001 + 0.25) % 977.0  # LOOP parse
    return x


def handle(n, lock, totals):
    c0 = cpu_clock()  # the thread's CPU time so far: its start-up
    parse(n)
    c1 = cpu_clock()
    zlib.compress(BODY, 6)  # LOOP zlib
    c2 = cpu_clock()
    with lock:
        totals["parse"] += c1 - c0
        totals["zlib"] += c2 - c1
        totals["each"].append(c2 - c0)
        totals["start"].append(c0)
        totals["requests"] += 1


def main():
    args = wc.parse_args(__doc__.splitlines()[0])
    lock = threading.Lock()
    totals = {"parse": 0.0, "zlib": 0.0, "each": [], "start": [], "requests": 0}
    truth = {"workload": "request_threads", "reason": "deadline"}
    wc.announce_ready(args)
    deadline = perf_counter() + args.seconds
    n = 0
    try:
        while perf_counter() < deadline:
            t = threading.Thread(target=handle, args=(n, lock, totals))
            t.start()
            t.join()
            n += 1
            time.sleep(0.001)
    except wc.Stop:
        truth["reason"] = "sigterm"
    truth.update({
        "requests": totals["requests"],
        "parse_s": totals["parse"],
        "zlib_s": totals["zlib"],
        "parse_lines": wc.marked_lines(__file__, "parse"),
        "zlib_line": wc.marked_lines(__file__, "zlib")[0],
        "handler_cpu_us": 1e6 * statistics.median(totals["each"] or [0.0]),
        "start_cpu_us": 1e6 * statistics.median(totals["start"] or [0.0]),
    })
    wc.write_truth(args, truth)
    wc.finish(args)


if __name__ == "__main__":
    sys.exit(main())
