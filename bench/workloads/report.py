"""How a bench workload hands its own figures to bench/run.

A workload's stdout is shared with pytop's JSON in launch mode, so the
figures go to a file named on the command line instead.
"""
import resource
import sys
import threading
import time


def write_report(path, wall_s):
    """Record the wall time of the fixed work and this process's CPU so
    far (all threads; bench/run subtracts it from pytop's rusage, which
    includes the reaped target)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    with open(path, "w") as f:
        f.write("wall %.9f\ncpu %.9f\n" % (wall_s, ru.ru_utime + ru.ru_stime))


def run_threads(work, nthreads, prefix):
    """The bench's threaded workloads: nthreads threads each run
    work(ITERATIONS) (argv[1]); the wall time of all of them goes to the
    report file (argv[2])."""
    n, report = int(sys.argv[1]), sys.argv[2]
    workers = [threading.Thread(target=work, args=(n,), name="%s-%d" % (prefix, k))
               for k in range(nthreads)]
    t0 = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    write_report(report, time.perf_counter() - t0)
