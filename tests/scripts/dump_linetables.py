"""Dump CPython's own line tables and its answers, for tests/test_linetable.c.

For every code object (found recursively through co_consts) of a set of
stdlib modules, compiled from source (nothing is imported or executed),
print two lines:

    C <firstlineno> <code units> <co_linetable as hex, or "-" if empty>
    L <line of unit 0> <line of unit 1> ...

The expected lines come from co_lines(): (start, end, line) byte ranges;
line None, or a unit no range covers, is -1.  Runs on CPython 3.11+.
Usage: dump_linetables.py [module ...]
"""
import importlib.util
import sys

MODULES = [
    "typing", "inspect", "argparse", "ast", "dataclasses", "enum",
    "functools", "collections", "json.decoder", "json.encoder",
    "re._parser", "re._compiler", "email.message", "email.utils",
    "email._header_value_parser", "http.client", "urllib.parse",
    "logging", "subprocess", "tarfile", "difflib", "pydoc", "_pydecimal",
    "unittest.case", "asyncio.base_events", "threading", "configparser",
    "textwrap", "calendar", "statistics", "fractions", "pickle", "shutil",
    "tempfile", "doctest", "optparse", "traceback", "tokenize", "dis",
]


def code_objects(code):
    yield code
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            yield from code_objects(const)


def expected_lines(code):
    units = len(code.co_code) // 2
    lines = [-1] * units
    for start, end, line in code.co_lines():
        for unit in range(start // 2, min(end // 2, units)):
            lines[unit] = -1 if line is None else line
    return units, lines


def dump(code, out):
    units, lines = expected_lines(code)
    table = code.co_linetable.hex() or "-"
    out.write(f"C {code.co_firstlineno} {units} {table}\n")
    out.write("L " + " ".join(map(str, lines)) + "\n")


def main(names):
    out = sys.stdout
    out.write(f"# {sys.version.split()[0]}\n")
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        with open(spec.origin, "rb") as f:
            source = f.read()
        for code in code_objects(compile(source, spec.origin, "exec")):
            dump(code, out)


if __name__ == "__main__":
    main(sys.argv[1:] or MODULES)
