"""hostile_deep.py SECONDS [DEPTH] - a recursion DEPTH (default 5000)
frames deep that spins at the bottom for SECONDS: deeper than any frame
limit a profiler may have."""
import sys
import time

seconds = float(sys.argv[1])
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 5000


def spin(budget):
    end = time.perf_counter() + budget
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def recurse(n):
    if n <= 1:
        return spin(seconds)
    return recurse(n - 1) + 1


def outermost():
    return recurse(depth - 2)


sys.setrecursionlimit(depth + 1000)
outermost()
