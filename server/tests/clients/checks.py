"""What both client suites share: a check runs, prints one line (ok or FAIL with its
traceback), and the next one runs anyway; `finish` exits non-zero if any failed."""

import sys
import time
import traceback

results = []


def check(name):
    def wrap(fn):
        start = time.monotonic()
        try:
            fn()
            print(f"ok    {name} ({time.monotonic() - start:.2f}s)", flush=True)
            results.append((name, None))
        except Exception as e:  # noqa: BLE001 -- every failure is reported, the rest still run
            print(f"FAIL  {name}: {type(e).__name__}: {e}", flush=True)
            traceback.print_exc()
            results.append((name, e))
        return fn
    return wrap


def fail(name, e):
    """Records a failure found outside a check (cleanup)."""
    results.append((name, e))


def finish():
    failed = [n for n, e in results if e is not None]
    if failed:
        print(f"FAILED {len(failed)} of {len(results)}: " + "; ".join(failed))
        sys.exit(1)
    print("OK")
