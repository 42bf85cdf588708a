"""service_soak.py - what a long-running Python service does to a
profiler: a thread per request (thread churn), templates compiled at run
time under fresh names and file names (code churn), and buffers of
varying size allocated and dropped (memory churn), for ever.

usage: service_soak.py [--rps N] [--seconds S]
  --rps      requests started per second (default 40), each on a new
             thread that compiles a fresh template every other request,
             burns about 4 ms of CPU, and keeps a buffer of 64 KiB to
             4 MiB in a rolling cache of at most 64 MiB
  --seconds  how long to run (default 0: until killed)
"""
import argparse
import collections
import random
import threading
import time

perf_counter = time.perf_counter

TEMPLATE = """\
def render_{k}(ctx):
    out = []
    for i in range(ctx["n"]):
        out.append("<li>%d: %s</li>" % (i, ctx["title"]))
    return "".join(out)
"""

CACHE_LIMIT = 64 << 20
cache = collections.deque()
cache_bytes = 0
cache_lock = threading.Lock()
counter = 0
counter_lock = threading.Lock()


def next_k():
    global counter
    with counter_lock:
        counter += 1
        return counter


def render(k):
    if k % 2 == 0:
        ns = {}
        exec(compile(TEMPLATE.format(k=k), "<template-%d>" % k, "exec"), ns)
        fn = ns["render_%d" % k]
    else:
        fn = lambda ctx: "".join("<p>%d</p>" % i for i in range(ctx["n"]))
    return fn({"n": 200, "title": "t%d" % k})


def burn(seconds):
    deadline = perf_counter() + seconds
    x = 1.0
    while perf_counter() < deadline:
        x = (x * 1.000001 + 0.25) % 977.0
    return x


def remember(size):
    global cache_bytes
    buf = bytearray(size)
    buf[::4096] = b"x" * len(buf[::4096])  # touch every page
    with cache_lock:
        cache.append(buf)
        cache_bytes += size
        while cache_bytes > CACHE_LIMIT:
            cache_bytes -= len(cache.popleft())


def request():
    k = next_k()
    render(k)
    burn(0.004)
    remember(random.randint(64 << 10, 4 << 20))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rps", type=float, default=40.0)
    ap.add_argument("--seconds", type=float, default=0.0)
    a = ap.parse_args()
    start = perf_counter()
    n = 0
    live = []
    try:
        while a.seconds <= 0 or perf_counter() - start < a.seconds:
            t = threading.Thread(target=request, name="request-%d" % n)
            t.start()
            live.append(t)
            live = [t for t in live if t.is_alive()]
            n += 1
            ahead = start + n / a.rps - perf_counter()
            if ahead > 0:
                time.sleep(ahead)
    except KeyboardInterrupt:
        pass
    for t in live:
        t.join()


main()
