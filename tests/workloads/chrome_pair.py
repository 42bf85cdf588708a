"""Two threads for 1.5 s: main_loop -> leaf on the main thread, worker_spin
on a thread named spinner.  The chrome export tests record it."""
import threading
import time


def leaf(n):
    return sum(i * i for i in range(n))


def main_loop(secs):
    end = time.time() + secs
    while time.time() < end:
        leaf(3000)


def worker_spin(secs):
    end = time.time() + secs
    while time.time() < end:
        sum(range(5000))


t = threading.Thread(target=worker_spin, args=(1.5,), name='spinner')
t.start()
main_loop(1.5)
t.join()
