"""A 400-frame recursion that goes all the way up and down every ~2 ms.

Each cycle descends DEPTH frames, calls a small function STEPS times at
the bottom (about 2 ms), and returns all the way to main: the stack the
sampler reads changes completely every cycle, and near its leaf all the
time.  Complete stack: <module> -> main -> updown_main -> descend x
(DEPTH+1) -> bottom -> step.

usage: updown.py CYCLES REPORT_FILE [DEPTH]
"""
import sys
import time

STEPS = 20000


def step(x, i):
    return (x * 31 + i) & 0xFFFF


def bottom(x):
    for i in range(STEPS):
        x = step(x, i)
    return x


def descend(depth, x):
    if depth == 0:
        return bottom(x)
    return descend(depth - 1, x)


def updown_main(cycles, depth):
    x = 0
    for _ in range(cycles):
        x = descend(depth, x)
    return x


def main():
    cycles, report = int(sys.argv[1]), sys.argv[2]
    depth = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    sys.setrecursionlimit(max(1000, depth + 100))
    t0 = time.perf_counter()
    updown_main(cycles, depth)
    wall = time.perf_counter() - t0
    from report import write_report
    write_report(report, wall)


main()
