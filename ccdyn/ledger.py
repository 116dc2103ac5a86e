"""The claims ledger: every claim of the three papers in one place, each verdict from its record.

:data:`CATALOGUE` (kept in :mod:`ccdyn.catalogue`, re-exported here) lists, in paper order, every numbered
statement (theorem, lemma, proposition, corollary, remark with content), equation with a closed form that
ccdyn names, figure and table of the core paper (Tian, ICLR 2023), Dual Deep Networks (DDN) and the SimCLR
variational analysis, plus ccdyn's own accuracy claims. Each entry says how it is covered
(:class:`Records`, :class:`Tested` or :class:`NotChecked`).
:data:`SOURCES` is the one registry of (claims function, committed result files): to register a new
check, add its claims function and files there and a :class:`Records` pattern to its catalogue entry.

:func:`collect` builds the ledger rows (one :func:`ccdyn.verdicts.claim_record` each, plus ``claim``, the
catalogue id) from the committed results under a root; :func:`markdown` renders ``results/CLAIMS.md``.

The rule for a claim checked only by a test (:class:`Tested`): its verdict is the test outcome recorded in
:data:`TESTS_FILE` by ``python scripts/claims.py --run_tests`` (every node passed: holds; one failed:
fails; not recorded: not established), never the test's mere existence; the row names the test node ids
as its result and says "tested" in its note.

Every row, whatever its cover, then goes through the one rule :func:`ccdyn.verdicts.earned`: its evidence
(the record's own, updated by the catalogue entry's ``evidence`` for the ids it names: scope, significance,
a part measured false elsewhere) lowers the measured word to the word it earns; the row keeps the measured
word in ``record_verdict`` and says why in ``reason`` and first in its note ("...; the record says holds").
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from ccdyn import io, report, verdicts
from ccdyn.catalogue import CATALOGUE, READINGS, Claim, NotChecked, Records, Tested
from ccdyn.deep import claims as deep
from ccdyn.one_layer import claims as one
from ccdyn.two_layer import claims as two
from ccdyn.variational import claims as var

__all__ = ["Records", "Tested", "NotChecked", "Claim", "CATALOGUE", "Source", "SOURCES", "TESTS_FILE",
           "TESTS_COMMAND", "cited_tests", "collect", "markdown", "LedgerError"]

TESTS_FILE = "results/claims_tests.json"
TESTS_COMMAND = "python scripts/claims.py --run_tests"


class LedgerError(ValueError):
    """A result file is missing or unreadable, or a record matches no (or two) catalogue entries."""


@dataclasses.dataclass(frozen=True)
class Source:
    """A claims function and the committed files it reads (relative to the root); ``make(files)`` gets
    the files' contents in order (JSON parsed, CSV as a list of dicts) and returns ledger records."""
    files: tuple
    make: object


_R = "results/"
_MNIST = ("mnist", "mnist_lr0.01", "mnist_real", "mnist_real_lr0.01")


def _mnist(name):
    def make(files):
        rows = two.mnist_ledger(files[0], result=f"results/two_layer/{name}")
        tag = name.replace("mnist", "").strip("_") or "digits"
        return [dict(r, id=f"{r['id']}-{tag}", location=f"{r['location']} [{name}]") for r in rows]
    return Source((f"{_R}two_layer/{name}/summary.json",), make)


def _ddn_table(name, reading, note=None, subset=None):
    def make(files):
        rows, command = files[0]["rows"], files[0]["command"]
        out = deep.table6_claims(deep.table6_cells(rows, reading=reading), reading=reading,
                                 result=f"results/ddn/{name}", command=command, subset=subset)
        trends = files[0]["verdicts"][reading]["trends"]  # a trend the grid cannot judge (one width) is left out
        out += [r for r, t in zip(deep.trend_claims(trends, reading=reading, result=f"results/ddn/{name}",
                                                    command=command), trends) if t["holds"] is not None]
        return [dict(r, note=note) for r in out] if note else out
    return Source((f"{_R}ddn/{name}/results.json",), make)


_LOWEST_GRIDS = ("fig4_infonce (lr=0.002 tau=0.1)", "fig10_quadratic", *[f"sensitivity/{g}" for g in (
    "lr0.002_bn-mean_only_tau0.1", "lr0.002_bn-none_tau0.5", "lr0.02_bn-mean_only_tau0.1",
    "lr0.02_bn-mean_only_tau0.5", "lr0.02_bn-none_tau0.1")], *[f"sensitivity/{g}" for g in (
    "quadratic_authors_lr0.002_bn-none (authors)", "quadratic_authors_lr0.02_bn-none (authors)",
    "quadratic_lr0.02_bn-none (limit)")])  # the grids with "ReLU has the lowest chi_-" and their results.csv
