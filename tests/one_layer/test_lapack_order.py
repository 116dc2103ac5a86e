"""Every pair of LAPACK custom calls in one compiled HLO computation of the float64 refinements is ordered
by a data dependence: two independent batched eigh / eig calls can run at once on XLA's CPU pool and wait on
each other forever (DEVELOPERS.md, "Batched LAPACK calls"; ``kinks._after``). The certificates decompose one
matrix at a time; and (slow) no program of a whole main-job run, or of a saddles run on it, has two
independent batched calls."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from ccdyn import activations, pairwise
from ccdyn.data.registry import DataSpec, build_dataset
from ccdyn.one_layer import certify, kinks, saddles

ROOT = Path(__file__).resolve().parents[2]


def unordered_lapack_calls(hlo: str) -> list:
    """(computation, call a, call b) for every two LAPACK custom calls of one computation of the compiled
    ``hlo`` text of which neither reaches the other through its operands."""
    comps, cur = {}, None
    for line in hlo.split("\n"):
        if (line.startswith("%") or line.startswith("ENTRY")) and line.rstrip().endswith("{"):
            cur = line.split()[0]
            comps[cur] = []
        elif cur and line.strip() == "}":
            cur = None
        elif cur:
            comps[cur].append(line)
    bad = []
    for comp, body in comps.items():
        operands, calls = {}, []
        for line in body:
            m = re.match(r"\s*(?:ROOT )?(%[\w.\-]+) = .*?\((.*)", line)
            if m:
                operands[m.group(1)] = set(re.findall(r"%[\w.\-]+", m.group(2).split("metadata=")[0])) - {m.group(1)}
                if 'custom_call_target="lapack_' in line:
                    calls.append(m.group(1))

        def ancestors(name):
            seen, todo = set(), [name]
            while todo:
                for o in operands.get(todo.pop(), ()):
                    if o not in seen:
                        seen.add(o)
                        todo.append(o)
            return seen

        up = {c: ancestors(c) for c in calls}
        bad += [(comp, a, b) for i, a in enumerate(calls) for b in calls[i + 1:] if a not in up[b] and b not in up[a]]
    return bad


def test_the_reader_finds_independent_calls():
    hlo = """%body (p: f64[2]) -> f64[2] {
  %a = f64[2] custom-call(%p), custom_call_target="lapack_dsyevd_ffi"
  %b = f64[2] custom-call(%p), custom_call_target="lapack_dsyevd_ffi"
  %c = f64[2] custom-call(%a), custom_call_target="lapack_dsyevd_ffi"
}"""
    assert unordered_lapack_calls(hlo) == [("%body", "%a", "%b"), ("%body", "%b", "%c")]


def _compiled_text(fn, *args, **kwargs) -> str:
    """The compiled HLO text of the jitted ``fn`` on ``args``, under its own compiler options."""
    return fn.lower(*args, **kwargs).compile().as_text()


@pytest.mark.parametrize("kind", ["uniform", pytest.param("gaussian", marks=pytest.mark.slow)])
def test_refinements_order_every_lapack_call(kind, monkeypatch):
    """kinks.refine and the saddles' kink refinement on the default data (1024 views: the multipliers take
    their two-eigh branch). kinks.refine's program is compiled as the library compiles it (its own jit options),
    from the arguments refine passes it."""
    ds = build_dataset(DataSpec(), jnp.float64)
    act, pw = activations.get_activation("relu"), pairwise.get_pairwise(kind)
    W = jnp.ones((3, ds.dim)) / ds.dim ** 0.5
    program, calls = kinks._refine_batch, []
    monkeypatch.setattr(kinks, "_refine_batch", lambda *a, **k: calls.append((a, k)))
    kinks.refine(ds, act, pw, W)
    monkeypatch.undo()
    saddle = jax.jit(lambda d, w: saddles._refine_kinks(d, act, pw, w, n_near=6, n_fixed=1, cand_tol=1e-2, z_tol=1e-12,
                                                        lam_tol=1e-9, rank_tol=1e-10, span_tol=1e-8))
    hlos = {"kinks.refine": _compiled_text(program, *calls[0][0], **calls[0][1]),
            "saddles._refine_kinks": _compiled_text(saddle, ds, W)}
    for name, hlo in hlos.items():
        assert "lapack_" in hlo, name
        assert unordered_lapack_calls(hlo) == [], name


def batched_lapack_calls(hlo: str) -> list:
    """The LAPACK custom calls of the compiled ``hlo`` text whose operand is a batch of matrices (rank > 2)."""
    bad = []
    for line in hlo.split("\n"):
        if 'custom_call_target="lapack_' in line:
            shapes = re.search(r"operand_layout_constraints=\{([^}]*)\}", line)
            ranks = [s.count(",") + 1 for s in re.findall(r"\[([\d,]+)\]", shapes.group(1) if shapes else "")]
            if not ranks or max(ranks) > 2:
                bad.append(line.strip()[:120])
    return bad


def test_the_batch_reader_finds_batched_calls():
    one = ('%e = (f64[9,9]{0,1}) custom-call(%a), custom_call_target="lapack_dsyevd_ffi", '
           'operand_layout_constraints={f64[9,9]{0,1}}')
    many = one.replace("f64[9,9]{0,1}}", "f64[4,9,9]{1,2,0}}")
    assert batched_lapack_calls(one) == [] and len(batched_lapack_calls(many)) == 1


def test_the_certificates_decompose_one_matrix_at_a_time():
    """certify._certify_many (the smooth certificates of every optimum, each with four float64 decompositions) runs
    them one optimum at a time: a batched eigh and eig of it, running at once, hung a run's analysis."""
    ds = build_dataset(DataSpec(), jnp.float64)
    act, pw = activations.get_activation("relu"), pairwise.get_pairwise("uniform")
    W = jnp.ones((3, ds.dim)) / ds.dim ** 0.5
    hlo = _compiled_text(certify._certify_many, ds, act, W, pw)
    assert hlo.count('custom_call_target="lapack_') >= 4
    assert batched_lapack_calls(hlo) == []


