"""A deep recursion spinning at the bottom.

Complete stack: <module> -> main -> deep_main -> descend x (DEPTH+1)
-> bottom -> step, i.e. DEPTH + 5 frames.  The bottom keeps calling
step(), so the frames nearest the leaf change all the time while the
sampler reads the rest: a torn read is possible on every sample.
bench/run counts a sample complete when its leaf is bottom or step AND
deep_main (the outermost frame of the recursion) is on the stack.

usage: deep.py ITERATIONS REPORT_FILE [DEPTH]
"""
import sys
import time


def step(x, i):
    return (x * 31 + i) & 0xFFFF


def bottom(n):
    x = 0
    for i in range(n):
        x = step(x, i)
    return x


def descend(depth, n):
    if depth == 0:
        return bottom(n)
    return descend(depth - 1, n)


def deep_main(n, depth):
    return descend(depth, n)


def main():
    n, report = int(sys.argv[1]), sys.argv[2]
    depth = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    sys.setrecursionlimit(max(1000, depth + 100))
    t0 = time.perf_counter()
    deep_main(n, depth)
    wall = time.perf_counter() - t0
    # Imported only now: samples taken while importing it, before the
    # recursion, would be counted as incomplete stacks.
    from report import write_report
    write_report(report, wall)


main()
