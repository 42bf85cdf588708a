"""deep.py - a recursion --depth frames deep (400 by default) that spins in a
leaf function at the bottom for 20 ms, unwinds, and goes down again, until
--seconds have passed.

A profiler must show `leaf` with own ~ its measured share (nearly all of
the time) and `recurse` with total ~ the same share: counted once per sample,
not once per frame.  Going up and down again keeps the frames' memory
changing under a reader that does not stop the target.

Truth (JSON): functions: {leaf: {seconds, ...}, recurse: {seconds (time
below the outermost recurse call, leaf included), ...}}, wall, loop_wall,
main_wall (from main()'s first line: what a profiler's total for main()
covers, argument parsing included, which takes tens of ms on 3.14).
"""
import sys
import time

T0 = time.perf_counter()

import workload_common as wc  # noqa: E402

perf_counter = time.perf_counter


def leaf(budget):
    x = 1.0
    deadline = perf_counter() + budget
    while perf_counter() < deadline:
        x = (x * 1.000001 + 0.25) % 977.0
    return x


def recurse(n, budget, spent):
    if n <= 1:
        t = perf_counter()
        leaf(budget)
        spent[0] += perf_counter() - t
        return 1
    return 1 + recurse(n - 1, budget, spent)


def main():
    main_start = perf_counter()
    def extra(ap):
        ap.add_argument("--depth", type=int, default=400,
                        help="frames of recurse on the stack at the bottom")
        ap.add_argument("--leaf-ms", type=float, default=20.0)
    args = wc.parse_args(__doc__.splitlines()[0], extra)
    sys.setrecursionlimit(args.depth + 200)
    spent_leaf = [0.0]
    spent_recurse = 0.0
    reached = 0
    wc.announce_ready(args)
    loop_start = perf_counter()
    end = loop_start + args.seconds
    reason = "deadline"
    t = None
    try:
        while perf_counter() < end:
            t = perf_counter()
            reached = recurse(args.depth, args.leaf_ms / 1000.0, spent_leaf)
            spent_recurse += perf_counter() - t
            t = None
    except wc.Stop:
        reason = "sigterm"
        if t is not None:
            spent_recurse += perf_counter() - t
    loop_end = perf_counter()
    functions = {
        "leaf": dict(wc.code_info(leaf), seconds=spent_leaf[0]),
        "recurse": dict(wc.code_info(recurse), seconds=spent_recurse),
    }
    wc.write_truth(args, {"workload": "deep", "reason": reason,
                          "depth": reached, "functions": functions,
                          "wall": loop_end - T0,
                          "loop_wall": loop_end - loop_start,
                          "main_wall": loop_end - main_start})
    wc.finish(args)


if __name__ == "__main__":
    main()
