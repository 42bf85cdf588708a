"""Six threads burning CPU in pure Python.  They share the GIL, so at
most one runs Python code at a time; the others wait for it, which is
what a sampler sees in most threaded Python servers.

usage: threads.py ITERATIONS_PER_THREAD REPORT_FILE
"""

from report import run_threads

NTHREADS = 6


def spin(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return x


run_threads(spin, NTHREADS, "spin")