def independent_batched_lapack_calls(hlo: str) -> list:
    """(computation, call a, call b) for every two LAPACK custom calls of one computation of ``hlo`` that are
    both batched (:func:`batched_lapack_calls`) and of which neither reaches the other (:func:`unordered_lapack_calls`):
    the pairs that can hang on XLA's CPU pool."""
    batched = set()
    for line in hlo.split("\n"):
        m = re.match(r"\s*(?:ROOT )?(%[\w.\-]+) = ", line)
        if m and batched_lapack_calls(line):
            batched.add(m.group(1))
    return [(c, a, b) for c, a, b in unordered_lapack_calls(hlo) if a in batched and b in batched]


def test_the_pair_reader_keeps_only_independent_batched_calls():
    call = ('%{} = (f64[{}]) custom-call({}), custom_call_target="lapack_dsyevd_ffi", '
            'operand_layout_constraints={{f64[{}]}}')
    hlo = "\n".join(["%body (p: f64[4,9,9]) -> f64[4,9,9] {",
                     "  " + call.format("a", "4,9,9", "%p", "4,9,9"), "  " + call.format("b", "4,9,9", "%p", "4,9,9"),
                     "  " + call.format("c", "9,9", "%p", "9,9"), "  " + call.format("d", "4,9,9", "%a", "4,9,9"), "}"])
    assert independent_batched_lapack_calls(hlo) == [("%body", "%a", "%b"), ("%body", "%b", "%d")]


def _dumped_run(script: str, args: list, dump: Path) -> dict:
    """Runs ``scripts/<script>`` with ``args`` as a user runs it (its own process, XLA's default level, not the
    suite's flags, no compilation cache), XLA dumping every program into ``dump``; the optimized HLO texts by
    file name."""
    env = {**os.environ, "XLA_FLAGS": f"--xla_dump_to={dump}", "CCDYN_COMPILE_CACHE": ""}
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / script), *args], env=env, capture_output=True,
                         text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    return {f.name: f.read_text() for f in dump.glob("*after_optimizations.txt")}


@pytest.mark.slow  # a whole basins run and a small saddles run with XLA's default options (about 45 s on 2 cores)
def test_no_program_of_the_main_job_or_its_saddles_has_two_independent_batched_lapack_calls(tmp_path):
    """Every program the main job compiles with the default method (auto, on the default data: power phase, flow
    phase, second pass, float64 kink refinement, smooth and kink certificates), then the saddles of its
    optima (strings, climbing images, the exact saddles and their certificates), read from XLA's dump of the
    optimized HLO: no two batched LAPACK calls that could run at once (DEVELOPERS.md, "Batched LAPACK calls")."""
    texts = _dumped_run("basins.py", ["--n_init=3000", f"--output_dir={tmp_path / 'run'}"], tmp_path / "hlo")
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_converged"] > 2990 and summary["n_certified_kink"] > 0  # the flow phase ran: kink optima
    names = " ".join(texts)
    for program in ("refine_batch", "certify_many", "kink_certificate"):
        assert program in names, program
    assert sum("tiled_block" in n for n in texts) >= 3, sorted(texts)  # power phase, flow phase, second pass
    assert sum("lapack_" in t for t in texts.values()) >= 3
    saddle = _dumped_run("saddles.py", [f"--run={tmp_path / 'run'}", f"--output_dir={tmp_path / 'saddles'}",
                                        "--n_images=9", "--n_steps=40", "--touch_inits=64"], tmp_path / "hlo_saddles")
    assert sum(bool(batched_lapack_calls(t)) for t in saddle.values()) >= 1  # the saddles' batched decompositions
    bad = {n: pairs for n, t in {**texts, **saddle}.items() if (pairs := independent_batched_lapack_calls(t))}
    assert not bad, bad
