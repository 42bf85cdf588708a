"""thread_names.py - threads with names the program gave them, for
test_thread_py_names: one named at its start, one renamed after pytop
has first seen it (t.name = ...), one whose name holds control and
bidirectional characters, and the main thread renamed.

Usage: thread_names.py TRUTH SECONDS.  RENAME_AFTER_S after its threads
start it renames the second one, then writes TRUTH (JSON: {"names":
{native thread id: name}}) and runs on until SECONDS have passed.
"""
import json
import os
import sys
import threading
import time

RENAME_AFTER_S = 1.2

stop = threading.Event()


def spin():
    while not stop.is_set():
        sum(range(500))


def rest():
    stop.wait()


def main():
    truth, seconds = sys.argv[1], float(sys.argv[2])
    t0 = time.monotonic()
    threading.current_thread().name = "main-renamed"
    threads = [
        threading.Thread(target=spin, name="alpha-worker"),
        threading.Thread(target=rest, name="before-rename"),
        threading.Thread(target=rest, name="bad\x1b[2J\u202e!"),
    ]
    for t in threads:
        t.start()
    time.sleep(RENAME_AFTER_S)
    threads[1].name = "after-rename"
    names = {str(threading.main_thread().native_id): threading.main_thread().name}
    names.update({str(t.native_id): t.name for t in threads})
    with open(truth + ".tmp", "w") as f:
        json.dump({"names": names}, f)
    os.rename(truth + ".tmp", truth)
    time.sleep(max(0.0, seconds - (time.monotonic() - t0)))
    stop.set()
    for t in threads:
        t.join()


main()
