"""The progress line of a chunked run gives the time left from the first block on (it printed "0 inits/s" and
nothing else until a chunk ended), and the time estimate is checked against a simulated run whose cost is known."""

import contextlib
import importlib
import io

import pytest

progress_module = importlib.import_module("ccdyn.cli.progress")  # ccdyn.cli.progress is the function


def _lines(calls, **kw):
    """The lines the callback prints for ``calls`` = [(time, done, total, running, steps), ...]."""
    now = [0.0]
    cb = progress_module.progress(0.0, every_s=0.0, clock=lambda: now[0], **kw)
    out = io.StringIO()
    with contextlib.redirect_stderr(out):
        for t, *args in calls:
            now[0] = t
            cb(*args)
    return out.getvalue().splitlines()


def _circling_run(chunks=3, count=1000, block=50, block_s=1.0, max_steps=2000):
    """Power iteration where every init circles to max_steps: each block of ``block`` steps takes ``block_s``."""
    calls, t = [], 0.0
    for c in range(chunks):
        for k in range(block, max_steps + 1, block):
            t += block_s
            if k < max_steps:
                calls.append((t, c * count, chunks * count, count, k))
        calls.append((t, (c + 1) * count, chunks * count, 0, 0))
    return calls, t


def test_the_first_block_gives_the_time_left_of_a_run_whose_inits_all_run_to_max_steps():
    calls, total_s = _circling_run()
    lines = _lines(calls, max_steps=2000, chunk_size=1000)
    first = lines[0]
    assert first.startswith("  [0/3000 inits done] 0 inits/s, 1.0 s, ETA ") and "still running after 50 steps" in first
    # the upper estimate is the true time left: the inits run to max_steps at the first block's cost per step
    high = first.split("ETA ")[1].split(", chunk")[0].split(" to ")[-1]
    assert high == progress_module.duration(total_s - 1.0) == "1 min 59 s"
    # after a chunk the later ones cost what it did
    after = next(line for line in lines if line.startswith("  [1000/3000 inits done]") and "chunk:" not in line)
    assert after.endswith(f"ETA {progress_module.duration(2 * 40.0)}")
    assert lines[-1].startswith("  [3000/3000 inits done]") and "ETA" not in lines[-1]


@pytest.mark.parametrize("chunk_size", [None, 1000])
def test_eta_brackets_the_time_left_of_a_run_whose_inits_stop_early(chunk_size):
    """Inits that converge after 300 of at most 2000 steps: the estimate is a range that holds the true time
    left at every line; knowing the chunk size also locates a chunk after a resume."""
    calls, t = [], 0.0
    for c in range(2):
        for k, running in ((50, 900), (100, 600), (150, 300), (200, 100), (250, 10)):
            t += running / 1000 + 0.1  # a block costs with its running inits
            calls.append((t, c * 1000 + 1000 - running, 2000, running, k))
        t += 0.1
        calls.append((t, (c + 1) * 1000, 2000, 0, 0))
    end = t
    for (t, *_), line in zip(calls, _lines(calls, max_steps=2000, chunk_size=chunk_size)):
        if "ETA" not in line:
            continue
        text = line.split("ETA ")[1].split(", chunk")[0]
        seconds = lambda s: sum(float(v) * {"s": 1, "min": 60, "h": 3600}[u]  # noqa: E731
                                for v, u in zip(s.split()[::2], s.split()[1::2]))
        if text.startswith("<= "):
            low, high = 0.0, seconds(text[3:])
        else:
            low, high = (seconds(v) for v in (text.split(" to ") if " to " in text else (text, text)))
        assert low - 1 <= end - t <= high + 1, (line, end - t)


def test_eta_without_a_step_limit_is_a_lower_bound():
    low, high = progress_module.eta(1000, chunk_inits=1000, chunk_s=10.0, steps=100)
    assert (low, high) == (10.0, None)
    assert progress_module._eta_text(10.0, None) == "ETA >= 10 s"
    assert progress_module._eta_text(0.0, 75.0) == "ETA <= 1 min 15 s"  # the last chunk: it may end at any step
    assert progress_module._eta_text(60.0, 70.0) == "ETA 1 min 10 s" and progress_module._eta_text(2.0, 119.0) == \
        "ETA 2 s to 1 min 59 s"
    assert progress_module.eta(500, chunk_inits=0, chunk_s=0.0, done_chunks=(1000, 20.0)) == (10.0, 10.0)
