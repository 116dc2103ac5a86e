"""Progress on stderr (stdout is the summary table): :func:`log` one line, :func:`progress` the
callback of a basins-style chunked run, with a time estimate from the first block on (:func:`eta`)."""

from __future__ import annotations

import sys
import time
from typing import Any

from ccdyn.report import duration

__all__ = ["log", "progress", "eta"]


def log(message: str) -> None:
    """One progress line on stderr, flushed."""
    print(message, file=sys.stderr, flush=True)


def eta(rest_inits: int, *, chunk_inits: int, chunk_s: float, steps: int = 0, max_steps: int | None = None,
        step_s: float | None = None, done_chunks: tuple = (0, 0.0)) -> tuple:
    """(low, high) seconds left in a chunked run, ``high`` None where nothing bounds it.

    The current chunk of ``chunk_inits`` inits has run ``chunk_s`` seconds and ``steps`` steps; its running
    inits stop by ``max_steps``, each remaining step costing at most the last block's ``step_s`` (inits only
    stop, so a step never gets dearer): it needs between 0 and (max_steps - steps) step_s more. The
    ``rest_inits`` of the later chunks cost what the finished chunks did per init (``done_chunks``: their
    inits and seconds), or, before any finished, what this chunk costs per init: at least what it has
    cost so far, at most that plus its bound. The first chunk's cost includes the compilation, so the
    estimate of a long run is on the high side at first."""
    left = None if max_steps is None or step_s is None else max(max_steps - steps, 0) * step_s
    n_done, t_done = done_chunks
    if n_done:
        later = rest_inits * t_done / n_done
        if not chunk_inits:  # between chunks
            return later, later
        return later, None if left is None else left + later
    low = rest_inits * chunk_s / max(chunk_inits, 1)
    high = None if left is None else left + rest_inits * (chunk_s + left) / max(chunk_inits, 1)
    return low, high


def _eta_text(low: float, high: float | None) -> str:
    if high is None:
        return f"ETA >= {duration(low)}"
    if high <= 1.25 * low + 1:
        return f"ETA {duration(high)}"
    if low < 1:  # the last chunk: its running inits may stop at any step
        return f"ETA <= {duration(high)}"
    return f"ETA {duration(low)} to {duration(high)}"


def progress(t0: float, every_s: float = 2.0, *, max_steps: int | None = None, chunk_size: int | None = None,
             clock=time.time):
    """A ``progress(done, total, running, steps)`` callback for :func:`ccdyn.one_layer.engine.collect`:
    a line on stderr after every chunk, and at most every ``every_s`` seconds within one, with the time
    left from the first block on (:func:`eta`; ``max_steps``: the dynamics' step limit, which bounds a
    chunk; ``chunk_size``: where each chunk starts, also after a resume; ``clock``: the time source).
    Inside a chunk the engine counts its stopped inits as done, so the chunk ends at ``done + running``."""
    state: dict[str, Any] = {"last": 0.0, "chunk_t0": t0, "end": None, "start": 0, "prev": None, "step_s": None,
             "done_inits": 0, "done_s": 0.0}

    def start_of(end: int) -> int:
        return end - ((end - 1) % chunk_size + 1) if chunk_size else state["start"]

    def report_progress(done, total, running, steps):
        now = clock()
        end = done + running
        if running:
            if state["end"] != end:  # the first block of a chunk
                state.update(end=end, prev=(state["chunk_t0"], 0), step_s=None)
            t_prev, k_prev = state["prev"]
            if steps > k_prev:  # the last block's seconds per step
                state["step_s"] = (now - t_prev) / (steps - k_prev)
            state["prev"] = (now, steps)
        else:  # a chunk ended: its cost per init is known
            state["done_inits"] += done - start_of(done)
            state["done_s"] += now - state["chunk_t0"]
            state.update(start=done, chunk_t0=now, end=None, prev=None, step_s=None)
        if running and now - state["last"] < every_s:
            return
        state["last"] = now
        rate = done / max(now - t0, 1e-9)
        line = f"  [{done}/{total} inits done] {rate:,.0f} inits/s, {now - t0:.1f} s"
        if running:
            low, high = eta(total - end, chunk_inits=end - start_of(end), chunk_s=now - state["chunk_t0"], steps=steps,
                            max_steps=max_steps, step_s=state["step_s"],
                            done_chunks=(state["done_inits"], state["done_s"]))
            line += f", {_eta_text(low, high)}, chunk: {running} inits still running after {steps} steps"
        elif done < total:
            low, high = eta(total - done, chunk_inits=0, chunk_s=0.0,
                            done_chunks=(state["done_inits"], state["done_s"]))
            line += f", {_eta_text(low, high)}"
        log(line)

    return report_progress
