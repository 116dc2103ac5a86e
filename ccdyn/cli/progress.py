"""Progress on stderr (stdout is the summary table): :func:`log` one line, :func:`progress` the
callback of a basins-style chunked run."""

from __future__ import annotations

import sys
import time

__all__ = ["log", "progress"]


def log(message: str) -> None:
    """One progress line on stderr, flushed."""
    print(message, file=sys.stderr, flush=True)


def progress(t0: float, every_s: float = 2.0):
    """A ``progress(done, total, running, steps)`` callback for :func:`ccdyn.one_layer.engine.collect`:
    a line on stderr after every chunk, and at most every ``every_s`` seconds within one."""
    last = [0.0]

    def report_progress(done, total, running, steps):
        now = time.time()
        if running and now - last[0] < every_s:
            return
        last[0] = now
        rate = done / max(now - t0, 1e-9)
        inside = f", chunk: {running} inits still running after {steps} steps" if running else ""
        log(f"  [{done}/{total} inits done] {rate:,.0f} inits/s, {now - t0:.1f} s{inside}")

    return report_progress

