"""About 200 distinct stacks in one thread (bench/record): main calls one
of 20 middle functions, each of which calls one of 10 leaves; the leaf's
work is one line, so each (middle, leaf) pair is one stack.

usage: stacks200.py SECONDS
"""
import sys
import time

SRC = []
for j in range(10):
    SRC.append("def leaf%d(n):\n    return sum(range(n))\n" % j)
for i in range(20):
    SRC.append("def mid%d(k, n):\n    return LEAVES[k](n)\n" % i)
ns = {}
exec(compile("".join(SRC), "stacks200_gen.py", "exec"), ns)
ns["LEAVES"] = [ns["leaf%d" % j] for j in range(10)]
MIDS = [ns["mid%d" % i] for i in range(20)]


def main():
    end = time.monotonic() + float(sys.argv[1])
    n = 0
    while time.monotonic() < end:
        h = (n * 2654435761) & 0xFFFF
        MIDS[h % 20](h // 20 % 10, 3000)
        n += 1


main()
