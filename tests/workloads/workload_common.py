"""workload_common.py - what every test workload shares: its command line,
the "I am ready" signal, stopping on SIGTERM, and writing the truth file.

A workload measures its own truth (seconds spent per function, measured with
time.perf_counter or time.thread_time) and writes it as JSON when it ends,
however it ends (deadline reached or SIGTERM), so that the tests can compare
pytop's figures against what really happened.
"""
import argparse
import json
import os
import platform
import signal
import sys
import time


class Stop(Exception):
    """Raised in the main thread by SIGTERM so the truth still gets written."""


def parse_args(description, extra=None):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--seconds", type=float, default=3.0,
                    help="run this long, then write the truth and exit")
    ap.add_argument("--truth", metavar="PATH",
                    help="write the measured truth here as JSON at exit")
    ap.add_argument("--ready-file", metavar="PATH",
                    help="write our pid here once the measured part starts "
                         "(otherwise print 'ready PID' on stdout)")
    ap.add_argument("--exit", type=int, default=0, dest="exit_status",
                    help="exit with this status")
    if extra is not None:
        extra(ap)
    return ap.parse_args()


def _on_sigterm(signum, frame):
    raise Stop()


def announce_ready(args):
    """Tell the test we are in the measured part.  The file is written
    atomically (rename) so a poller never reads it half-written."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    if args.ready_file:
        tmp = args.ready_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(tmp, args.ready_file)
    else:
        print("ready %d" % os.getpid(), flush=True)


def code_info(fn):
    """File, first line and last line of a function, as pytop should see it."""
    code = fn.__code__
    lines = [ln for _, _, ln in code.co_lines() if ln is not None]
    return {
        "file": code.co_filename,
        "line": code.co_firstlineno,
        "last_line": max(lines) if lines else code.co_firstlineno,
        "qualname": code.co_qualname,
    }


def marked_lines(path, marker):
    """Numbers of the lines of the file at path that end with '# LOOP <marker>'."""
    with open(path) as f:
        return [number for number, text in enumerate(f, start=1)
                if text.rstrip().endswith("# LOOP " + marker)]


def write_truth(args, truth):
    """Add what every truth file carries and write it atomically."""
    truth.setdefault("python", platform.python_version())
    truth.setdefault("pid", os.getpid())
    truth.setdefault("exit_status", args.exit_status)
    if not args.truth:
        return
    tmp = args.truth + ".tmp"
    with open(tmp, "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
    os.rename(tmp, args.truth)


def finish(args):
    sys.stdout.flush()
    sys.exit(args.exit_status)
