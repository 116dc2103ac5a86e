"""Every command stored under results/ still makes the config stored with it (issue #23 item 3).

A result JSON names the command that made it (``"command"``; the augmentation study's rows also a
``"basins_command"``). Each is parsed with its script's current absl flags in this process
(``tests/scripts/inprocess.py``), and the script's own ``main`` runs up to the point where it opens its
run directory: ``ccdyn.cli.open_run_dir`` / ``open_run_of_process_0`` are replaced by a stub that stops
the script with the config it was handed. So the config is built by the script's own code, and nothing
is computed or written. (The basins scripts' data start-up checks, ``script_flags.basins_data``, are
skipped: they build and range-check the data, which is not part of the config, and take most of the
time.) The config must reproduce the stored one, leaf by leaf, the fields the script itself leaves out
of its fingerprint aside (e.g. basins' ``chunk_size``):

- a ``basins_command`` of ``theory/augmentation``: the engine config of its row
  (``augmentation.row_engine_config``); elsewhere (the saddles' input run, not committed) it is only
  built;
- else the folder's ``config.json``; else the fingerprint in its ``ccdyn-run.json``; else the record's
  own ``"config"`` (results written before run directories existed).

Every leaf both hold must be equal, and they must share at least one. A leaf only one side has is a
field added to (or dropped from) the config since the result was made: it has no stored value to check,
and is not counted as a mismatch, except in a basins config: there a field added since (``ADDED``) was in
effect at its old value, and a command that now sets another value where the field acts (the sliding flow
for ``--method=flow`` with ReLU) no longer makes its result. Whether the *data* a config builds is still the
data a result was made on is checked by ``tests/test_stale_results.py``. A result that stores no config at
all (the oldest, and the benchmark's inner command) is checked as far as it can be: the command parses and
the script builds a config from it. Scripts that open no run directory (readers such as ``basins_table.py``) are only
parsed, and so is a command whose input file is not part of the repository (``EXTERNAL``).
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from pathlib import Path

import pytest

import ccdyn.cli
from ccdyn import io, rundir
from ccdyn.one_layer import script_flags
from ccdyn.one_layer.studies import augmentation
from tests.scripts import inprocess

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
KEYS = ("command", "basins_command")
# flags naming an input that is not in the repository (the command is then parsed, not started)
EXTERNAL = ("--mnist", "--run", "--continuation")
# Stored commands known not to make their stored config, each with the reason; strict: once the result is
# re-run with the command that makes it, the entry must go.
KNOWN_STALE: dict[str, str] = {}  # result file (relative to results/) -> reason

# Fields added to the basins config (``BasinsConfig``, also under a continuation's ``base`` and a flow check's
# ``basins``) since some results were made. A stored config without one was made with the value here, the
# behaviour before the field existed; ``acts(config)`` says whether the field changes the run under that
# config. A stored command that now builds another value where the field acts no longer makes its result
# (it is stale: re-run it). A basins field a stored config lacks must be named here.
ADDED = {
    "dynamics.sliding": (False, lambda c: c["dynamics"]["method"] == "flow" and c["act"] in ("relu", "leaky_relu"),
                         "the flow before sliding stopped where it was pinned on a ReLU kink"),
    "target_miss": (None, lambda c: True, "no stopping rule"),
    "target_halfwidth": (None, lambda c: True, "no stopping rule"),
}
BASINS_AT = ("", "base.", "basins.")  # where a script's config holds a basins config


class _Opened(Exception):
    """Raised by the stub in place of opening a run directory: carries the config the script built."""

    def __init__(self, config, ignore):
        super().__init__("opened")
        self.config, self.ignore = config, tuple(ignore)


def _stub_open(path, config, **kw):
    raise _Opened(config, kw.get("ignore", ()))


def _stub_open_of_process_0(pid, n_proc, path, config, **kw):
    raise _Opened(config, kw.get("ignore", ()))


def _walk(node, where=""):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in KEYS and isinstance(v, str):
                yield k, where, v
            else:
                yield from _walk(v, f"{where}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, f"{where}[{i}]")


def _find(node, where: str):
    """The dict at a ``_walk`` location ("/a/b[2]")."""
    for part in filter(None, where.replace("[", "/[").split("/")):
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    return node


def stored_commands() -> list:
    """(result file relative to results/, key, location in the JSON, command), one per distinct command."""
    out = []
    for path in sorted(RESULTS.rglob("*.json")):
        if "chunks" in path.parts or path.name in (rundir.MANIFEST, rundir.CONFIG) or path.parent == RESULTS:
            continue  # results/claims.json: the ledger copies the commands of the records checked here
        seen = set()
        for key, where, cmd in _walk(json.loads(path.read_text())):
            words = shlex.split(cmd)
            words = words[1:] if words and words[0] == "python" else words
            if not words or not words[0].startswith("scripts/") or (key, cmd) in seen:
                continue  # benchmarks store their own config next to their timings
            seen.add((key, cmd))
            out.append((path.relative_to(RESULTS).as_posix(), key, where, cmd))
    return out


def _leaves(node, prefix="") -> dict:
    if isinstance(node, dict):
        out = {}
        for k, v in node.items():
            out.update(_leaves(v, f"{prefix}{k}."))
        return out
    return {prefix.rstrip("."): node}


def _build(cmd: str):
    """(the config the script builds from ``cmd`` with its ignore list) or (None, why it was not started)."""
    words = shlex.split(cmd)
    words = words[1:] if words[0] == "python" else words
    script, argv = Path(words[0]).stem, words[1:]
    assert (ROOT / words[0]).is_file(), f"{words[0]} does not exist"
    source = (ROOT / words[0]).read_text()
    with inprocess.script(script) as module:
        error = inprocess.flag_error(module, *argv)
        assert error is None, f"the stored command no longer parses: {error}"
        if "open_run_dir(" not in source and "open_run_of_process_0(" not in source:
            return None, "a reader: parsed only"
        external = [a for a in argv if a.split("=")[0] in EXTERNAL and not (ROOT / a.split("=", 1)[1]).exists()]
        if external:
            return None, f"input not in the repository ({external[0]}): parsed only"
        inprocess.FLAGS([module.__file__, *argv])
        saved = ccdyn.cli.open_run_dir, ccdyn.cli.open_run_of_process_0, script_flags.basins_data
        ccdyn.cli.open_run_dir, ccdyn.cli.open_run_of_process_0 = _stub_open, _stub_open_of_process_0
        script_flags.basins_data = lambda cfg, context="": None
        try:
            module.main([])
        except _Opened as opened:
            return (io.as_json(opened.config), opened.ignore), None
        except SystemExit as e:
            raise AssertionError(f"{script} stopped before opening its run directory (exit {e.code})") from e
        finally:
            ccdyn.cli.open_run_dir, ccdyn.cli.open_run_of_process_0, script_flags.basins_data = saved
            inprocess.FLAGS.unparse_flags()
    raise AssertionError(f"{script}'s main returned without opening a run directory")


def _expected(rel: str, key: str, where: str, built: dict):
    """(what the built config must equal, what that is) for the stored command at ``rel``/``where``."""
    record = io.read_json(RESULTS / rel)
    folder = (RESULTS / rel).parent
    if key == "basins_command" and rel.startswith("theory/augmentation/"):
        cfg = augmentation.AugmentationConfig(**{k: tuple(v) if isinstance(v, list) else v
                                                 for k, v in record["config"].items()})
        row = _find(record, where)
        exp = augmentation.row_engine_config(cfg, row, built["data"]["data_path"])
        return io.as_json(dataclasses.asdict(exp)), "the row's engine config"
    if key == "basins_command":  # the basins run a reader (saddles) read: not committed, nothing to compare
        return None, "the record's config"
    if (folder / rundir.CONFIG).is_file():
        return io.read_json(folder / rundir.CONFIG), rundir.CONFIG
    if (folder / rundir.MANIFEST).is_file():
        return io.read_json(folder / rundir.MANIFEST)["fingerprint"], "the fingerprint"
    return record.get("config"), "the record's config"


CASES = stored_commands()


def test_the_stored_commands_are_found():
    scripts = {shlex.split(c)[1 if c.startswith("python") else 0] for _, _, _, c in CASES}
    assert len(CASES) >= 60 and {"scripts/basins.py", "scripts/two_layer.py", "scripts/hltm.py"} <= scripts
    assert sum(k == "basins_command" for _, k, _, _ in CASES) >= 10  # the augmentation rows


@pytest.mark.parametrize("rel,key,where,cmd", [
    pytest.param(*c, id=f"{c[0]}{c[2]}", marks=[pytest.mark.xfail(strict=True, reason=KNOWN_STALE[c[0]])]
                 if c[0] in KNOWN_STALE else []) for c in CASES])
def test_stored_command_makes_the_stored_config(rel, key, where, cmd):
    got, why = _build(cmd)
    if got is None:
        assert why  # parsed only (a reader, or an input outside the repository)
        return
    built, ignore = got
    exp, what = _expected(rel, key, where, built)
    trimmed = {k: v for k, v in built.items() if k not in ignore}
    if what == "the fingerprint":
        assert rundir.fingerprint(trimmed) == exp, f"{cmd}: config fingerprint differs from ccdyn-run.json"
        return
    if not isinstance(exp, dict):
        assert what == "the record's config" and exp is None, f"{rel}: unreadable stored config {exp!r}"
        return  # nothing stored to compare with: the command parses and builds a config
    b = _leaves({k: v for k, v in exp.items() if k not in ignore and k != "command"})
    # a record may hold one part of a script's config (kernel_dynamics: kernel.json has the "kernel" part)
    parts = [trimmed] + ([v for v in trimmed.values() if isinstance(v, dict)] if what == "the record's config" else [])
    a = max((_leaves(p) for p in parts), key=lambda leaves: len(set(leaves) & set(b)))
    shared = sorted(set(a) & set(b))
    assert shared, f"{rel}: the config {cmd!r} builds shares no field with {what}"
    diff = [f"{k}: stored {b[k]!r}, the command gives {a[k]!r}" for k in shared if a[k] != b[k]]
    diff += added_fields_that_act(a, set(b))
    assert not diff, f"{rel}{where}: `{cmd}` does not make {what}: " + "; ".join(diff)


def added_fields_that_act(built: dict, stored: set) -> list:
    """The basins fields (``ADDED``) that the stored config lacks and the built config ``built`` (leaves)
    sets to another value than the one the result was made with, where they act; a basins field that the
    stored config lacks and ``ADDED`` does not name is reported too."""
    out = []
    for at in BASINS_AT:
        if f"{at}dynamics.method" not in built:
            continue
        cfg = {"act": built[f"{at}act"], "dynamics": {"method": built[f"{at}dynamics.method"]}}
        for leaf in sorted(k for k in built if k.startswith(at) and k not in stored):
            name = leaf[len(at):]
            if name not in ADDED:
                out.append(f"{leaf}: the stored config lacks this basins field; name it in ADDED with its old value")
                continue
            old, acts, before = ADDED[name]
            if acts(cfg) and built[leaf] != old:
                out.append(f"{leaf}: not in the stored config (made with {old!r}: {before}), "
                           f"the command now gives {built[leaf]!r}")
    return out


def test_added_fields_are_flagged_where_they_act():
    """A stored flow run without ``dynamics.sliding`` was made before sliding: stale where the command now
    slides (ReLU, ``--method=flow``), not for power iteration, the fixed-step flow or a smooth activation,
    nor when the built config says False."""
    built = {"act": "relu", "dynamics.method": "flow", "dynamics.sliding": True, "target_miss": None}
    assert len(added_fields_that_act(built, {"act", "dynamics.method", "target_miss"})) == 1
    assert not added_fields_that_act({**built, "dynamics.sliding": False}, {"act", "dynamics.method"})
    for method in ("power", "euler_halving"):
        assert not added_fields_that_act({**built, "dynamics.method": method}, {"act", "dynamics.method"})
    assert not added_fields_that_act({**built, "act": "quadratic"}, {"act", "dynamics.method"})
    nested = {f"base.{k}": v for k, v in built.items()}
    assert added_fields_that_act(nested, {"base.act", "base.dynamics.method"})[0].startswith("base.dynamics.sliding")
    assert "name it in ADDED" in added_fields_that_act({**built, "new_field": 1}, set(built) - {"new_field"})[0]


def test_stored_commands_write_into_the_repository():
    """A stored command names the folder it writes as a repository path (relative, inside the checkout),
    never a scratch folder elsewhere: run from the repository root it writes where its result is kept."""
    outside = [(rel, cmd) for rel, _, _, cmd in CASES for w in shlex.split(cmd)
               if w.split("=")[0] in ("--output_dir", "--output", "--output_prefix") and "=" in w
               and (Path(w.split("=", 1)[1]).is_absolute() or ".." in Path(w.split("=", 1)[1]).parts)]
    assert not outside, outside
