"""code_churn.py - a service that compiles code at run time, for ever:
each round compiles a module under a fresh file name ("<churn-K>"), whose
function churn_K (a name never seen before) calls a lambda of its own in
a loop for --work-ms, then drops it all, so the code objects are freed
and their addresses reused.  Every fourth round the work runs at the
exec'd module's top level instead (code named "<module>").

usage: code_churn.py [--rate N] [--work-ms MS] [--seconds S] [--out FILE]
  --rate     new functions per second (default 200); rounds run back to
             back when RATE x WORK-MS exceeds one second
  --work-ms  busy time of each function (default 1.0)
  --seconds  how long to run (default 0: until killed)
  --out      on exit, write {"rounds": N, "wall": seconds} there
"""
import argparse
import json
import time

perf_counter = time.perf_counter

FUNC = """\
def churn_{k}(budget):
    step = lambda x: (x * 1.000001 + 0.25) % 977.0
    x = 1.0
    deadline = perf_counter() + budget
    while perf_counter() < deadline:
        x = step(x)
    return x
"""

MODULE = """\
x = 1.0
deadline = perf_counter() + budget
while perf_counter() < deadline:
    x = (x * 1.000001 + 0.25) % 977.0
"""


def one_round(k, budget):
    ns = {"perf_counter": perf_counter, "budget": budget}
    if k % 4 == 3:
        exec(compile(MODULE, "<churn-%d>" % k, "exec"), ns)
        return
    exec(compile(FUNC.format(k=k), "<churn-%d>" % k, "exec"), ns)
    ns["churn_%d" % k](budget)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=float, default=200.0)
    ap.add_argument("--work-ms", type=float, default=1.0)
    ap.add_argument("--seconds", type=float, default=0.0)
    ap.add_argument("--out")
    a = ap.parse_args()
    start = perf_counter()
    k = 0
    budget = a.work_ms / 1000.0
    try:
        while a.seconds <= 0 or perf_counter() - start < a.seconds:
            one_round(k, budget)
            k += 1
            ahead = start + k / a.rate - perf_counter()
            if ahead > 0:
                time.sleep(ahead)
    except KeyboardInterrupt:
        pass
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"rounds": k, "wall": perf_counter() - start}, f)


main()
