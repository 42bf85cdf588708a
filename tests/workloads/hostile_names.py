"""hostile_names.py SECONDS DIR - names no profiler should print raw: for
SECONDS it takes turns running three functions, each for 20 ms:

  L + 9 999 x              a 10 000-character name
  ctl<ESC>[2J<BEL>name     control characters in the name (a terminal
                           would clear its screen and ring)
  in_bad_file              defined in DIR/hostile_<E9><FF>.py, a file whose
                           name is not UTF-8 (Python keeps it as lone
                           surrogates, \\udce9\\udcff)

Each is compiled from source with those names, so the code objects carry
them exactly as a program that generates code would."""
import os
import sys
import time

seconds = float(sys.argv[1])
directory = os.fsencode(sys.argv[2])

SPIN = (
    "    end = perf_counter() + budget\n"
    "    x = 0\n"
    "    while perf_counter() < end:\n"
    "        x += 1\n"
    "    return x\n"
)
LONG_NAME = "L" + "x" * 9999
CTL_NAME = "ctl\x1b[2J\x07name"


def define(name, filename, text_name=None):
    source = "def %s(budget):\n%s" % (text_name or name, SPIN)
    space = {"perf_counter": time.perf_counter}
    exec(compile(source, filename, "exec"), space)
    fn = space[text_name or name]
    if text_name is not None:  # not an identifier: set on the code itself
        fn.__code__ = fn.__code__.replace(co_name=name, co_qualname=name) \
            if hasattr(fn.__code__, "co_qualname") else \
            fn.__code__.replace(co_name=name)
    return fn


def bad_file():
    path = os.path.join(directory, b"hostile_\xe9\xff.py")
    source = "def in_bad_file(budget):\n" + SPIN
    with open(path, "w") as f:
        f.write(source)
    return define("in_bad_file", os.fsdecode(path))


def main():
    funcs = [define(LONG_NAME, "hostile_names_long.py"),
             define(CTL_NAME, "hostile_names_ctl.py", text_name="ctl_name"),
             bad_file()]
    end = time.perf_counter() + seconds
    i = 0
    while time.perf_counter() < end:
        funcs[i % 3](0.02)
        i += 1


main()
