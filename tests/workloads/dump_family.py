"""dump_family.py - a parent with two Python children and one non-Python
child, for pytop dump -s.

Each Python child (--child) writes its PID and the line it parks on to
its own truth file, then blocks on a lock it never gets inside
child_parked().  The parent starts them and `tail --pid`, waits for the
children's truths, writes its own (every child's PID, tail's),
says it is ready and blocks too.  SIGTERM ends the parent; the children
die with it (they all poll their parent).
"""
import json
import os
import subprocess
import sys
import threading
import time

from workload_common import parse_args, write_truth, announce_ready

never = threading.Lock()
never.acquire()


def child_parked(truth):
    line = sys._getframe().f_lineno + 5
    with open(truth + '.tmp', 'w') as f:
        json.dump({'pid': os.getpid(), 'function': 'child_parked',
                   'file': __file__, 'line': line}, f)
    os.rename(truth + '.tmp', truth)
    never.acquire()


def orphan_watch(parent):
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(0)


def child(truth):
    threading.Thread(target=orphan_watch, args=(os.getppid(),), daemon=True).start()
    child_parked(truth)


def parent(args):
    truths = [args.truth + '.child%d' % i for i in range(2)]
    kids = [subprocess.Popen([sys.executable, os.path.abspath(__file__), '--child', t])
            for t in truths]
    # Not Python, and gone with the parent however the parent ends.
    sleeper = subprocess.Popen(['tail', '--pid=%d' % os.getpid(), '-f', '/dev/null'])
    while not all(os.path.exists(t) for t in truths):
        time.sleep(0.01)
    children = []
    for t in truths:
        with open(t) as f:
            children.append(json.load(f))
    write_truth(args, {'children': children, 'sleeper': sleeper.pid})
    announce_ready(args)
    try:
        never.acquire()
    finally:
        sleeper.kill()
        for k in kids:
            k.kill()


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] == '--child':
        child(sys.argv[2])
    else:
        parent(parse_args(__doc__))
