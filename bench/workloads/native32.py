"""Thirty-two threads busy in native code at once: each hashes a 256 KiB
buffer over and over with hashlib.sha256, which releases the GIL, so all
of them are runnable together - the case that stalls samplers which stop
threads to unwind them (py-spy issue #872).

usage: native32.py ITERATIONS_PER_THREAD REPORT_FILE
"""
import hashlib
import sys
import threading
import time

from report import write_report

NTHREADS = 32
BLOCK = bytes(range(256)) * 1024  # 256 KiB


def spin(n):
    for _ in range(n):
        hashlib.sha256(BLOCK).digest()


def main():
    n, report = int(sys.argv[1]), sys.argv[2]
    workers = [threading.Thread(target=spin, args=(n,), name="hash-%d" % k)
               for k in range(NTHREADS)]
    t0 = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    write_report(report, time.perf_counter() - t0)


main()
