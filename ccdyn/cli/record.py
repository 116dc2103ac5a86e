"""The run record and the run directory of a script.

:func:`run_record` is the provenance every output carries: command line, versions, devices;
:func:`with_run_record` puts it in front of a study's record for its JSON. :func:`define_run_flags`
defines ``--output_dir``, ``--overwrite`` (and ``--resume``); :func:`open_run_dir` opens the run
directory (:class:`ccdyn.rundir.RunDir`: manifest, lock, staged overwrite, config fingerprint) or ends
the script with the reason; :func:`finish` marks it complete.
"""

from __future__ import annotations

import platform
import sys

import jax
import numpy as np
from absl import flags

import ccdyn
from ccdyn import io, rundir, verdicts
from ccdyn.cli.contract import ACTIVE_RUNS, fail
from ccdyn.cli.progress import log

__all__ = ["run_record", "with_run_record", "define_run_flags", "open_run_dir", "finish", "finish_ledger_run"]

# The flags that define_run_flags defines belong to the script calling it (its --helpshort lists them).
flags.disclaim_key_flags()


def run_record(script: str, argv=None, num_processes: int = 1) -> dict:
    """Provenance of an output: the command line, package versions, devices and process count."""
    argv = sys.argv[1:] if argv is None else list(argv)
    return {"command": " ".join(["python", script] + argv),
            "versions": {"ccdyn": ccdyn.__version__, "jax": jax.__version__, "numpy": np.__version__,
                         "python": platform.python_version()},
            "devices": [str(d) for d in jax.devices()],
            "num_processes": num_processes}


def with_run_record(script: str, record: dict, *, omit=("tables",), argv=None, num_processes: int = 1) -> dict:
    """A study's record as an output JSON: the :func:`run_record` first, then the record without the
    keys in ``omit`` (the rows that the script writes as tables instead)."""
    return {**run_record(script, argv, num_processes), **{k: v for k, v in record.items() if k not in omit}}


def define_run_flags(default: str | None, *, resume: bool = True, what: str = "Run directory.") -> None:
    """``--output_dir`` (default ``default``), ``--overwrite`` and, if ``resume``, ``--resume`` (the
    two exclude each other)."""
    flags.DEFINE_string("output_dir", default, what)
    flags.DEFINE_bool("overwrite", False, "Replace output_dir if it holds a finished or failed ccdyn run of this "
                      "script (never other files); the old run goes only once the new one has started.")
    if resume:
        flags.DEFINE_bool("resume", False, "Continue the run in output_dir (same configuration; refused otherwise).")
        flags.register_multi_flags_validator(["resume", "overwrite"], lambda f: not (f["resume"] and f["overwrite"]),
                                             "--resume and --overwrite exclude each other")


def open_run_dir(path, config: dict, *, script: str, outputs=(), overwrite: bool = False, resume: bool = False,
                 can_resume: bool = True, ignore=()) -> rundir.RunDir:
    """Opens the run directory (:meth:`ccdyn.rundir.RunDir.open`) and prints its notes; a refusal ends
    the script with the reason (exit status 2, nothing created)."""
    try:
        with rundir.uninterrupted():  # an interrupt finds the run opened and known, or not opened
            run = rundir.RunDir.open(path, config, script=script, version=ccdyn.__version__, outputs=outputs,
                                     overwrite=overwrite, resume=resume, can_resume=can_resume, ignore=ignore)
            ACTIVE_RUNS.append(run)
    except rundir.RunDirError as e:
        fail(e)
    for note in run.notes:
        log(f"note: {note}")
    return run


def finish(run: rundir.RunDir):
    """Marks ``run`` complete (after its last output) and forgets it; returns where it now lives."""
    run.finish()
    if run in ACTIVE_RUNS:
        ACTIVE_RUNS.remove(run)
    return run.path


def finish_ledger_run(run: rundir.RunDir, stem: str, saved: dict, head: str) -> list:
    """Writes ``<stem>.md`` (``head``, then the ledger rows of ``saved["claims"]``) and ``<stem>.json``
    (``saved``), marks ``run`` complete; returns the lines to print after the script's tables: one per
    ledger row (``<id>: <verdict> (<reason>)``) and where the files went."""
    io.atomic_write_bytes(run.path / f"{stem}.md", (head + verdicts.ledger_markdown(saved["claims"])).encode())
    io.write_json(run.path / f"{stem}.json", saved)
    out = finish(run)
    return [*(f"{c['id']}: {c['verdict']} ({verdicts.reason(c)})" for c in saved["claims"]),
            f"wrote {out}/{stem}.json (the ledger rows: {stem}.md)"]
