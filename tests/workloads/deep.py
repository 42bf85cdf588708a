"""deep.py - a recursion --depth frames deep (400 by default) that spins in a
leaf function at the bottom for 20 ms, unwinds, and goes down again, until
--seconds have passed.

A profiler must show `leaf` with own ~ its measured share (nearly all of
the time) and `recurse` with total ~ the same share: counted once per sample,
not once per frame.  Going up and down again keeps the frames' memory
changing under a reader that does not stop the target.

Every figure is the thread's CPU time (time.thread_time: user and system),
not wall time: the time the thread waits for a CPU on a busy machine, or
sleeps reading a module from disk, is no time spent in a function, and the
shares of a profiler that samples what runs must match on an idle and on a
busy machine alike.

Truth (JSON): functions: {leaf: {seconds, ...}, recurse: {seconds (time
below the outermost recurse call, leaf included), ...}}, wall, loop_wall,
main_wall (from main()'s first line to the loop's end: what a profiler's
total for main() covers, argument parsing included, which takes tens of ms
on 3.14, minus report(), which writes this truth after the loop),
loop_lines ([first, last]: main()'s lines that loop_wall covers).
"""
import sys
import time

T0 = time.thread_time()

import workload_common as wc  # noqa: E402

perf_counter = time.perf_counter
cpu_clock = time.thread_time


def leaf(budget):
    x = 1.0
    deadline = perf_counter() + budget
    while perf_counter() < deadline:
        x = (x * 1.000001 + 0.25) % 977.0
    return x


def recurse(n, budget, spent):
    if n <= 1:
        t = cpu_clock()
        leaf(budget)
        spent[0] += cpu_clock() - t
        return 1
    return 1 + recurse(n - 1, budget, spent)


def marked_lines():
    """First and last line of main()'s measured loop ('# LOOP' marks)."""
    with open(main.__code__.co_filename) as f:
        marked = [number for number, text in enumerate(f, start=1)
                  if text.rstrip().endswith("# LOOP")]
    return [marked[0], marked[-1]]


def report(args, reason, reached, spent_leaf, spent_recurse, main_start,
           loop_start, loop_end):
    """Write the truth: after the measured part, in a function of its own,
    whose samples a test can take out of main()'s."""
    functions = {
        "leaf": dict(wc.code_info(leaf), seconds=spent_leaf),
        "recurse": dict(wc.code_info(recurse), seconds=spent_recurse),
    }
    wc.write_truth(args, {"workload": "deep", "reason": reason,
                          "depth": reached, "functions": functions,
                          "wall": loop_end - T0,
                          "loop_wall": loop_end - loop_start,
                          "main_wall": loop_end - main_start,
                          "loop_lines": marked_lines()})


def main():
    main_start = cpu_clock()
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
    loop_start = cpu_clock()  # LOOP
    end = perf_counter() + args.seconds
    reason = "deadline"
    t = None
    try:
        while perf_counter() < end:
            t = cpu_clock()
            reached = recurse(args.depth, args.leaf_ms / 1000.0, spent_leaf)
            spent_recurse += cpu_clock() - t
            t = None
    except wc.Stop:
        reason = "sigterm"
        if t is not None:
            spent_recurse += cpu_clock() - t
    loop_end = cpu_clock()  # LOOP
    report(args, reason, reached, spent_leaf[0], spent_recurse, main_start,
           loop_start, loop_end)
    wc.finish(args)


if __name__ == "__main__":
    main()
