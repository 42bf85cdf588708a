"""hostile_threads.py SECONDS [RATE] - thread churn: RATE (default 200)
threads started and ended every second for SECONDS, each burning about a
millisecond of CPU, so that a reader's cached thread list is always stale
and thread states are freed and reused under it."""
import sys
import threading
import time

seconds = float(sys.argv[1])
rate = float(sys.argv[2]) if len(sys.argv) > 2 else 200.0


def short_life():
    end = time.perf_counter() + 0.001
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def main():
    start = time.perf_counter()
    alive = []
    n = 0
    while time.perf_counter() - start < seconds:
        t = threading.Thread(target=short_life)
        t.start()
        alive.append(t)
        n += 1
        alive = [a for a in alive if a.is_alive()]
        pause = start + n / rate - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
    for t in alive:
        t.join()


main()
