"""Verdicts on the paper's Sec. 5 / App. E.2 claims, computed from finished scripts/two_layer.py grids.

    python scripts/two_layer_claims.py          # reads results/two_layer/*, writes claims.md / claims.json

Also writes summary.md: for every grid found, a compact table of chi_bar_+ (chi_bar_-) per
(activation, BN, zeta, P) row and beta column, the chance level of the untrained filters and the
mean angle the filters turned during training.

Each claim is a numeric check in ccdyn.experiments (check_*), applied to the paper's stated setting
(the Fig. 4/9, Fig. 10, Fig. 11 and Table 1 grids) and to every grid under --sensitivity (one
directory per lr / BN / tau combination, relu and linear only). A missing grid is skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

from absl import app, flags

from ccdyn import io, report
from ccdyn.two_layer import claims

FLAGS = flags.FLAGS
flags.DEFINE_string("root", "results/two_layer", "Directory holding the grids.")
flags.DEFINE_float("margin", 0.05, "Differences below this count as none (flat / not better), in [0, 1).")
flags.register_validator("margin", lambda v: 0 <= v < 1, "--margin must lie in [0, 1)")


def _rows(path):
    f = Path(path) / "results.json"
    return io.read_json(f)["rows"] if f.exists() else None


def _cfg(path):
    c = io.read_json(Path(path) / "results.json")["config"]["train"]
    return f"lr={c['lr']:g} tau={c['tau']:g}"


def _short(numbers) -> str:
    text = json.dumps(io.as_json(numbers), separators=(",", ":"))
    for a, b in [("\"", ""), ("chi_", "χ")]:
        text = text.replace(a, b)
    return text if len(text) < 400 else text[:397] + "..."


def _fmt(numbers):
    return json.loads(json.dumps(io.as_json(numbers)), parse_float=lambda s: round(float(s), 3))


def _grid_table(rows) -> str:
    betas = sorted({r["beta"] for r in rows})
    keys = sorted({(r["loss"], r["act"], r["bn"], r["zeta"], r["n_candidates"]) for r in rows},
                  key=lambda k: (k[0], k[1], k[2], k[3], k[4]))
    cell = {(r["loss"], r["act"], r["bn"], r["zeta"], r["n_candidates"], r["beta"]): r for r in rows}
    body = []
    for k in keys:
        line = list(k)
        for b in betas:
            r = cell.get(k + (b,))
            if r is None:
                line.append("-")
                continue
            turn = "" if not r.get("turn_deg") else f", {r['turn_deg']['mean']:.0f}°"
            init = r.get("chi_plus_init")
            chance = "" if not init else f" [{init['mean']:.2f}]"
            line.append(f"{r['chi_plus']['mean']:.2f} ({r['chi_minus']['mean']:.2f}){chance}{turn}")
        body.append(line)
    return report.markdown_table(["loss", "act", "bn", "ζ", "P"] + [f"β = {b}" for b in betas], body)


def _summary(root: Path) -> str:
    parts = ["Each cell: χ̄₊ (χ̄₋) [χ̄₊ of the untrained filters], and the mean angle the filters turned "
             "during training where recorded; means over seeds. Written by scripts/two_layer_claims.py."]
    for d in sorted([p.parent for p in root.glob("*/results.json")] + [p.parent for p in root.glob("*/*/results.json")]):
        res = io.read_json(d / "results.json")
        c = res["config"]["train"]
        parts.append(f"### {d.relative_to(root)}\n\nlr {c['lr']:g}, τ {c['tau']:g}, {c['steps']} steps, "
                     f"{res['config']['n_seeds']} seeds; `{res['config']['command']}`\n\n" + _grid_table(res["rows"]))
    return "\n\n".join(parts) + "\n"


def main(argv):
    del argv
    root, m = Path(FLAGS.root), FLAGS.margin
    results = []

    def add(where, verdict):
        if verdict["holds"] is not None:
            results.append({"grid": where, **verdict})

    fig4, fig10 = _rows(root / "fig4_infonce"), _rows(root / "fig10_quadratic")
    table1, fig11 = _rows(root / "table1"), _rows(root / "fig11")
    if fig4:
        add(f"fig4_infonce ({_cfg(root / 'fig4_infonce')})", claims.check_p1(fig4, margin=m))
        add(f"fig4_infonce ({_cfg(root / 'fig4_infonce')})", claims.check_relu_beats_linear(fig4, margin=m))
        add(f"fig4_infonce ({_cfg(root / 'fig4_infonce')})", claims.check_relu_lowest_chi_minus(fig4))
    if fig10:
        add("fig10_quadratic", claims.check_p1(fig10, loss="quadratic", margin=m))
        add("fig10_quadratic", claims.check_relu_beats_linear(fig10, loss="quadratic", margin=m))
        add("fig10_quadratic", claims.check_relu_lowest_chi_minus(fig10, loss="quadratic"))
    if fig4 and fig10:
        add("fig4_infonce + fig10_quadratic", claims.check_infonce_beats_quadratic(fig4 + fig10))
    if table1:
        add("table1 (zeta=10)", claims.check_sigma_backprop_hurts(table1))
    table1_fast = _rows(root / "table1_lr0.02")
    if table1_fast:
        add("table1_lr0.02 (zeta=10)", claims.check_sigma_backprop_hurts(table1_fast))
    bn_rows = (fig11 or []) + (table1 or [])
    for zeta in (2.0, 5.0, 10.0):
        add(f"fig11 (zeta={zeta:g})", claims.check_bn_helps(bn_rows, zeta=zeta))
    sens = root / "sensitivity"
    infonce_by_bn = {}
    for d in sorted(sens.glob("*")) if sens.exists() else []:
        rows = _rows(d)
        if not rows:
            continue
        loss = rows[0]["loss"]
        bn = rows[0]["bn"]
        if loss == "infonce":
            add(f"sensitivity/{d.name}", claims.check_p1(rows, bn=bn, margin=m))
            add(f"sensitivity/{d.name}", claims.check_relu_beats_linear(rows, bn=bn, margin=m))
            add(f"sensitivity/{d.name}", claims.check_relu_lowest_chi_minus(rows, bn=bn))
            if "tau0.1" in d.name:
                infonce_by_bn.setdefault((_cfg(d).split()[0], bn), rows)
        else:
            nce = infonce_by_bn.get((_cfg(d).split()[0], bn))
            if nce is None and fig4 and bn == "none" and _cfg(d).startswith("lr=0.002"):
                nce = fig4
            if nce:
                add(f"sensitivity/{d.name} vs infonce", claims.check_infonce_beats_quadratic(nce + rows, bn=bn))
            if fig4 and bn == "none" and _cfg(d).startswith("lr=0.02 "):
                # InfoNCE's gradient carries 1/tau = 10x the scale of the quadratic loss's (see
                # ccdyn.two_layer): InfoNCE at lr 2e-3 against quadratic at lr 2e-2 matches the step size.
                add(f"sensitivity/{d.name} vs fig4_infonce (lr 0.002: matched step)",
                    claims.check_infonce_beats_quadratic([r for r in fig4 if r["act"] in {q["act"] for q in rows}] + rows))
    body = [[r["grid"], r["claim"], claims.verdict_word(r),
             "; ".join(f"{k}: {'yes' if v else 'no'}" for k, v in r["parts"].items()), _short(_fmt(r["numbers"]))]
            for r in results]
    md = report.markdown_table(["grid", "claim", "verdict", "parts", "numbers"], body)
    claims = list(dict.fromkeys(r["claim"] for r in results))
    grids = list(dict.fromkeys(r["grid"] for r in results))
    verdicts = {(r["grid"], r["claim"]): claims.verdict_word(r) for r in results}
    pivot = report.markdown_table(["grid"] + claims, [[g] + [verdicts.get((g, c), "") for c in claims] for g in grids])
    md = "Verdict per grid and claim:\n\n" + pivot + "\n\nDetails:\n\n" + md
    print(report.format_table(["grid", "claim", "verdict", "parts"], [b[:4] for b in body]))
    io.atomic_write_bytes(root / "claims.md", (md + "\n").encode())
    io.write_json(root / "claims.json", {"margin": m, "checks": results})
    io.atomic_write_bytes(root / "summary.md", _summary(root).encode())
    print(f"\nwrote {root / 'claims.md'}, claims.json ({len(results)} checks) and summary.md")


if __name__ == "__main__":
    app.run(main)
