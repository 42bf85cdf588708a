"""hostile_sources.py SECONDS DIR [REWRITE_AT [DELETE_AT]] - a module whose
source file changes under the profiler: DIR/hostile_src_mod.py is written
and imported, and its hot() runs for SECONDS.  After REWRITE_AT seconds
(default a third of SECONDS) the file is rewritten with hostile text on the lines hot() ran on (terminal
escapes that would clear the screen and move the cursor, a bell, a C1
control, bytes that are not UTF-8, a 100 000-character line, fewer lines
than before) and DIR/rewritten is created; after DELETE_AT (default two thirds; "asked":
once DIR/delete-now exists) the file is deleted and DIR/deleted created."""
import importlib
import os
import sys
import time

seconds = float(sys.argv[1])
directory = sys.argv[2]
rewrite_at = float(sys.argv[3]) if len(sys.argv) > 3 else seconds / 3
delete_at = sys.argv[4] if len(sys.argv) > 4 else str(2 * seconds / 3)
path = os.path.join(directory, "hostile_src_mod.py")

ORIGINAL = (
    "import time\n"
    "\n"
    "\n"
    "def hot(budget):\n"
    "    end = time.perf_counter() + budget\n"
    "    x = 0\n"
    "    while time.perf_counter() < end:\n"
    "        x += 1\n"
    "        x -= 1\n"
    "        x += 1\n"
    "    return x\n"
)
# The same first lines, then hostile text on the lines the loop ran on.
HOSTILE = (
    ORIGINAL.encode().split(b"    x = 0\n")[0] +
    b"    x = 0\n"
    b"    \x1b[2J\x1b[HHIJACK\x07 \x1b]0;title\x07 \x9b31m\n"
    b"    bad \xff\xfe\xc3 utf8 \xed\xa0\x80 surrogate\n"
    b"    " + b"y" * 100000 + b"\n"
)


def mark(name):
    with open(os.path.join(directory, name), "w") as f:
        f.write("%d\n" % os.getpid())


def delete_due(elapsed):
    if delete_at == "asked":
        return os.path.exists(os.path.join(directory, "delete-now"))
    return elapsed > float(delete_at)


def main():
    with open(path, "w") as f:
        f.write(ORIGINAL)
    sys.path.insert(0, directory)
    mod = importlib.import_module("hostile_src_mod")
    start = time.perf_counter()
    stage = 0
    while time.perf_counter() - start < seconds:
        mod.hot(0.01)
        elapsed = time.perf_counter() - start
        if stage == 0 and elapsed > rewrite_at:
            with open(path, "wb") as f:
                f.write(HOSTILE)
            mark("rewritten")
            stage = 1
        elif stage == 1 and delete_due(elapsed):
            os.unlink(path)
            mark("deleted")
            stage = 2


main()
