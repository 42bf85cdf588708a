"""Thirty-two threads busy in native code at once: each hashes a 256 KiB
buffer over and over with hashlib.sha256, which releases the GIL, so all
of them are runnable together - the case that stalls samplers which stop
threads to unwind them (py-spy issue #872).

usage: native32.py ITERATIONS_PER_THREAD REPORT_FILE
"""
import hashlib

from report import run_threads

NTHREADS = 32
BLOCK = bytes(range(256)) * 1024  # 256 KiB


def spin(n):
    for _ in range(n):
        hashlib.sha256(BLOCK).digest()


run_threads(spin, NTHREADS, "hash")