_MOD = ("eq15.json", "fig7.json", "thm6.json", "cor3.json", "eq155.csv")

SOURCES = (
    Source((f"{_R}landscape/landscape.json",), lambda f: one.fig8_claims(f[0])),
    Source(tuple(f"{_R}basins/{a}/summary.json" for a in ("relu", "leaky_relu", "linear")),
           lambda f: one.patterns_claims(dict(zip(("relu", "leaky_relu", "linear"), f)))),
    Source((f"{_R}theory/fig1/power_iteration.json",), lambda f: one.fig1_claims(f[0])),
    Source((f"{_R}theory/thm3/thm3.json",), lambda f: one.theorem3_claims(f[0])),
    Source((f"{_R}theory/roughness/table/roughness.json",), lambda f: one.thm1_claims(f[0]) + one.thm2_claims(f[0])),
    Source((f"{_R}theory/cor2/roughness/roughness.json",), lambda f: one.cor2_claims(f[0])),
    Source((f"{_R}theory/augmentation/augmentation.json",), lambda f: one.augmentation_claims(f[0])),
    Source((f"{_R}basins/flow_exact_2d/flow_accuracy.json",),
           lambda f: one.flow_claims(f[0], result="results/basins/flow_exact_2d")),
    Source((f"{_R}basins/flow_rtol/flow_accuracy.json",),
           lambda f: one.flow_claims(f[0], result="results/basins/flow_rtol")),
    Source((f"{_R}basins/kink_check/kink_check.json",), lambda f: one.kink_claims(f[0])),
    Source((f"{_R}saddles/ortho_eps/along.json",), lambda f: one.barrier_ortho_claims(f[0])),
    Source((f"{_R}saddles/tau/along.json",), lambda f: one.barrier_tau_claims(f[0])),
    Source((f"{_R}two_layer/claims.json", *[two.grid_csv(g) for g in _LOWEST_GRIDS]),
           lambda f: two.grid_claims(f[0]["checks"], command=f[0]["command"], csv=dict(zip(_LOWEST_GRIDS, f[1:])))),
    *[_mnist(name) for name in _MNIST],
    Source(tuple(f"{_R}theory/modulation/{n}" for n in _MOD),
           lambda f: two.modulation_claims(two.modulation_verdicts(dict(zip(("eq15", "fig7", "thm6", "cor3", "eq155"),
                                                                            f))), command=f[0]["command"])),
    Source((f"{_R}theory/cor2/exact/cor2_exact.json",), lambda f: one.cor2_exact_claims(f[0])),
    Source((f"{_R}theory/thm3_exact/thm3_exact.json",), lambda f: one.theorem3_exact_claims(f[0])),
    Source((f"{_R}theory/kernel_lemmas/kernel_lemmas.json",), lambda f: one.kernel_lemmas_claims(f[0])),
    Source((f"{_R}ddn/thm5_remark/thm5_remark.json",), lambda f: deep.thm5_remark_claims(f[0])),
    Source((f"{_R}simclr_var/thm42_moving/thm42_moving.json",), lambda f: var.thm42_moving_claims(f[0])),
    Source((f"{_R}theory/modulation_bounds/modulation_bounds.json",), lambda f: two.modulation_bounds_claims(f[0])),
    Source((f"{_R}theory/lemma5_general/lemma5_general.json",), lambda f: two.lemma5_general_claims(f[0])),
    Source((f"{_R}theory/top_layer/top_layer.json",), lambda f: two.top_layer_claims(f[0])),
    Source((f"{_R}ddn/operator/operator.json",), lambda f: deep.operator_claims(f[0], command=f[0]["command"])),
    Source((f"{_R}ddn/digits/digits.json",), lambda f: deep.digits_claims(f[0], command=f[0]["command"])),
    Source((f"{_R}ddn/appendix/appendix.json",), lambda f: deep.appendix_claims(f[0])),
    Source((f"{_R}ddn/figures/figures.json",), lambda f: deep.figures_claims(f[0])),
    Source((f"{_R}theory/appendix_forms/appendix_forms.json",),
           lambda f: two.appendix_forms_claims(f[0]["core"], command=f[0]["command"])
           + deep.appendix_forms_claims(f[0]["ddn"], command=f[0]["command"])
           + var.appendix_a1_claims(f[0]["simclr"], command=f[0]["command"])
           + var.eq6_claims(f[0]["eq6"], command=f[0]["command"])
           + deep.thm5_sim_claims(f[0]["ddn_thm5"], command=f[0]["command"])),
    Source((f"{_R}two_layer/fig4_infonce/results.json", f"{_R}two_layer/fig10_quadratic/results.json"),
           lambda f: two.fig4_caption_claims(*f)),
    Source((f"{_R}landscape/landscape.json",), lambda f: one.appE1_orthogonal_claims(f[0])),
    _ddn_table("table6", "paper"),
    _ddn_table("table6_authors", "authors"),
    _ddn_table("table6_nce_random_sign", "nce_random_sign",
               note="|N_mu| = 2 cells only (the width where the readings differ), 10 seeds, 50 epochs",
               subset="only the |N_mu| = 2 cells were run, half of the table"),
    Source(tuple(f"{_R}simclr_var/{p}" for p in ("sphere/sphere.json", "kernel/kernel.json", "kernel/clusters.json")),
           lambda f: var.ledger(*f)),
)


