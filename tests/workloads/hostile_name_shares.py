"""hostile_name_shares.py --dir DIR - three functions with names no
profiler should print raw split one thread's CPU in short rounds (5 / 3 /
2 ms by default: 50 / 30 / 20 %), each call timed with time.perf_counter:

  ctl      named ctl<ESC>[2J<BEL>name (a terminal would clear its screen
           and ring)
  long     named L + 9 999 x, a 10 000-character name
  latin1   in_bad_file, defined in DIR/hostile_<E9><FF>.py, a file whose
           name is not UTF-8 (Python keeps it as lone surrogates)

Each is compiled from source with those names, so the code objects carry
them exactly as a program that generates code would.

Truth (JSON, see workload_common.write_truth):
  functions: {ctl|long|latin1: {seconds}}
  wall:      seconds since the first statement of this file
"""
import time

T0 = time.perf_counter()

import os  # noqa: E402

import workload_common as wc  # noqa: E402

SPIN = (
    "    end = perf_counter() + budget\n"
    "    x = 0\n"
    "    while perf_counter() < end:\n"
    "        x += 1\n"
    "    return x\n"
)
CTL_NAME = "ctl\x1b[2J\x07name"
LONG_NAME = "L" + "x" * 9999


def define(name, filename, text_name):
    """A function compiled from source, named `name` on its code object
    (set there when it is no identifier)."""
    source = "def %s(budget):\n%s" % (text_name, SPIN)
    space = {"perf_counter": time.perf_counter}
    exec(compile(source, filename, "exec"), space)
    fn = space[text_name]
    if name != text_name:
        code = fn.__code__
        fn.__code__ = code.replace(co_name=name, co_qualname=name) \
            if hasattr(code, "co_qualname") else code.replace(co_name=name)
    return fn


def bad_file(directory):
    path = os.path.join(os.fsencode(directory), b"hostile_\xe9\xff.py")
    with open(path, "w") as f:
        f.write("def in_bad_file(budget):\n" + SPIN)
    return define("in_bad_file", os.fsdecode(path), "in_bad_file")


def main():
    def extra(ap):
        ap.add_argument("--dir", required=True,
                        help="where to write the file with a non-UTF-8 name")
        ap.add_argument("--round-ms", type=float, default=10.0)
    args = wc.parse_args(__doc__, extra)
    share = {"ctl": 0.5, "long": 0.3, "latin1": 0.2}
    fns = {"ctl": define(CTL_NAME, "hostile_shares_ctl.py", "ctl_name"),
           "long": define(LONG_NAME, "hostile_shares_long.py", "long_name"),
           "latin1": bad_file(args.dir)}
    spent = dict.fromkeys(share, 0.0)
    wc.announce_ready(args)
    end = time.perf_counter() + args.seconds
    current = None
    try:
        while time.perf_counter() < end:
            for key in ("ctl", "long", "latin1"):
                current = (key, time.perf_counter())
                fns[key](share[key] * args.round_ms / 1000.0)
                spent[key] += time.perf_counter() - current[1]
                current = None
    except wc.Stop:
        pass
    finally:
        if current is not None:
            spent[current[0]] += time.perf_counter() - current[1]
    wc.write_truth(args, {
        "functions": {k: {"seconds": v} for k, v in spent.items()},
        "wall": time.perf_counter() - T0,
    })
    wc.finish(args)


main()
