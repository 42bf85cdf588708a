"""thread_states.py - one thread in each state pytop's threads panel tells
apart, for as long as the workload runs:

  gil_bound    a pure-Python loop: on a CPU, holding the GIL
  native       hashlib.sha256 over a 64 MiB buffer, again and again:
               OpenSSL hashes any buffer over 2047 bytes with the GIL
               released, so the thread is on a CPU without the GIL except
               for the moment it takes the GIL back between two hashes
  sleeper      time.sleep in a loop: off CPU
  lock_waiter  blocked on a threading.Lock the main thread holds: off CPU
  short_lived  spins for a while, then ends SHORT_LIVED_S after the
               others are up: gone from then on
  main         waits in time.sleep for the run to end: off CPU

Each thread is named after its role (threading.Thread(name=...); from
Python 3.14 on the OS thread name follows it).

Truth (JSON), written once every thread has started and again at the end:
threads: {role: {tid, name, cpu, steady_cpu_pct}} where tid is
threading.get_native_id(), cpu the thread's CPU seconds at the end, and
steady_cpu_pct its CPU use in percent of one CPU from STEADY_AFTER_S after
the start to the end (the main thread reads every thread's CPU clock then;
both absent in the first writing and for short_lived); sha256: how hashlib
implements sha256 here; short_lived_s; steady_after_s; ready_monotonic_s,
when every thread had started (CLOCK_MONOTONIC, as time.monotonic): on a
busy machine that can be well over a second after the interpreter started.
The process ends with os._exit, every thread still in its role.
"""
import hashlib
import os
import sys
import threading
import time

import workload_common as wc

BUFFER = bytes(64 << 20)
SHORT_LIVED_S = 0.5
STEADY_AFTER_S = 1.0

perf_counter = time.perf_counter


def spin(stop):
    x = 1.0
    while not stop:
        for _ in range(10000):
            x = (x * 1.000001 + 0.25) % 977.0
    return x


def hash_loop(stop):
    while not stop:
        hashlib.sha256(BUFFER).digest()


def sleep_loop(stop):
    while not stop:
        time.sleep(0.2)


def wait_for(lock):
    lock.acquire()
    lock.release()


def short_spin(stop):
    deadline = perf_counter() + SHORT_LIVED_S
    x = 2.0
    while not stop and perf_counter() < deadline:
        x = (x * 1.000003 + 0.5) % 983.0
    return x


def cpu_clocks(threads):
    """Each live role's CPU seconds so far, read from this thread."""
    clocks = {"main": time.thread_time()}
    for t in threads:
        if t.name != "short_lived":
            clocks[t.name] = time.clock_gettime(
                time.pthread_getcpuclockid(t.ident))
    return clocks


def sleep_until(deadline):
    while True:
        left = deadline - perf_counter()
        if left <= 0:
            return
        time.sleep(left)


def run_role(role, fn, arg, started, results):
    results[role] = {"tid": threading.get_native_id(),
                     "name": threading.current_thread().name, "cpu": 0.0}
    started.release()
    fn(arg)
    results[role]["cpu"] = time.thread_time()


def main():
    args = wc.parse_args(__doc__.splitlines()[0])
    stop = []            # the loops end when this list becomes non-empty
    lock = threading.Lock()
    lock.acquire()       # held by main until the end: lock_waiter blocks
    started = threading.Semaphore(0)
    results = {"main": {"tid": threading.get_native_id(),
                        "name": threading.current_thread().name,
                        "cpu": 0.0}}
    roles = (("gil_bound", spin, stop), ("native", hash_loop, stop),
             ("sleeper", sleep_loop, stop), ("lock_waiter", wait_for, lock),
             ("short_lived", short_spin, stop))
    threads = [threading.Thread(target=run_role, name=role,
                                args=(role, fn, arg, started, results))
               for role, fn, arg in roles]
    for t in threads:
        t.start()
    for _ in threads:
        started.acquire()
    truth = {"workload": "thread_states", "threads": results,
             "sha256": repr(hashlib.sha256), "short_lived_s": SHORT_LIVED_S,
             "steady_after_s": STEADY_AFTER_S,
             "ready_monotonic_s": time.monotonic()}
    wc.write_truth(args, truth)
    start = perf_counter()
    wc.announce_ready(args)
    reason = "deadline"
    steady = None
    try:
        sleep_until(start + min(STEADY_AFTER_S, args.seconds))
        steady = (perf_counter(), cpu_clocks(threads))
        sleep_until(start + args.seconds)
    except wc.Stop:
        reason = "sigterm"
    if steady is not None:
        now, cpu = perf_counter(), cpu_clocks(threads)
        for role, before in steady[1].items():
            results[role]["steady_cpu_pct"] = round(
                100.0 * (cpu[role] - before) / (now - steady[0]), 2)
            results[role]["cpu"] = cpu[role]
    truth["reason"] = reason
    wc.write_truth(args, truth)
    # Exit with every thread still in its role: stopped and joined first,
    # they showed other states in the snapshots just before the exit, which
    # the test judges as steady: it cannot tell from pytop's clock when the
    # run ended (only when it began, ready_monotonic_s).
    sys.stdout.flush()
    os._exit(args.exit_status)


if __name__ == "__main__":
    main()
