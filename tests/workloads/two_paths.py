"""two_paths.py - one thread reaches the same hot function by two call
paths, route_a -> via_a -> hot and route_b -> via_b -> hot, in rounds of
7 and 3 ms of its own CPU time (70 / 30 % by construction), and measures
with time.thread_time how much CPU time each path really took: like with
like with a profiler that counts the samples of a running thread.

Short rounds keep the split stationary, so any window of a second or more
sees the same shares as the whole run.  Only `hot` loops, so the leaf
Python frame is hot under one of the two paths.

Truth (JSON, see workload_common.write_truth):
  paths:     {route_a: {seconds, file, line}, route_b: {...}} CPU seconds
  hot:       {file, line, qualname} of the shared hot function
  loop_wall: seconds spent in the measured rounds
"""
import time

import sys

import workload_common as wc

thread_time = time.thread_time


def hot(budget):
    x = 1.0
    deadline = thread_time() + budget
    while thread_time() < deadline:
        x = (x * 1.000001 + 0.25) % 977.0
    return x


def via_a(budget):
    return hot(budget)


def via_b(budget):
    return hot(budget)


def route_a(budget):
    return via_a(budget)


def route_b(budget):
    return via_b(budget)


def run_rounds(plan, seconds, spent):
    """Each path with its CPU budget, round after round, until `seconds`
    of wall time have passed; the path in progress when SIGTERM arrives
    is accounted for too."""
    end = time.perf_counter() + seconds
    current = None
    try:
        while time.perf_counter() < end:
            for name, fn, budget in plan:
                current = (name, thread_time())
                fn(budget)
                spent[name] += thread_time() - current[1]
                current = None
    finally:
        if current is not None:
            spent[current[0]] += thread_time() - current[1]


def main():
    def extra(ap):
        ap.add_argument("--round-ms", type=float, default=10.0,
                        help="CPU time of one round (split 70/30 %%)")
    args = wc.parse_args(__doc__.splitlines()[0], extra)
    r = args.round_ms / 1000.0
    plan = (("route_a", route_a, 0.7 * r), ("route_b", route_b, 0.3 * r))
    spent = {name: 0.0 for name, _, _ in plan}
    wc.announce_ready(args)
    start = time.perf_counter()
    reason = "deadline"
    try:
        run_rounds(plan, args.seconds, spent)
    except wc.Stop:
        reason = "sigterm"
    paths = {}
    for name, fn, _ in plan:
        info = wc.code_info(fn)
        info["seconds"] = spent[name]
        paths[name] = info
    wc.write_truth(args, {
        "workload": "two_paths",
        "reason": reason,
        "paths": paths,
        "hot": wc.code_info(hot),
        "loop_wall": time.perf_counter() - start,
    })
    wc.finish(args)


if __name__ == "__main__":
    sys.exit(main())
