"""churn.py - code objects come and go: round after round, compile a new
function churn_<i> (its own name, its first line i % 40 + 1 in the
pseudo-file "<churn>"), busy it for --call-ms, then drop it, so that its
code object is freed and the next one is likely to get the same address.

A profiler that caches code objects by address must notice the reuse: the
samples of churn_<j> must never be shown as churn_<i>.  Each function ran
once for a measured time, so it can have only about that many samples.

Truth (JSON): functions: {churn_<i>: {seconds, line}}, wall, loop_wall,
main_wall (from main()'s first line: what a profiler's total for main()
covers, argument parsing included, which takes tens of ms on 3.14).
"""
import time

T0 = time.perf_counter()

import workload_common as wc  # noqa: E402

perf_counter = time.perf_counter

TEMPLATE = """\
def churn_{i}(budget):
    x = 1.0
    deadline = perf_counter() + budget
    while perf_counter() < deadline:
        x = (x * 1.000001 + 0.25) % 977.0
    return x
"""


def make(i):
    """A fresh function object with a fresh code object."""
    line = i % 40 + 1
    source = "\n" * (line - 1) + TEMPLATE.format(i=i)
    namespace = {"perf_counter": perf_counter}
    exec(compile(source, "<churn>", "exec"), namespace)
    # Take it out of its globals: no reference cycle, so dropping the
    # function frees its code object at once.
    return namespace.pop("churn_%d" % i), line


def main():
    main_start = perf_counter()
    def extra(ap):
        ap.add_argument("--call-ms", type=float, default=5.0)
    args = wc.parse_args(__doc__.splitlines()[0], extra)
    budget = args.call_ms / 1000.0
    functions = {}
    wc.announce_ready(args)
    loop_start = perf_counter()
    end = loop_start + args.seconds
    i = 0
    reason = "deadline"
    try:
        while perf_counter() < end:
            fn, line = make(i)
            t = perf_counter()
            fn(budget)
            functions["churn_%d" % i] = {"seconds": perf_counter() - t,
                                         "line": line}
            del fn
            i += 1
    except wc.Stop:
        reason = "sigterm"
    loop_end = perf_counter()
    wc.write_truth(args, {"workload": "churn", "reason": reason,
                          "functions": functions, "wall": loop_end - T0,
                          "loop_wall": loop_end - loop_start,
                          "main_wall": loop_end - main_start})
    wc.finish(args)


if __name__ == "__main__":
    main()
