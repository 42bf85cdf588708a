"""stale_source.py SECONDS DIR - runs hot() of DIR/stale_mod.py (written
before the process started, by whoever launched it) for SECONDS.  Once
DIR/rewrite-now exists, the file is rewritten with two comment lines on
top (every line two further down: the profile's line numbers no longer
match its text) and DIR/rewritten created."""
import os
import sys
import time

seconds = float(sys.argv[1])
directory = sys.argv[2]
path = os.path.join(directory, "stale_mod.py")
sys.path.insert(0, directory)
import stale_mod  # noqa: E402

end = time.perf_counter() + seconds
rewritten = False
while time.perf_counter() < end:
    stale_mod.hot(0.01)
    if not rewritten and os.path.exists(os.path.join(directory, "rewrite-now")):
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write("# rewritten while running\n# (two lines more)\n" + text)
        with open(os.path.join(directory, "rewritten"), "w") as f:
            f.write("%d\n" % os.getpid())
        rewritten = True
