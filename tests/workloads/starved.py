"""starved.py - one pure-Python thread that would use a whole CPU, held
back: pinned (os.sched_setaffinity) to the CPU given with --cpu, where the
test runs a CPU-bound competitor, or moved into the cgroup given with
--cgroup, whose CPU quota the test sets.  The thread is runnable all the
time and on a CPU only part of it.

The loop's leaf is spin itself (a call to perf_counter only every 20000
additions).  The thread measures, over the whole of spin, its wall time,
its time on a CPU and its run-queue delay (schedstat), as pytop counts
them; and every MARK_S the same two counters with the time, so that a
test can take them over exactly the windows pytop's figures cover (the
share of a CPU a pinned thread gets drifts over seconds).

Truth (JSON): spin: {file, line, last_line, wall, cpu, run_delay,
marks: [[unix_time_s, cpu, run_delay], ...]}, reason: the time as
pytop's JSON "time_us" gives it (in us).
"""
import os
import threading
import time

import workload_common as wc

perf_counter = time.perf_counter
MARK_S = 0.05


def schedstat():
    """(seconds on a CPU, seconds runnable waiting for one) so far."""
    path = "/proc/self/task/%d/schedstat" % threading.get_native_id()
    with open(path) as f:
        run, delay = f.read().split()[:2]
    return int(run) / 1e9, int(delay) / 1e9


def spin(until, marks):
    x, next_mark = 0, 0.0
    now = perf_counter()
    while now < until:
        if now >= next_mark:
            marks.append((time.time(),) + schedstat())
            next_mark = now + MARK_S
        for _ in range(20000):
            x += 1
        now = perf_counter()
    marks.append((time.time(),) + schedstat())
    return x


def main():
    def options(ap):
        ap.add_argument("--cpu", type=int, default=-1)
        ap.add_argument("--cgroup", metavar="DIR")

    args = wc.parse_args(__doc__.splitlines()[0], extra=options)
    if args.cpu >= 0:
        os.sched_setaffinity(0, {args.cpu})
    if args.cgroup:
        with open(os.path.join(args.cgroup, "cgroup.procs"), "w") as f:
            f.write("%d\n" % os.getpid())
    start = perf_counter()
    truth = {"workload": "starved", "spin": wc.code_info(spin),
             "reason": "deadline"}
    wc.announce_ready(args)
    try:
        marks = []
        spin(start + args.seconds, marks)
        (t0, r0, d0), (t1, r1, d1) = marks[0], marks[-1]  # wall: Unix time
        truth["spin"].update(wall=t1 - t0, cpu=r1 - r0, run_delay=d1 - d0,
                             marks=marks)
    except wc.Stop:
        truth["reason"] = "sigterm"
    wc.write_truth(args, truth)
    wc.finish(args)


if __name__ == "__main__":
    main()
