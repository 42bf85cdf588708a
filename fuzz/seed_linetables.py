"""Turn tests/scripts/dump_linetables.py output (stdin) into fuzz seeds for
fuzz_linetable: 4 bytes of firstlineno (little-endian) then co_linetable.

Keeps a spread of tables (short, long, every entry code seen) so the seed
corpus stays small.  Usage:
  pythonX.Y tests/scripts/dump_linetables.py | python3 fuzz/seed_linetables.py DIR PREFIX COUNT
"""
import struct
import sys


def main():
    out, prefix, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tables = []
    for line in sys.stdin:
        f = line.split()
        if len(f) == 4 and f[0] == "C" and f[3] != "-":
            tables.append((int(f[1]), bytes.fromhex(f[3])))
    tables.sort(key=lambda t: len(t[1]))
    # Evenly spaced by size, from the shortest to the longest under 4 KiB.
    tables = [t for t in tables if len(t[1]) <= 4096]
    step = max(1, len(tables) // count)
    for i, (first, table) in enumerate(tables[::step][:count]):
        with open(f"{out}/{prefix}-{i:02d}", "wb") as fh:
            fh.write(struct.pack("<i", first) + table)


main()
