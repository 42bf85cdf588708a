"""hostile_forks.py SECONDS [RATE] - a fork storm: RATE (default 200)
children a second for SECONDS, each a copy of this interpreter that burns
2 ms in Python, sleeps 100 ms and leaves with os._exit, so processes come
and go faster than anything following them can look them up.  At most
MAX_ALIVE children live at once (the parent waits for one to end), so
that a busy machine does not pile them up by the hundred."""
import os
import sys
import time

seconds = float(sys.argv[1])
rate = float(sys.argv[2]) if len(sys.argv) > 2 else 200.0
MAX_ALIVE = 32  # as many as pytop -s samples at once (FOLLOW_MAX_SAMPLED)


def child_work():
    """2 ms of Python, then 100 ms asleep: a child sampled now and then,
    alive long enough for pytop -s to follow a score of them at once,
    without dozens of CPU-bound children starving a busy machine."""
    end = time.perf_counter() + 0.002
    x = 0
    while time.perf_counter() < end:
        x += 1
    time.sleep(0.1)
    return x


def reap(alive):
    """Reap what has ended; wait while MAX_ALIVE still live.  Returns how
    many live."""
    while alive > 0:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG if alive < MAX_ALIVE else 0)
        except ChildProcessError:
            return 0
        if pid == 0:
            break
        alive -= 1
    return alive


def main():
    start = time.perf_counter()
    n = alive = 0
    while time.perf_counter() - start < seconds:
        if os.fork() == 0:
            child_work()
            os._exit(0)
        n += 1
        alive = reap(alive + 1)
        pause = start + n / rate - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
    while True:
        try:
            os.wait()
        except ChildProcessError:
            break


main()
