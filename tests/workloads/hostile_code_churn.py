"""hostile_code_churn.py SECONDS [BUDGET_MS] - code objects created and
freed in a tight loop: round N compiles ten code objects it drops unrun,
then `def churn_N()` in a file named <hostile_churn_N> with the def on
line N, runs it for BUDGET_MS (default 15) and drops it, so the next
round's code objects are often allocated where the last ones were freed.
Rounds run one after the other and every name is used once: once a
profiler has shown churn_N, no older round's code may gain a sample (one
that takes a new code at a reused address for the old one does), and a
name shown with another round's file or line is two codes mixed up."""
import sys
import time

seconds = float(sys.argv[1])
budget = (float(sys.argv[2]) if len(sys.argv) > 2 else 15.0) / 1000
THROWAWAY = "def unused_%d(a, b):\n    return [a * i + b for i in range(%d)]\n"

BODY = (
    "def churn_%d():\n"
    "    end = perf_counter() + budget\n"
    "    x = 0\n"
    "    while perf_counter() < end:\n"
    "        x += 1\n"
    "    return x\n"
)


def one_round(n):
    for k in range(10):
        compile(THROWAWAY % (k, n), "<hostile_unused>", "exec")
    source = "\n" * (n - 1) + BODY % n
    space = {"perf_counter": time.perf_counter, "budget": budget}
    exec(compile(source, "<hostile_churn_%d>" % n, "exec"), space)
    space["churn_%d" % n]()


def main():
    end = time.perf_counter() + seconds
    n = 0
    while time.perf_counter() < end:
        n += 1
        one_round(n)


main()
