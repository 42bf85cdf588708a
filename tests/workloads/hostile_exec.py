"""hostile_exec.py DELAY PROGRAM [ARGS...] - a Python program that burns
CPU for DELAY seconds, then replaces itself with PROGRAM (not Python):
the process pytop samples keeps its PID but loses its interpreter."""
import os
import sys
import time


def burn(seconds):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


burn(float(sys.argv[1]))
os.execv(sys.argv[2], sys.argv[2:])
