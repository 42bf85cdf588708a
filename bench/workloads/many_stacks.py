"""Many distinct stacks (bench/long stacks): 64 functions call each other
four deep, the path chosen by the base-64 digits of a scrambled counter,
so the stack under the short leaf changes every few microseconds and a
run at 1 kHz sees a new stack almost every sample (64**5 paths).

usage: many_stacks.py [SECONDS]   (default: until killed)
"""
import sys
import time

N = 64
DEPTH = 4
FUNCS = []
SRC = []
for k in range(N):
    SRC.append(
        "def f%d(n, d):\n"
        "    if d == 0:\n"
        "        return leaf(n)\n"
        "    return FUNCS[(n >> (6 * d)) %% %d](n, d - 1)\n" % (k, N))
ns = {"FUNCS": FUNCS}
exec(compile("".join(SRC), "many_stacks_gen.py", "exec"), ns)


def leaf(n):
    s = 0
    for i in range(60):
        s += i * n
    return s


ns["leaf"] = leaf
FUNCS.extend(ns["f%d" % k] for k in range(N))


def main():
    end = time.monotonic() + float(sys.argv[1]) if len(sys.argv) > 1 else None
    n = 0
    while end is None or time.monotonic() < end:
        for _ in range(1000):
            h = (n * 2654435761) & 0x3FFFFFFF  # every digit moves
            FUNCS[h % N](h, DEPTH)
            n += 1


main()
