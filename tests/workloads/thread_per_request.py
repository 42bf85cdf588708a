"""thread_per_request.py - a server that starts one thread per request:
each handler parses (pure Python), hashes its body (C code that releases
the GIL) and renders a reply, and ends a few milliseconds after it began,
often before its CPU counters (10 ms clock ticks) have moved at all.
The main thread accepts a request every millisecond or so and keeps at
most a few handlers alive.

Truth (JSON): requests (handled), reason.
"""
import hashlib
import threading
import time

import workload_common as wc

BODY = bytes(range(256)) * 256  # 64 KiB: hashlib releases the GIL
perf_counter = time.perf_counter


def parse(n):
    fields = {}
    for i in range(200 + n % 50):
        fields["k%d" % i] = i * 3
    return fields


def render(fields):
    return ",".join("%s=%d" % kv for kv in fields.items())


def handle(n, done):
    fields = parse(n)
    fields["digest"] = len(hashlib.sha256(BODY).hexdigest())
    render(fields)
    done.append(n)


def main():
    args = wc.parse_args(__doc__.splitlines()[0])
    done = []
    live = []
    truth = {"workload": "thread_per_request", "reason": "deadline"}
    wc.announce_ready(args)
    deadline = perf_counter() + args.seconds
    n = 0
    try:
        while perf_counter() < deadline:
            t = threading.Thread(target=handle, args=(n, done))
            t.start()
            live.append(t)
            n += 1
            if len(live) >= 4:
                live.pop(0).join()
            time.sleep(0.001)
    except wc.Stop:
        truth["reason"] = "sigterm"
    for t in live:
        t.join()
    truth["requests"] = len(done)
    wc.write_truth(args, truth)
    wc.finish(args)


if __name__ == "__main__":
    main()
