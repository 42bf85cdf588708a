"""threads.py - several threads burn CPU in distinct functions with
different duty cycles (100 %, 50 %, 25 % of wall time wanted), one thread
only sleeps, and the main thread waits for them.

What pytop measures by default is samples of threads that are running:
Linux state R, which is "on a CPU or waiting in a run queue for one".
Under the GIL only the holder runs Python code; a thread waiting for the
GIL sleeps on a futex/condition variable (state S) and a thread in
time.sleep() sleeps too.  So a function's share of running samples is its
thread's share of the R time of all threads.  Each thread measures its own:
CPU time with time.thread_time() plus the time it spent runnable but
waiting for a CPU (run_delay, the second field of
/proc/self/task/TID/schedstat).  On an idle machine run_delay is near zero
and the R share is the CPU share; when other programs load the machine,
woken threads queue for a CPU, still in state R.

For --idle (every thread sampled whether running or not) each thread's
share is its lifetime's share of all lifetimes, also reported.

Truth (JSON): threads: {function: {cpu, run_delay, r_time, lifetime, tid,
file, line, last_line}} where function "<main>" is the main thread (its
waiting leaf frame is in threading.py, so it has no function of its own).
"""
import threading
import time

import workload_common as wc

perf_counter = time.perf_counter
thread_time = time.thread_time


def run_delay():
    """Seconds this thread has been runnable but not on a CPU."""
    path = "/proc/self/task/%d/schedstat" % threading.get_native_id()
    try:
        with open(path) as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def record(results, name, fn, born):
    info = wc.code_info(fn) if fn is not None else {}
    info["cpu"] = thread_time()
    info["run_delay"] = run_delay()
    info["r_time"] = info["cpu"] + info["run_delay"]
    info["lifetime"] = perf_counter() - born
    info["tid"] = threading.get_native_id()
    results[name] = info


def burn_full(stop, results):
    born = perf_counter()
    x = 1.0
    while not stop:
        deadline = perf_counter() + 0.004
        while perf_counter() < deadline:
            x = (x * 1.000001 + 0.25) % 977.0
    record(results, "burn_full", burn_full, born)


def burn_half(stop, results):
    born = perf_counter()
    x = 2.0
    while not stop:
        deadline = perf_counter() + 0.004
        while perf_counter() < deadline:
            x = (x * 1.000003 + 0.5) % 983.0
        time.sleep(0.004)
    record(results, "burn_half", burn_half, born)


def burn_quarter(stop, results):
    born = perf_counter()
    x = 3.0
    while not stop:
        deadline = perf_counter() + 0.002
        while perf_counter() < deadline:
            x = (x * 1.000007 + 0.75) % 991.0
        time.sleep(0.006)
    record(results, "burn_quarter", burn_quarter, born)


def sleeper(stop, results):
    born = perf_counter()
    while not stop:
        time.sleep(0.02)
    record(results, "sleeper", sleeper, born)


WORKERS = (burn_full, burn_half, burn_quarter, sleeper)


def main():
    born = perf_counter()
    args = wc.parse_args(__doc__.splitlines()[0])
    stop = []          # a thread stops when this list becomes non-empty
    results = {}
    threads = [threading.Thread(target=fn, args=(stop, results),
                                name=fn.__name__) for fn in WORKERS]
    for t in threads:
        t.start()
    wc.announce_ready(args)
    reason = "deadline"
    try:
        time.sleep(args.seconds)
    except wc.Stop:
        reason = "sigterm"
    stop.append(True)
    for t in threads:
        t.join()
    record(results, "<main>", None, born)
    wc.write_truth(args, {"workload": "threads", "reason": reason,
                          "threads": results})
    wc.finish(args)


if __name__ == "__main__":
    main()
