#!/usr/bin/env python3
"""pytop's built-in demo: a small program with four kinds of hot spots.

Run it under pytop (`pytop --demo`) and each of these shows up as a
function of its own:

  python_hot_loop   pure-Python arithmetic (time spent in the interpreter)
  native_hashing    hashlib / zlib / sorted on big buffers (time in C code)
  syscall_storm     many tiny os.write / os.stat calls (time in the kernel)
  grow_memory       a list that keeps growing up to a cap, then starts over

plus a background thread ("demo-worker") that alternates between a little
Python work and sleeping, so the thread counts and --idle have something
to show.

Runs until killed, or for --seconds N.  Standard library only, Python 3.11+.
"""

import argparse
import hashlib
import os
import random
import sys
import threading
import time
import zlib

MEMORY_CAP_BYTES = 300 * 1024 * 1024
CHUNK_BYTES = 8 * 1024 * 1024
ROUND_SECONDS = 0.2  # each hot spot runs about this long per round


def python_hot_loop(deadline):
    """Pure-Python arithmetic: every step runs in the bytecode interpreter."""
    total = 0
    n = 0
    while time.perf_counter() < deadline:
        for i in range(2000):
            total += (i * i) % 7 - (i >> 3)
        n += 1
    return total + n


def native_hashing(deadline, data):
    """C code doing the work: hashing, compressing, sorting big inputs."""
    digest = b""
    while time.perf_counter() < deadline:
        digest = hashlib.sha256(data).digest()
        zlib.compress(data[: len(data) // 4], 6)
        sorted(data[:200_000])
    return digest


def syscall_storm(deadline, devnull_fd, path):
    """Many tiny system calls: the time is spent in the kernel."""
    calls = 0
    byte = b"x"
    while time.perf_counter() < deadline:
        for _ in range(200):
            os.write(devnull_fd, byte)
            os.stat(path)
        calls += 400
    return calls


def grow_memory(heap):
    """Adds one chunk to a list that grows to MEMORY_CAP_BYTES, then frees
    it all and starts over, so RSS climbs in a saw-tooth."""
    if len(heap) * CHUNK_BYTES >= MEMORY_CAP_BYTES:
        heap.clear()
    heap.append(bytearray(os.urandom(1024)) * (CHUNK_BYTES // 1024))
    return len(heap) * CHUNK_BYTES


def worker_step(values):
    """The background thread's Python work: a short burst of list edits."""
    for _ in range(5000):
        values.append(random.random())
        if len(values) > 10_000:
            values.pop(0)
    return sum(values)


def background_worker(stop):
    """Runs in its own thread: a little work, then a sleep (off CPU)."""
    values = []
    while not stop.is_set():
        worker_step(values)
        stop.wait(0.05)


def one_round(data, devnull_fd, heap):
    start = time.perf_counter()
    python_hot_loop(start + ROUND_SECONDS)
    native_hashing(time.perf_counter() + ROUND_SECONDS, data)
    syscall_storm(time.perf_counter() + ROUND_SECONDS / 2, devnull_fd,
                  sys.executable)
    return grow_memory(heap)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.0,
                        help="stop after this many seconds (default: run "
                             "until killed)")
    args = parser.parse_args(argv)

    data = os.urandom(2 * 1024 * 1024)
    heap = []
    stop = threading.Event()
    worker = threading.Thread(target=background_worker, args=(stop,),
                              name="demo-worker", daemon=True)
    worker.start()
    devnull_fd = os.open(os.devnull, os.O_WRONLY)
    end = time.monotonic() + args.seconds if args.seconds > 0 else None
    try:
        while end is None or time.monotonic() < end:
            one_round(data, devnull_fd, heap)
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        worker.join(timeout=1.0)
        os.close(devnull_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
