"""hostile_code_churn.py SECONDS [POOL] - code objects created and freed in
a tight loop: each round compiles `def churn_N()` (N drawn from POOL,
default 300) in a file named <hostile_churn_N> with the def on line N,
runs it for a fraction of a millisecond and drops it, so the next code
object is often allocated where the last one was freed.  Name, file and
first line always agree, so a profiler that mixes up two codes at one
address shows a name with the wrong file or line."""
import random
import sys
import time

seconds = float(sys.argv[1])
pool = int(sys.argv[2]) if len(sys.argv) > 2 else 300

BODY = (
    "def churn_%d():\n"
    "    end = perf_counter() + 0.0002\n"
    "    x = 0\n"
    "    while perf_counter() < end:\n"
    "        x += 1\n"
    "    return x\n"
)


def one_round(n):
    source = "\n" * (n - 1) + BODY % n
    space = {"perf_counter": time.perf_counter}
    exec(compile(source, "<hostile_churn_%d>" % n, "exec"), space)
    space["churn_%d" % n]()


def main():
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        one_round(random.randint(1, pool))


main()
