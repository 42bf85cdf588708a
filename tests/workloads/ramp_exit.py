"""Ramp the RSS to MIB MiB until the moment it exits, then tell what the
kernel says of this process.

  ramp_exit.py REPORT MIB EXIT_AT

Keeps MIB MiB of written (so resident) memory, one MiB at a time, evenly
paced so that the last one is written EXIT_AT seconds after start, then
writes to REPORT, as one JSON object, its own peak RSS (getrusage's
ru_maxrss and VmHWM, in bytes) and page faults (ru_minflt, ru_majflt), and
exits.  Growing until just before pytop's next refresh is the point:
pytop's last refresh before the exit saw about half of it.
"""
import json
import os
import resource
import sys
import time

START = time.monotonic()
CHUNK = 1 << 20


def ramp(mib, until):
    kept = []
    for i in range(mib):
        kept.append(bytearray(b"\x01") * CHUNK)  # written: resident
        due = START + until * (i + 1) / mib
        while time.monotonic() < due:
            time.sleep(0.001)
    return kept


def vm_hwm():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def main():
    report, mib, exit_at = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    kept = ramp(mib, exit_at)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    facts = {"ru_maxrss": ru.ru_maxrss * 1024, "vm_hwm": vm_hwm(),
             "minflt": ru.ru_minflt, "majflt": ru.ru_majflt, "kept": len(kept)}
    with open(report, "w") as f:
        json.dump(facts, f)
    # Exit without the interpreter's long teardown of 600 one-MiB objects:
    # what the report says must be what the kernel ends up counting.
    os._exit(0)


main()
