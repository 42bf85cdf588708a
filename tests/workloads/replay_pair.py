"""Two threads with distinct stacks for SECONDS (argv[1], default 2.2): the
main thread in mid -> leaf, the thread named w1 in worker -> other -> leaf.
The replay tests record it and replay the recording."""
import sys
import threading
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def mid():
    return leaf(20000)


def other():
    return leaf(5000)


def worker(secs):
    end = time.time() + secs
    while time.time() < end:
        other()


secs = float(sys.argv[1]) if len(sys.argv) > 1 else 2.2
t = threading.Thread(target=worker, args=(secs,), name='w1')
t.start()
end = time.time() + secs
while time.time() < end:
    mid()
t.join()