def _read(root: Path, rel: str):
    path = root / rel
    if not path.is_file():
        raise LedgerError(f"missing result file {rel}")
    try:
        return io.read_csv(path) if path.suffix == ".csv" else io.read_json(path)
    except (OSError, ValueError) as e:
        raise LedgerError(f"cannot read {rel}: {e}") from None


def cited_tests() -> list:
    """Every test node id the catalogue cites, in catalogue order, once each."""
    return list(dict.fromkeys(n for c in CATALOGUE if isinstance(c.cover, Tested) for n in c.cover.nodes))


def _tested_row(claim: Claim, outcomes: dict | None) -> dict:
    t = claim.cover
    assert isinstance(t, Tested)  # the caller routes only Tested covers here
    got = {n: (outcomes or {}).get(n) for n in t.nodes}
    if outcomes is None or any(v is None for v in got.values()):
        word = "not established"
    else:
        word = "holds" if all(v == "passed" for v in got.values()) else "fails"
    note = "tested" + (f"; {t.note}" if t.note else "")
    return verdicts.claim_record(claim.id, claim.paper, claim.location, claim.statement, word,
                                 {"tests": {n.split("::")[1]: v or "not run" for n, v in got.items()}}, t.check,
                                 reading=t.reading, result=" ".join(t.nodes), command=TESTS_COMMAND, note=note,
                                 evidence=t.evidence)


def _judged(row: dict) -> dict:
    """The row with the word :func:`ccdyn.verdicts.earned` gives from its measured word, check kind and
    evidence: ``record_verdict`` keeps the measured word, ``reason`` says why the word is lower (None when it
    is not) and the note ends with "the record says <word>"."""
    word, why = verdicts.earned(row["verdict"], row["check"], row.get("evidence"))
    out = dict(row, verdict=word, record_verdict=row["verdict"], reason=why, evidence=row.get("evidence") or {})
    if why:
        out["note"] = f"{why}; the record says {row['verdict']}" + (f"; {row['note']}" if row.get("note") else "")
    return out


