"""cpu_split.py - one thread splits its CPU between three pure-Python
functions in short rounds (5 / 3 / 2 ms by default: 50 / 30 / 20 %) and
measures, with time.perf_counter, how long each call really took.

Short rounds keep the split stationary: a profiler that watches any window
of a second or more sees the same shares as the whole run.  Each hot function
owns its busy loop (real float arithmetic, no helper call) so that the leaf
Python frame during its budget is the function itself.

Truth (JSON, see workload_common.write_truth):
  functions: {qualname: {seconds, file, line, last_line, loop_line}}
  wall:      seconds since the first statement of this file
  loop_wall: seconds spent in the measured rounds
  timeline:  with --timeline, every call: {"names": [qualname, ...],
             "calls": [[name index, start, end], ...]}, start and end in
             Unix time (seconds), so that a profiler's window of the run
             (pytop's time_us and elapsed) can be timed alone
"""
import time

T0 = time.perf_counter()

import sys  # noqa: E402

import workload_common as wc  # noqa: E402

perf_counter = time.perf_counter


def hot_a(budget):
    x = 1.0
    deadline = perf_counter() + budget
    while perf_counter() < deadline:
        x = (x * 1.000001 + 0.25) % 977.0  # LOOP hot_a
    return x


def hot_b(budget):
    x = 2.0
    deadline = perf_counter() + budget
    while perf_counter() < deadline:
        x = (x * 1.000003 + 0.5) % 983.0  # LOOP hot_b
    return x


class Klass:
    def hot_c(self, budget):
        x = 3.0
        deadline = perf_counter() + budget
        while perf_counter() < deadline:
            x = (x * 1.000007 + 0.75) % 991.0  # LOOP Klass.hot_c
        return x


def run_rounds(plan, seconds, spent, calls=None):
    """Call each planned function with its budget, round after round, until
    `seconds` have passed.  spent[name] accumulates measured seconds; the
    call in progress when SIGTERM arrives is accounted for too.  With a
    list for calls, each call is appended as (plan index, start, end) in
    perf_counter seconds."""
    end = perf_counter() + seconds
    current = None
    try:
        while perf_counter() < end:
            for i, (name, fn, budget) in enumerate(plan):
                current = (name, perf_counter(), i)
                fn(budget)
                done = perf_counter()
                spent[name] += done - current[1]
                if calls is not None:
                    calls.append((i, current[1], done))
                current = None
    finally:
        if current is not None:
            done = perf_counter()
            spent[current[0]] += done - current[1]
            if calls is not None:
                calls.append((current[2], current[1], done))


def loop_line(fn, marker):
    """Line number of the '# LOOP <marker>' comment in fn's source file."""
    with open(fn.__code__.co_filename) as f:
        for number, text in enumerate(f, start=1):
            if text.rstrip().endswith("# LOOP " + marker):
                return number
    return None


def main():
    def extra(ap):
        ap.add_argument("--round-ms", type=float, default=10.0,
                        help="length of one round (split 50/30/20 %%)")
        ap.add_argument("--timeline", action="store_true",
                        help="put every call's start and end in the truth")
    args = wc.parse_args(__doc__.splitlines()[0], extra)
    r = args.round_ms / 1000.0
    plan = (("hot_a", hot_a, 0.5 * r),
            ("hot_b", hot_b, 0.3 * r),
            ("Klass.hot_c", Klass().hot_c, 0.2 * r))
    spent = {name: 0.0 for name, _, _ in plan}
    calls = [] if args.timeline else None
    wc.announce_ready(args)
    loop_start = perf_counter()
    # Unix time minus perf_counter, once: the timeline's calls in the
    # clock pytop reports its windows in, without a second clock read per
    # call (seconds of drift between the two are far below a tick).
    unix_offset = time.time() - perf_counter()
    reason = "deadline"
    try:
        run_rounds(plan, args.seconds, spent, calls)
    except wc.Stop:
        reason = "sigterm"
    loop_end = perf_counter()
    functions = {}
    for name, fn, _ in plan:
        info = wc.code_info(fn)
        info["seconds"] = spent[name]
        info["loop_line"] = loop_line(fn, name)
        functions[name] = info
    truth = {
        "workload": "cpu_split",
        "reason": reason,
        "functions": functions,
        "wall": loop_end - T0,
        "loop_wall": loop_end - loop_start,
    }
    if calls is not None:
        truth["timeline"] = {
            "names": [name for name, _, _ in plan],
            "calls": [[i, start + unix_offset, done + unix_offset]
                      for i, start, done in calls],
        }
    wc.write_truth(args, truth)
    wc.finish(args)


if __name__ == "__main__":
    sys.exit(main())
