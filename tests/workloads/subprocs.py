"""subprocs.py - a family of processes for -s/--subprocesses.

family: a multiprocessing.Pool(2) (the interpreter's default start method,
or --start-method) whose two workers each run one known hot function
(pool_hot_a, pool_hot_b) for --seconds; at the same time a Python child
started by subprocess with sys.executable (child_hot) and a child that
execs a non-Python program (sleep).  Truth: every process's PID, what it
ran and for how long (CPU seconds, measured by the process itself).

churn: for --seconds, children that exit at once (fork + os._exit, and
/bin/true by subprocess), thousands of them, while the thread count jumps
from 1 to --threads and back: twice at once for a second each, then every
25 runs for 0.2 s.  Truth: how many children and the most threads at once.
"""
import os
import signal
import subprocess
import sys
import threading
import time

import workload_common as wc


# Each hot function has its own loop, so that it is the leaf of its
# samples (its "own" time); each returns the CPU and wall seconds it ran
# (always runnable, so a sampler that counts runnable threads sees it for
# its whole wall time, however busy the machine).

def pool_hot_a(seconds):
    x, cpu0, wall0 = 1.0, time.process_time(), time.monotonic()
    while time.monotonic() < wall0 + seconds:
        for _ in range(1000):
            x = (x * 1.000001 + 0.5) % 977.0
    return (os.getpid(), "pool_hot_a", time.process_time() - cpu0,
            time.monotonic() - wall0)


def pool_hot_b(seconds):
    x, cpu0, wall0 = 1.0, time.process_time(), time.monotonic()
    while time.monotonic() < wall0 + seconds:
        for _ in range(1000):
            x = (x * 1.000001 + 0.5) % 977.0
    return (os.getpid(), "pool_hot_b", time.process_time() - cpu0,
            time.monotonic() - wall0)


def child_hot(seconds):
    x, deadline = 1.0, time.monotonic() + seconds
    while time.monotonic() < deadline:
        for _ in range(1000):
            x = (x * 1.000001 + 0.5) % 977.0


def family(args):
    import multiprocessing as mp
    ctx = mp.get_context(args.start_method) if args.start_method else mp.get_context()
    wc.announce_ready(args)
    truth = {"start_method": ctx.get_start_method(), "workers": []}
    child = subprocess.Popen([sys.executable, os.path.abspath(__file__), "child",
                              "--seconds", str(args.seconds)])
    sleeper = subprocess.Popen(["sleep", str(args.seconds)])
    # Pool.terminate() (the with's exit) ends idle workers with SIGTERM and
    # joins them.  Forked workers would inherit announce_ready's
    # Python-level handler, which only acts once the worker runs Python
    # code again: a worker blocked on the task queue's lock took the
    # signal, stayed blocked with no traceback, and terminate() waited for
    # it for ever (3.11, fork, a loaded machine: 2 hangs in 16 short runs,
    # without pytop too).  So the workers get the default action, which
    # the kernel carries out.
    sigterm = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    pool = ctx.Pool(2)
    signal.signal(signal.SIGTERM, sigterm)
    with pool:
        a = pool.apply_async(pool_hot_a, (args.seconds,))
        b = pool.apply_async(pool_hot_b, (args.seconds,))
        for r in (a.get(), b.get()):
            truth["workers"].append({"pid": r[0], "func": r[1], "cpu": r[2],
                                     "wall": r[3]})
    child.wait()
    sleeper.wait()
    truth["child"] = {"pid": child.pid, "func": "child_hot"}
    truth["not_python"] = {"pid": sleeper.pid, "program": "sleep"}
    return truth


def jump_threads(n, stop, hold=0.2):
    """n threads that all live together for `hold` seconds, then back to
    one.  Each waits until the last has started: a thread that ended
    before the last began (a busy machine starts them slowly) would make
    the jump smaller than n, and the next jump's a new high for pytop's
    tables."""
    go = threading.Event()
    ts = [threading.Thread(target=go.wait) for _ in range(n)]
    for t in ts:
        t.start()
    stop.wait(hold)
    go.set()
    for t in ts:
        t.join()


def churn(args):
    wc.announce_ready(args)
    deadline = time.monotonic() + args.seconds
    forks = spawns = jumps = 0
    stop = threading.Event()
    while time.monotonic() < deadline:
        # Two jumps at once, held a second each, so that a test can set
        # its baseline after pytop has seen them however busy the machine
        # (after two, pytop keeps the most threads it will: the 64 latest
        # gone and a jump's); the next every 25 runs.
        if jumps < 2 or spawns % 25 == 0:
            jump_threads(args.threads, stop, 1.0 if jumps < 2 else 0.2)
            jumps += 1
        for _ in range(20):
            pid = os.fork()
            if pid == 0:
                os._exit(0)  # a child that lives for microseconds
            os.waitpid(pid, 0)
            forks += 1
        subprocess.run(["true"])
        spawns += 1
    return {"forks": forks, "spawns": spawns, "jumps": jumps, "max_threads": args.threads + 1}


def main():
    def extra(ap):
        ap.add_argument("mode", choices=["family", "churn", "child"])
        ap.add_argument("--start-method", default=None)
        ap.add_argument("--threads", type=int, default=200)
    args = wc.parse_args(__doc__.splitlines()[0], extra)
    if args.mode == "child":
        child_hot(args.seconds)
        return
    truth = family(args) if args.mode == "family" else churn(args)
    wc.write_truth(args, truth)
    wc.finish(args)


if __name__ == "__main__":
    main()
