"""native_threads.py - N threads (default 32) that all stay on a CPU at
once: each hashes a buffer with hashlib.sha256, which releases the GIL, a
fixed number of times.  The work is fixed, so the wall time says how much a
profiler slowed it down.

Truth (JSON, see workload_common.write_truth):
  threads:   how many
  work_wall: seconds from starting the threads to joining the last
"""
import time

T0 = time.perf_counter()

import hashlib  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402

import workload_common as wc  # noqa: E402

DATA = b"x" * (1 << 20)


def work(rounds):
    for _ in range(rounds):
        hashlib.sha256(DATA).digest()


def main():
    def extra(ap):
        ap.add_argument("--threads", type=int, default=32)
        ap.add_argument("--rounds", type=int, default=20,
                        help="sha256 of 1 MiB per thread")
    args = wc.parse_args(__doc__.splitlines()[0], extra)
    wc.announce_ready(args)
    workers = [threading.Thread(target=work, args=(args.rounds,))
               for _ in range(args.threads)]
    t = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    wc.write_truth(args, {
        "workload": "native_threads",
        "reason": "deadline",
        "threads": args.threads,
        "work_wall": time.perf_counter() - t,
    })
    wc.finish(args)


if __name__ == "__main__":
    sys.exit(main())
