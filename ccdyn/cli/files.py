"""Files a script reads from other scripts' runs and files it writes outside a run directory.

:func:`read_run_json` reads an output JSON of a finished run of a named script and checks it (the run's
manifest or the record's command names that script, the run is complete, the keys the reader needs are
there) before the reader writes anything; a wrong input ends the script with one line naming the flag
and the file. :func:`define_overwrite` and :func:`check_new_files` guard a file written outside a run
directory (a table under ``--output_prefix``, claims under ``--root``): an existing one is replaced only
under ``--overwrite``.
"""

from __future__ import annotations

from pathlib import Path

from absl import flags

from ccdyn import io, rundir
from ccdyn.cli.contract import INPUTS, fail

__all__ = ["read_run_json", "define_overwrite", "check_new_files"]

# The flags that define_overwrite defines belong to the script calling it.
flags.disclaim_key_flags()


def _script_of(record, folder: Path):
    """(the script that wrote a run, its state): the manifest's ``script`` and ``state``, else the script
    named by the record's ``command`` (top level or in its ``config``) and None; None if none says."""
    if (folder / rundir.MANIFEST).is_file():
        try:
            m = io.read_json(folder / rundir.MANIFEST)
        except (OSError, ValueError):
            m = None
        if isinstance(m, dict) and m.get("tool") == "ccdyn":
            return m.get("script"), m.get("state")
    config = record.get("config")
    for command in (record.get("command"), config.get("command") if isinstance(config, dict) else None):
        words = [w for w in command.split() if w.endswith(".py")] if isinstance(command, str) else []
        if words:
            return words[0], None
    return None, None


def read_run_json(path, *, script, flag: str, keys=()) -> dict:
    """The JSON object in ``path``, an output of a finished run of ``script`` (e.g. ``scripts/two_layer.py``,
    or a tuple of accepted scripts) holding the top-level ``keys`` (a mapping key -> type also checks each
    value's JSON type, e.g. ``{"config": dict, "optima": list}``); else the end of the script with one
    line naming ``flag`` and the file (missing, unreadable, another script's, unfinished, or without a
    key the reader needs, or with one of another type)."""
    path, scripts = Path(path), (script,) if isinstance(script, str) else tuple(script)
    script = " or ".join(scripts)
    if not path.is_file():
        fail(f"{flag}: {path} is not a file (run {script} first)")
    try:
        record = io.read_json(path)
    except (OSError, ValueError) as e:
        fail(f"{flag}: {path} is not readable JSON ({e.__class__.__name__}: {e})")
    if not isinstance(record, dict):
        fail(f"{flag}: {path} is not an output of {script} (not a JSON object)")
    wrote, state = _script_of(record, path.parent)
    if wrote is not None and wrote not in scripts:
        fail(f"{flag}: {path} was written by {wrote}, not {script}")
    if state not in (None, "complete"):
        fail(f"{flag}: {path} belongs to a run that is {state}, not complete; finish it first")
    missing = [k for k in keys if k not in record]
    if missing:
        fail(f"{flag}: {path} has no {', '.join(repr(k) for k in missing)}; not an output of {script} "
             "(or one of another version: re-run it)")
    wrong = [k for k, kind in (keys.items() if isinstance(keys, dict) else ()) if not isinstance(record[k], kind)]
    if wrong:
        k = wrong[0]
        fail(f"{flag}: {path}: {k!r} is a JSON {type(record[k]).__name__}, not a {keys[k].__name__}; not an output "
             f"of {script} (or one of another version: re-run it)")
    INPUTS.append((flag, path))  # named by the error line of a failure while the reader uses it
    return record


def define_overwrite(what: str) -> None:
    """``--overwrite``: whether the files that the script writes outside a run directory (``what``) may
    replace existing ones."""
    flags.DEFINE_bool("overwrite", False, f"Replace {what} if they exist (refused otherwise).")


def check_new_files(paths, *, overwrite: bool, flag: str) -> None:
    """Ends the script, naming ``flag`` and the file, when one of ``paths`` (files to be written outside a
    run directory) is a folder, or exists and not ``overwrite``; called before anything is written."""
    for p in map(Path, paths):
        if p.is_dir():
            fail(f"{flag}: {p} is a directory; give another {flag}")
        if (p.exists() or p.is_symlink()) and not overwrite:
            fail(f"{flag}: {p} exists; pass --overwrite to replace it or give another {flag}")
