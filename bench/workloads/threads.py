"""Six threads burning CPU in pure Python.  They share the GIL, so at
most one runs Python code at a time; the others wait for it, which is
what a sampler sees in most threaded Python servers.

usage: threads.py ITERATIONS_PER_THREAD REPORT_FILE
"""
import sys
import threading
import time

from report import write_report

NTHREADS = 6


def spin(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return x


def main():
    n, report = int(sys.argv[1]), sys.argv[2]
    workers = [threading.Thread(target=spin, args=(n,), name="spin-%d" % k)
               for k in range(NTHREADS)]
    t0 = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    write_report(report, time.perf_counter() - t0)


main()
