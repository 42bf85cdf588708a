"""Shallow CPU-bound loop in one thread: <module> -> main -> spin.

usage: shallow.py ITERATIONS REPORT_FILE
"""
import sys
import time

from report import write_report


def spin(n):
    x = 0
    for i in range(n):
        x = (x * 31 + i) & 0xFFFF
    return x


def main():
    n, report = int(sys.argv[1]), sys.argv[2]
    t0 = time.perf_counter()
    spin(n)
    write_report(report, time.perf_counter() - t0)


main()
