"""native_mix.py - one thread splits its time between zlib.compress (native
code in libz), hashlib.sha256 (OpenSSL's libcrypto) and a pure-Python loop,
in short rounds, and measures with time.perf_counter how long the two
native calls really took.

Truth (JSON, see workload_common.write_truth):
  calls:     {"zlib": {seconds, line}, "sha256": {seconds, line}}: time
             inside each call and the line that makes it
  python:    seconds in the pure-Python loop
  loop_wall: seconds spent in the measured rounds
"""
import time

T0 = time.perf_counter()

import hashlib  # noqa: E402
import sys  # noqa: E402
import zlib  # noqa: E402

import workload_common as wc  # noqa: E402

perf_counter = time.perf_counter
# Random-looking but compressible input: deflate works hard on it.
DATA = bytes((i * 7919 + (i >> 3) * 31) % 251 for i in range(1 << 16)) * 8


def squeeze(spent):
    t = perf_counter()
    zlib.compress(DATA, 9)  # LOOP zlib
    spent["zlib"] += perf_counter() - t


def digest(spent):
    t = perf_counter()
    for _ in range(20):
        hashlib.sha256(DATA).digest()  # LOOP sha256
    spent["sha256"] += perf_counter() - t


def spin(spent, budget):
    t = perf_counter()
    x = 1.0
    deadline = t + budget
    while perf_counter() < deadline:
        x = (x * 1.000001 + 0.25) % 977.0
    spent["python"] += perf_counter() - t


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
    wc.announce_ready(args)
    start = perf_counter()
    end = start + args.seconds
    reason = "deadline"
    try:
        while perf_counter() < end:
            squeeze(spent)
            digest(spent)
            spin(spent, 0.002)
    except wc.Stop:
        reason = "sigterm"
    loop_end = perf_counter()
    wc.write_truth(args, {
        "workload": "native_mix",
        "reason": reason,
        "calls": {name: {"seconds": spent[name], "line": loop_line(fn, name)}
                  for name, fn in (("zlib", squeeze), ("sha256", digest))},
        "python": spent["python"],
        "loop_wall": loop_end - start,
    })
    wc.finish(args)


if __name__ == "__main__":
    sys.exit(main())
