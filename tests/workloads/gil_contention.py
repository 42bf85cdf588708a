"""gil_contention.py - two pure-Python threads (counting loops, no C call
in the loop) contend for the GIL; the main thread waits in join().

Each thread measures its own time from its start to its end (schedstat:
on a CPU, and runnable but waiting for one); what is left of the wall
time it spent asleep waiting for the GIL.

Truth (JSON): threads: {function: {tid, wall, cpu, run_delay, file, line,
last_line}} (seconds of each thread's life), reason.
"""
import threading
import time

import workload_common as wc

perf_counter = time.perf_counter


def schedstat():
    """(seconds on a CPU, seconds runnable waiting for one) so far."""
    path = "/proc/self/task/%d/schedstat" % threading.get_native_id()
    with open(path) as f:
        run, delay = f.read().split()[:2]
    return int(run) / 1e9, int(delay) / 1e9


def count_a(stop, out):
    s = 0
    t0, (r0, d0) = perf_counter(), schedstat()
    while not stop:
        s += 1
        s += 1
    t1, (r1, d1) = perf_counter(), schedstat()
    out.update(wall=t1 - t0, cpu=r1 - r0, run_delay=d1 - d0,
               tid=threading.get_native_id())


def count_b(stop, out):
    s = 0
    t0, (r0, d0) = perf_counter(), schedstat()
    while not stop:
        s += 1
        s += 1
    t1, (r1, d1) = perf_counter(), schedstat()
    out.update(wall=t1 - t0, cpu=r1 - r0, run_delay=d1 - d0,
               tid=threading.get_native_id())


def main():
    args = wc.parse_args(__doc__.splitlines()[0])
    stop = []
    start = perf_counter()
    results = {}
    threads = []
    for fn in (count_a, count_b):
        out = dict(wc.code_info(fn))
        results[fn.__name__] = out
        threads.append(threading.Thread(
            target=fn, args=(stop, out)))
    for t in threads:
        t.start()
    truth = {"workload": "gil_contention", "threads": results,
             "reason": "deadline"}
    wc.announce_ready(args)
    try:
        time.sleep(max(0.0, start + args.seconds - perf_counter()))
    except wc.Stop:
        truth["reason"] = "sigterm"
    stop.append(True)
    for t in threads:
        t.join()
    wc.write_truth(args, truth)
    wc.finish(args)


if __name__ == "__main__":
    main()
