"""zlib_loop.py - the main thread compresses a buffer with zlib.compress
(native code in libz) in a loop inside squeeze(), for test_dump_native:
pytop dump --native must show libz's frames inside squeeze's Python
frame.  Prints "ready PID", then runs SECONDS (argument) and exits 0.
"""
import os
import sys
import time
import zlib

DATA = os.urandom(1 << 16) * 16  # 1 MiB, a millisecond or more per call


def squeeze(deadline):
    n = 0
    while time.monotonic() < deadline:
        n += len(zlib.compress(DATA, 9))
    return n


print("ready", os.getpid(), flush=True)
squeeze(time.monotonic() + float(sys.argv[1]))
