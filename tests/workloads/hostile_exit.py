"""hostile_exit.py GO_FILE DELAY STATUS - two threads burn CPU while the
main thread waits for GO_FILE (at most 60 s), then DELAY seconds more, and
leaves the process abruptly (os._exit, no clean-up) with STATUS: the end
comes at a moment the test chose at random, whatever the sampler is
reading.  The test creates GO_FILE once every pytop is attached."""
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
end = time.monotonic() + 60
while time.monotonic() < end and not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
time.sleep(float(sys.argv[2]))
os._exit(int(sys.argv[3]))
