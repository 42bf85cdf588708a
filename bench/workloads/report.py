"""How a bench workload hands its own figures to bench/run.

A workload's stdout is shared with pytop's JSON in launch mode, so the
figures go to a file named on the command line instead.
"""
import resource


def write_report(path, wall_s):
    """Record the wall time of the fixed work and this process's CPU so
    far (all threads; bench/run subtracts it from pytop's rusage, which
    includes the reaped target)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    with open(path, "w") as f:
        f.write("wall %.9f\ncpu %.9f\n" % (wall_s, ru.ru_utime + ru.ru_stime))
