"""hostile_exit.py DELAY STATUS - two threads burn CPU while the main
thread leaves the process abruptly (os._exit, no clean-up) with STATUS
after DELAY seconds: the end comes at a moment the test chose at random,
whatever the sampler is reading."""
import os
import sys
import threading
import time


def burn():
    x = 0
    while True:
        x = (x * 31 + 7) % 1000003


for _ in range(2):
    threading.Thread(target=burn, daemon=True).start()
time.sleep(float(sys.argv[1]))
os._exit(int(sys.argv[2]))
