"""gil_wait.py - a thread that waits for the GIL most of the time:

  gil_hog      sorts a large list again and again; sorted() is C code that
               keeps the GIL for its whole run (a few hundred milliseconds)
  gil_waiter   a pure-Python loop: it asks for the GIL, and gets it only
               between two sorts, for one switch interval
  lock_waiter  blocked on a threading.Lock the main thread holds: a futex
               wait that is not the GIL
  main         waits in time.sleep for the run to end, writes the truth
               and exits with the others still in their roles

Truth (JSON): threads: {role: {tid, steady_cpu_pct}}, each thread's CPU use
from STEADY_AFTER_S after the start to the end, in percent of one CPU
(gil_waiter's is low because it waits); steady_after_s; ready_monotonic_s,
when every thread had started (CLOCK_MONOTONIC, as time.monotonic): on a
busy machine that can be well over a second after the interpreter started,
since main waits for the GIL behind a whole sort to start gil_waiter;
reason.
"""
import os
import random
import sys
import threading
import time

import workload_common as wc

STEADY_AFTER_S = 0.5
DATA = [random.random() for _ in range(1_000_000)]
perf_counter = time.perf_counter


def hog():
    while True:
        sorted(DATA)


def spin():
    x = 1.0
    while True:
        x = (x * 1.000001 + 0.25) % 977.0


def wait_for(lock, waiting):
    waiting.set()
    lock.acquire()
    lock.release()


def cpu_of(threads):
    clocks = {"main": time.thread_time()}
    for name, t in threads.items():
        clocks[name] = time.clock_gettime(time.pthread_getcpuclockid(t.ident))
    return clocks


def main():
    args = wc.parse_args(__doc__.splitlines()[0])
    lock = threading.Lock()
    lock.acquire()
    waiting = threading.Event()
    threads = {"lock_waiter": threading.Thread(target=wait_for,
                                               args=(lock, waiting),
                                               daemon=True),
               "gil_hog": threading.Thread(target=hog, daemon=True),
               "gil_waiter": threading.Thread(target=spin, daemon=True)}
    # lock_waiter blocks on the lock before the hog starts: started later,
    # it first waited for the GIL behind 180 ms sorts, and was rightly
    # seen in a GIL wait up to a second into the run.
    threads["lock_waiter"].start()
    waiting.wait()
    time.sleep(0.05)
    threads["gil_hog"].start()
    threads["gil_waiter"].start()
    results = {name: {"tid": t.native_id} for name, t in threads.items()}
    results["main"] = {"tid": threading.get_native_id()}
    truth = {"workload": "gil_wait", "threads": results,
             "steady_after_s": STEADY_AFTER_S, "reason": "deadline"}
    truth["ready_monotonic_s"] = time.monotonic()
    start = perf_counter()
    wc.announce_ready(args)
    try:
        time.sleep(STEADY_AFTER_S)
        t0, before = perf_counter(), cpu_of(threads)
        time.sleep(max(0.0, start + args.seconds - perf_counter()))
        t1, after = perf_counter(), cpu_of(threads)
        for name, cpu in after.items():
            results[name]["steady_cpu_pct"] = round(
                100.0 * (cpu - before[name]) / (t1 - t0), 2)
    except wc.Stop:
        truth["reason"] = "sigterm"
    wc.write_truth(args, truth)
    # Exit with every thread still in its role: stopped and joined first,
    # they showed gone (the waiter running) in the snapshots just before
    # the exit, which a test may judge as steady: it cannot tell from
    # pytop's clock when the run ended.
    sys.stdout.flush()
    os._exit(args.exit_status)


if __name__ == "__main__":
    main()
