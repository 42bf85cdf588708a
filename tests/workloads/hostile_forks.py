"""hostile_forks.py SECONDS [RATE] - a fork storm: RATE (default 200)
children a second for SECONDS, each a copy of this interpreter that burns
a few milliseconds in Python and leaves with os._exit, so processes come
and go faster than anything following them can look them up."""
import os
import sys
import time

seconds = float(sys.argv[1])
rate = float(sys.argv[2]) if len(sys.argv) > 2 else 200.0


def child_work():
    end = time.perf_counter() + 0.005
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def main():
    start = time.perf_counter()
    n = 0
    while time.perf_counter() - start < seconds:
        if os.fork() == 0:
            child_work()
            os._exit(0)
        n += 1
        reap()
        pause = start + n / rate - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
    while True:
        try:
            os.wait()
        except ChildProcessError:
            break


main()
