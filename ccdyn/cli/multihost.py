"""A script's run over several processes or hosts (docs/guide.md, "Several hosts").

:func:`define_multihost_flags` defines ``--coordinator_address``, ``--num_processes`` and
``--process_id``; :func:`start_processes` joins the processes before any JAX work;
:func:`open_run_of_process_0` opens the run directory on process 0 alone and has every process check
with :func:`agree_processes` that all share its config. Spreading independent units (the settings of a
grid) over the processes is :func:`ccdyn.grid.run`.
"""

from __future__ import annotations

import os
import sys
import threading

import numpy as np
from absl import flags

from ccdyn import parallel, rundir
from ccdyn.cli.contract import fail, or_fail
from ccdyn.cli.record import open_run_dir

__all__ = ["define_multihost_flags", "start_processes", "agree_processes", "open_run_of_process_0"]

# The flags that define_multihost_flags defines belong to the script calling it.
flags.disclaim_key_flags()


def define_multihost_flags() -> None:
    """``--coordinator_address``, ``--num_processes``, ``--process_id`` of a run over several hosts
    (docs/guide.md, "Several hosts"), with their validators; :func:`start_processes` uses them."""
    flags.DEFINE_string("coordinator_address", None, "Multi-host: HOST:PORT of process 0, or 'auto' (read from the "
                        "cluster's environment: SLURM, Open MPI, TPU pods).")
    flags.DEFINE_integer("num_processes", 1, "Multi-host: number of processes.", lower_bound=1)
    flags.DEFINE_integer("process_id", 0, "Multi-host: this process's index.", lower_bound=0)
    flags.DEFINE_integer("coordinator_timeout", 60, "Multi-host: seconds to wait for every process to join (then "
                         "one error line).", lower_bound=1)
    flags.register_validator("coordinator_address", _address_ok,
                             "--coordinator_address must be HOST:PORT (PORT in [1, 65535]) or 'auto'")
    flags.register_multi_flags_validator(
        ["process_id", "num_processes"], lambda f: f["process_id"] < f["num_processes"],
        "--process_id must lie in [0, --num_processes - 1]")
    flags.register_multi_flags_validator(
        ["num_processes", "coordinator_address"], lambda f: f["num_processes"] == 1 or bool(f["coordinator_address"]),
        "--num_processes > 1 needs --coordinator_address=HOST:PORT of process 0")


def _address_ok(value) -> bool:
    if value is None or value == parallel.AUTO:
        return True
    host, _, port = value.rpartition(":")
    return bool(host) and port.isdigit() and 1 <= int(port) <= 65535


def start_processes(values) -> tuple:
    """Joins the run's processes (:func:`ccdyn.parallel.initialize_distributed`, before any JAX work) from
    the :func:`define_multihost_flags` values; returns (this process's index, the process count).

    When they have not all joined after ``--coordinator_timeout`` seconds (nobody listens at the
    address, a process was never started) the script ends with one ``error:`` line and exit status 2:
    a watchdog thread does it with ``os._exit``, since JAX's own time-out aborts the process natively
    and the main thread is inside JAX's native wait (no run directory is open yet)."""
    address, n, pid = (values[k].value for k in ("coordinator_address", "num_processes", "process_id"))
    if address != parallel.AUTO and n <= 1:
        return or_fail(parallel.initialize_distributed, address, n, pid)
    timeout, joined = values["coordinator_timeout"].value, threading.Event()

    def watchdog():
        if not joined.wait(timeout):
            print(f"error: the processes did not all join within --coordinator_timeout={timeout} s "
                  f"(--coordinator_address={address}, --process_id={pid}): is process 0 running there and every "
                  "process started?", file=sys.stderr, flush=True)
            os._exit(2)

    threading.Thread(target=watchdog, name="ccdyn-coordinator-watchdog", daemon=True).start()
    try:
        return or_fail(parallel.initialize_distributed, address, n, pid)
    finally:
        joined.set()


def agree_processes(pid: int, config: dict, run, value: int = 0) -> int:
    """Every process of a multi-process run checks that all were started with the same ``config`` (its
    fingerprint) and that process 0 opened its run directory (``run``, None elsewhere); returns process
    0's ``value`` (e.g. a chunk size kept from a resumed run). Process 0 calls it also when opening its
    run failed (then it returns at once and its own error follows), so the others never wait for it."""
    fp = np.frombuffer(rundir.fingerprint(config).encode(), np.uint8)
    rows = parallel.gather_rows(np.concatenate([[int(pid > 0 or run is not None), value], fp]).astype(np.int64))
    if pid == 0 and run is None:
        return value
    if not rows[:, 0].all():
        fail("process 0 could not open its run directory (see its error)")
    if (rows[:, 2:] != rows[0, 2:]).any():
        fail("the processes were started with different configurations: give every process the same flags")
    return int(rows[0, 1])


def open_run_of_process_0(pid: int, n_proc: int, path, config: dict, *, prepare=None, value=None, agree=None,
                          **open_kw):
    """The run directory of a multi-process run, opened (:func:`open_run_dir`, ``open_kw``) and made ready
    (``prepare(run)``) by process 0 alone; every process then checks with :func:`agree_processes` that all
    share the config (``agree``: the config to compare, default ``config``) and receives process 0's
    ``value(run)`` (default 0). Returns (the run on process 0 / None elsewhere, that value)."""
    run = None
    try:
        if pid == 0:
            opened = open_run_dir(path, config, **open_kw)
            if prepare is not None:
                prepare(opened)
            run = opened
    finally:  # also when process 0 failed to open its run: the others must not wait for it
        got = value(run) if (run is not None and value is not None) else 0
        if n_proc > 1:
            got = agree_processes(pid, config if agree is None else agree, run, got)
    return run, got
