"""A leak beside ten times as much churn, for pytop's memory columns.

  leak_churn.py large ROUNDS   each round keeps one 40 MiB buffer (the
                               line marked LEAK) and makes ten more, each
                               replacing the one before (CHURN), so that
                               line allocates ten times the bytes and frees
                               as much.  40 MiB is above glibc's largest
                               dynamic mmap threshold (32 MiB), so every
                               churn buffer is mapped, faulted in and
                               unmapped again: RSS really goes up and down.
  leak_churn.py large ROUNDS HOLD
                               then keeps it all HOLD seconds before exiting
                               (a live process whose RSS stays up, for the
                               header's growth rate)
  leak_churn.py small ROUNDS   the hard case: each round keeps 2,000 small
                               tuples (SMALL_LEAK) and builds and drops a
                               list of 20,000 (SMALL_CHURN); pymalloc
                               reuses freed pools, so the first code to
                               touch a fresh pool takes the fault.

Prints "leaked N" (the bytes it keeps on purpose) and its peak RSS, and
exits.
"""
import resource
import sys
import time

KEPT = []
SCRATCH = None
CHUNK = 40 << 20


def leak_large():
    KEPT.append(bytearray(b"\x01") * CHUNK)  # LEAK


def churn_large():
    global SCRATCH
    for _ in range(10):
        SCRATCH = bytearray(b"\x01") * CHUNK  # CHURN


def leak_small():
    KEPT.extend((i, i) for i in range(2000))  # SMALL_LEAK


def churn_small():
    junk = [(i, i) for i in range(20000)]  # SMALL_CHURN
    return len(junk)


def main():
    mode, rounds = sys.argv[1], int(sys.argv[2])
    for _ in range(rounds):
        if mode == "large":
            leak_large()
            churn_large()
        else:
            leak_small()
            churn_small()
    leaked = sum(len(x) for x in KEPT) if mode == "large" else 0
    print("leaked %d" % leaked)
    print("maxrss %d KiB" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    sys.stdout.flush()
    if len(sys.argv) > 3:
        time.sleep(float(sys.argv[3]))


main()
