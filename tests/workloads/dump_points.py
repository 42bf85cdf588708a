"""dump_points.py - threads parked at known points, for test_dump.

Five threads stop where the test can name them: the main thread blocked on
a lock it can never take, "gil-spinner" holding the GIL in a one-line loop,
"lock-waiter" blocked on a lock, and "napper" asleep in time.sleep with
locals of every kind pytop dump --locals shows, and "deep" asleep 2100
calls down, past pytop's frame limit.  A reporter thread waits
until all five are at their parking lines, writes what Python itself sees
(sys._current_frames(): each frame's qualified name, file, line, source
line, and every local's repr) to the truth file, and ends; then the
workload says it is ready and stays parked until SIGTERM.

Values pytop cannot show as Python would (other types) are expected as
"<TYPE object at 0xADDR>"; values longer than pytop's documented bounds
(man pytop, DUMP) are expected shortened as the man page says.
"""
import linecache
import os
import sys
import threading
import time

from workload_common import parse_args, write_truth

# pytop dump's documented bounds (man pytop, DUMP).
MAX_ITEMS = 100   # items shown per container, then ", ..."
MAX_CHARS = 256   # characters of a str or bytes shown, then "..."
MAX_DEPTH = 6     # containers nested deeper are shown as [...] {...} (...)

PARKED = {}       # thread ident -> the line it parks on
never = threading.Lock()
never.acquire()


def park_here():
    """Record that the caller's next line is where it parks."""
    caller = sys._getframe(1)
    PARKED[threading.get_ident()] = (caller.f_code, caller.f_lineno + 1)


def spin_with_gil(limit):
    count = 3
    PARKED[threading.get_ident()] = (sys._getframe().f_code, sys._getframe().f_lineno + 1)
    while limit: count += 0


def wait_on_lock(numbers, label="waiter"):
    mapping = {'a': False, 'b': (1, 2, 3)}
    park_here()
    never.acquire()


class Attrs:
    def __init__(self):
        self.b, self.a, self.z = 1, 'two', [3]
        del self.b
        self.b = (4,)


def nap(seconds, *extra, flag=None, **options):
    nothing = None
    yes, no = True, False
    small, negative, zero = 7, -1234, 0
    huge = 2 ** 100 + 12345
    huge_negative = -(10 ** 40)
    floats = [0.1, 1e16, 1.5e-7, -0.0, 2.5, 1e22, 123456789.123, 1 / 3,
              float('inf'), -float('inf'), 5e-324, 1.7976931348623157e308]
    nan = float('nan')
    empty_str = ''
    text = 'h\u00e9llo w\u00f6rld \u2603 \u65e5\u672c \U0001f40d'
    quotes = ("it's", 'say "hi"', 'both \' and "')
    escapes = 'tab\there\nnewline\\back\x00nul\x7fdel\x85'
    raw = b'\x00ab\xff\'"\\\t\n'
    empty_bytes = b''
    unicode_dict = {'a': False, 'b': (1, 2, 3), 'c': [None, [-1234, 5678]]}
    general_dict = {3: {1, 2, 3}, (1, 'x'): frozenset(), 'k': 2.5}
    singles = ((1,), (), [], {}, set(), frozenset({7}))
    big_list = list(range(1000))
    long_text = 'x' * 5000
    deep = [[[[[[[[[[1]]]]]]]]]]
    cyclic = [1, 2]
    cyclic.append(cyclic)
    invisible = '\u00a0\u200b\u2028'
    shared = Attrs()
    split = vars(shared)  # a split table, in an order its keys do not have
    captured = 'a cell'

    def inner():
        return captured
    park_here()
    time.sleep(seconds)


def recurse(depth):
    if depth == 0:
        park_here()
        time.sleep(3600)
    recurse(depth - 1)


def park_main():
    where = 'main'
    park_here()
    never.acquire()


# ---- the truth: Python's own view -----------------------------------------

def tp_name(tp):
    """The C-level tp_name, as pytop reads it: a class defined in Python
    has its bare name; a static type its module-qualified one."""
    if tp.__flags__ & (1 << 9) or tp.__module__ == 'builtins':
        return tp.__name__
    return tp.__module__ + '.' + tp.__qualname__


SHOWN = (type(None), bool, int, float, str, bytes, list, tuple, dict, set, frozenset)


