"""hostile_exec.py GO_FILE PROGRAM [ARGS...] - a Python program that burns
CPU until GO_FILE exists (at most 60 s), then replaces itself with PROGRAM
(not Python): the process pytop samples keeps its PID but loses its
interpreter.  The test creates GO_FILE once every pytop is attached."""
import os
import sys
import time


def burn_until(path):
    end = time.perf_counter() + 60
    x = 0
    while time.perf_counter() < end and not os.path.exists(path):
        for _ in range(10000):
            x += 1
    return x


burn_until(sys.argv[1])
os.execv(sys.argv[2], sys.argv[2:])