def collect(root, log=None) -> list:
    """The ledger rows, in catalogue order, from the committed results under ``root`` (the repository).

    Raises:
      LedgerError: a missing or unreadable result file, or a record that matches no catalogue entry or
        more than one.
    """
    root = Path(root)
    log = log or (lambda message: None)
    records = []
    for s in SOURCES:
        records += s.make([_read(root, p) for p in s.files])
    log(f"{len(records)} records from {sum(len(s.files) for s in SOURCES)} result files")
    outcomes = _read(root, TESTS_FILE)["outcomes"] if (root / TESTS_FILE).is_file() else None
    patterns = [(c, re.compile(c.cover.pattern)) for c in CATALOGUE if isinstance(c.cover, Records)]
    by_claim: dict[str, list[dict]] = {c.id: [] for c in CATALOGUE}
    for r in records:
        hits = [c for c, p in patterns if p.fullmatch(r["id"])]
        if len(hits) != 1:
            raise LedgerError(f"record {r['id']} matches {len(hits)} catalogue entries (needs exactly 1)")
        c = hits[0]
        evidence = dict(r.get("evidence") or {})
        for regex, ev in c.cover.evidence:
            if re.fullmatch(regex, r["id"]):
                evidence.update(ev)
        by_claim[c.id].append(dict(r, reading=c.cover.reading or r.get("reading"), note=r.get("note") or c.cover.note,
                                   evidence=evidence))
    rows = []
    for c in CATALOGUE:
        if isinstance(c.cover, Tested):
            found = [_tested_row(c, outcomes)]
        elif isinstance(c.cover, NotChecked):
            found = [verdicts.claim_record(c.id, c.paper, c.location, c.statement, "not checked", {}, None,
                                           reading=c.cover.reading, note=c.cover.why)]
        else:
            found = by_claim[c.id]
            if not found:
                raise LedgerError(f"catalogue entry {c.id} ({c.location}) has no record: register its source")
        rows += [{"claim": c.id, **_judged(r)} for r in found]
    ids = [r["id"] for r in rows]
    if len(ids) != len(set(ids)):
        raise LedgerError(f"duplicate row ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    return rows


_PAPER_TITLES = {"core": "Core paper: Understanding the Role of Nonlinearity in Training Dynamics of Contrastive "
                         "Learning (Tian, ICLR 2023)",
                 "DDN": "Understanding Self-supervised Learning with Dual Deep Networks (Tian, Yu, Chen, Ganguli)",
                 "SimCLR-var": "Understanding Contrastive Learning through Variational Analysis and Neural Network "
                               "Optimization Perspectives",
                 "ccdyn": "ccdyn's own accuracy claims (docs/flow.md)"}


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def counts(rows) -> dict:
    """{"paper": {paper: n}, "verdict": {word: n}, "check": {kind: n}} over the rows."""
    out = {"paper": {}, "verdict": {w: 0 for w in verdicts.WORDS}, "check": {}}
    for r in rows:
        out["paper"][r["paper"]] = out["paper"].get(r["paper"], 0) + 1
        out["verdict"][r["verdict"]] += 1
        key = r["check"] or "none (not checked)"
        out["check"][key] = out["check"].get(key, 0) + 1
    return out


def markdown(rows) -> str:
    """``results/CLAIMS.md``: the rules, the counts, then one table per paper in paper order."""
    c = counts(rows)
    lines = ["# The claims ledger", "",
             "Every claim of the three papers, in paper order, with the verdict its record holds. Written by "
             "`python scripts/claims.py` from the committed results (do not edit by hand); `claims.json` has the "
             "same rows with every number. Verdict words: holds / partly (some sub-claims hold) / fails / not "
             "established (nothing to judge) / not checked; the note in brackets qualifies a word. A row checked "
             "only in the test suite names its test nodes as the result: its verdict is the outcome recorded by "
             f"`{TESTS_COMMAND}` in `{TESTS_FILE}` (not the test's existence). Every word is the one the rule of "
             "`ccdyn.verdicts.earned` gives from the evidence (docs/independent_checks.md, Verdict words): a "
             "difference within noise (p above 0.05 over the family's comparisons, a margin within 2 s.e.), a "
             "check true by construction, an estimate of what the claim needs certified, or a claim the paper does not "
             "make earns \"not established\"; a check of a special case of the claim's scope, or one with a part "
             "measured false elsewhere, earns at most \"partly\"; the note then gives the reason and the record's "
             "word. Readings where a paper is "
             f"ambiguous: [{READINGS}](../{READINGS}).", "",
             "Rows per paper: " + ", ".join(f"{k} {v}" for k, v in c["paper"].items()) + ". Per verdict: "
             + ", ".join(f"{k} {v}" for k, v in c["verdict"].items()) + ". Per check: "
             + ", ".join(f"{k} {v}" for k, v in c["check"].items()) + "."]
    for paper in verdicts.PAPERS:
        sel = [r for r in rows if r["paper"] == paper]
        if not sel:
            continue
        body = [[_cell(r["id"]), _cell(r["location"]), _cell(r["statement"]),
                 _cell(r["verdict"] + (f" ({r['note']})" if r.get("note") else "")), r["check"] or "",
                 _cell(verdicts._short(verdicts._rounded(r["numbers"]))) if r["numbers"] else "",
                 _cell(r["reading"] or ""), _cell(r["result"] or ""),
                 _cell(f"`{r['command']}`" if r["command"] else "")]
                for r in sel]
        lines += ["", f"## {_PAPER_TITLES[paper]}", "",
                  report.markdown_table(["id", "where", "statement", "verdict", "check", "numbers", "reading",
                                         "result", "command"], body)]
    return "\n".join(lines) + "\n"


def to_json(rows) -> str:
    """``results/claims.json``: the counts and every row (deterministic: sorted keys, 2-space indent)."""
    return json.dumps({"counts": counts(rows), "rows": io.as_json(rows)}, indent=2, sort_keys=True) + "\n"