def expect(v, depth=0, active=()):
    """repr(v) as pytop dump must show it, bounds included."""
    tp = type(v)
    if tp not in SHOWN:
        return '<%s object at %#x>' % (tp_name(tp), id(v))
    if tp in (str, bytes):
        if len(v) > MAX_CHARS:
            return repr(v[:MAX_CHARS]) + '...'
        return repr(v)
    if tp not in (list, tuple, dict, set, frozenset):
        return repr(v)
    opener, closer = {list: '[]', tuple: '()', dict: '{}', set: '{}', frozenset: '{}'}[tp]
    if id(v) in active or depth >= MAX_DEPTH:
        return opener + '...' + closer
    if tp in (set, frozenset) and not v:
        return tp.__name__ + '()'
    items = list(v.items()) if tp is dict else list(v)
    shown = []
    for item in items[:MAX_ITEMS]:
        if tp is dict:
            shown.append(expect(item[0], depth + 1, active + (id(v),)) + ': ' +
                         expect(item[1], depth + 1, active + (id(v),)))
        else:
            shown.append(expect(item, depth + 1, active + (id(v),)))
    if len(items) > MAX_ITEMS:
        shown.append('...')
    body = ', '.join(shown)
    if tp is tuple and len(items) == 1:
        body += ','
    text = opener + body + closer
    if tp is frozenset:
        text = 'frozenset(' + text + ')'
    return text


def frame_truth(f):
    code = f.f_code
    nargs = code.co_argcount + code.co_kwonlyargcount
    nargs += bool(code.co_flags & 4) + bool(code.co_flags & 8)
    args = code.co_varnames[:nargs]
    local_vars = []
    if code.co_flags & 1:  # CO_OPTIMIZED: fast locals (not a module body)
        for name, value in f.f_locals.items():
            local_vars.append({'name': name, 'repr': expect(value),
                               'kind': 'argument' if name in args else 'local'})
    return {'function': code.co_qualname, 'file': code.co_filename,
            'line': f.f_lineno,
            'source': linecache.getline(code.co_filename, f.f_lineno).strip(),
            'locals': local_vars}


def parked(frames, idents):
    for ident in idents:
        f = frames.get(ident)
        if ident not in PARKED or f is None:
            return False
        code, line = PARKED[ident]
        if f.f_code is not code or f.f_lineno != line:
            return False
    return True


def report(args, idents):
    while not parked(sys._current_frames(), idents):
        time.sleep(0.01)
    frames = sys._current_frames()
    threads = []
    for t in threading.enumerate():
        if t.ident not in idents:
            continue
        stack = []
        f = frames[t.ident]
        while f is not None:
            stack.append(frame_truth(f))
            f = f.f_back
        stack.reverse()
        threads.append({'tid': t.native_id, 'name': t.name, 'frames': stack})
    write_truth(args, {'threads': threads,
                       'spinner': spinner.native_id, 'nthreads': len(idents)})
    # announce_ready() sets a SIGTERM handler, which only the main thread
    # may: here SIGTERM keeps its default and ends the workload.
    tmp = args.ready_file + '.tmp'
    with open(tmp, 'w') as f:
        f.write('%d\n' % os.getpid())
    os.rename(tmp, args.ready_file)


def main():
    global spinner
    args = parse_args(__doc__)
    spinner = threading.Thread(target=spin_with_gil, args=(1,), name="gil-spinner", daemon=True)
    waiter = threading.Thread(target=wait_on_lock, args=([-1234, 5678],),
                              kwargs={'label': 'the waiter'}, name="lock-waiter", daemon=True)
    napper = threading.Thread(target=nap, args=(3600, 'more', 2),
                              kwargs={'flag': True, 'colour': 'blue'}, name="napper", daemon=True)
    # Deeper than pytop's 2048-frame limit: shown cut, and said so.
    sys.setrecursionlimit(10000)
    deep = threading.Thread(target=recurse, args=(2100,), name="deep", daemon=True)
    for t in (spinner, waiter, napper, deep):
        t.start()
    idents = [threading.main_thread().ident, spinner.ident, waiter.ident, napper.ident,
              deep.ident]
    threading.Thread(target=report, args=(args, idents), name="reporter", daemon=True).start()
    park_main()


if __name__ == '__main__':
    main()
