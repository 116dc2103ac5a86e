"""The remark after DDN Thm. 5 (App. C.4, Eq. 165): the polarity threshold rho >= 63.3% (Eq. 130 at
sigma_l = 0, c = 9) and the range 1099 <= |N_mu| <= 1467 that Eq. 128 with the Eq. 124 bounds is said to
give at gamma = 0.2 (:mod:`ccdyn.deep.lucky`). The remark leaves eta open; the record gives every
number per unit ln(1/eta), which no eta makes match both printed ends (their ratio is fixed by the
bounds). ``scripts/ddn_thm5.py`` writes the record."""

from __future__ import annotations

import dataclasses

from ccdyn import report
from ccdyn.deep import lucky

__all__ = ["Thm5RemarkConfig", "run", "markdown", "table_key", "COLUMNS"]

COLUMNS = ("quantity", "value", "paper")


@dataclasses.dataclass(frozen=True)
class Thm5RemarkConfig:
    """c, gamma and sigma_l of the remark; the printed numbers it states."""

    c: float = 9.0
    gamma: float = 0.2
    sigma_l: float = 0.0
    paper_threshold: float = 0.633
    paper_range: tuple = (1099.0, 1467.0)


def run(cfg: Thm5RemarkConfig) -> dict:
    """Every number of the remark, recomputed. Returns ``{"config", "values": {name: value}, "rows"}``."""
    c, g = cfg.c, cfg.gamma
    lo, hi = (lambda y: lucky.mills_bounds(y)[0]), (lambda y: lucky.mills_bounds(y)[1])
    p_exact = lucky.event_probability(c, g)
    printed = sorted([lucky.width_eq128(c, g, r=lo), lucky.width_eq128(c, g, r=hi)])
    fixed = sorted([lucky.width_eq128(c, g, r=lo, corrected=True), lucky.width_eq128(c, g, r=hi, corrected=True)])
    values = {
        "polarity_threshold": lucky.polarity_threshold(c, cfg.sigma_l),
        "r_hat_exact": lucky.r_hat(c, g), "r_hat_bounds": sorted([lucky.r_hat(c, g, lo), lucky.r_hat(c, g, hi)]),
        "eq128_range_per_ln_inv_eta": printed, "eq128_exact_mills": lucky.width_eq128(c, g),
        "eq128_corrected_range": fixed, "eq128_corrected_exact_mills": lucky.width_eq128(c, g, corrected=True),
        "p_event_exact": p_exact, "p_lower_bound_eq123": 1.0 / lucky.width_eq128(c, g),
        "p_lower_bound_corrected": 1.0 / lucky.width_eq128(c, g, corrected=True),
        "width_exact_per_ln_inv_eta": lucky.width_exact(c, g),
        "ratio_of_range_ends": printed[1] / printed[0],
        "paper_ratio_of_range_ends": cfg.paper_range[1] / cfg.paper_range[0]}
    rows = [[k, v if not isinstance(v, list) else " - ".join(f"{x:.6g}" for x in v),
             {"polarity_threshold": cfg.paper_threshold, "eq128_range_per_ln_inv_eta": "1099 - 1467",
              "paper_ratio_of_range_ends": "(printed)"}.get(k, "-")] for k, v in values.items()]
    return {"config": dataclasses.asdict(cfg), "values": values, "rows": rows}


def markdown(record: dict) -> str:
    """``thm5_remark.md``: every recomputed number beside the paper's."""
    return report.markdown_table(COLUMNS, record["rows"]) + "\n"


def table_key() -> list:
    """The key of the quantities table (:data:`COLUMNS`, the rows of :func:`run`; :mod:`ccdyn.deep.lucky`)."""
    return report.key_lines(
        "quantity: polarity_threshold: the smallest rho with Eq. 130's bracket >= 0; r_hat_exact, r_hat_bounds: "
        "R_hat of Eq. 121 with the exact Mills ratio and with its lower / upper bounds of Eq. 124; "
        "eq128_range_per_ln_inv_eta: Eq. 128's |N_mu| per unit ln(1/eta) with those two bounds (the paper's range), "
        "eq128_exact_mills with the exact ratio, eq128_corrected_*: the same with Eq. 114's exponent "
        "c / 2(1 - gamma^2) for Eq. 128's c / 2; p_event_exact: P(y+ >= sqrt c, y- >= 0) by quadrature; "
        "p_lower_bound_eq123, p_lower_bound_corrected: Eq. 123's bound on it as printed and corrected; "
        "width_exact_per_ln_inv_eta: the |N_mu| the exact probability needs; ratio_of_range_ends: upper / lower "
        "end of the range (no eta changes it), paper_ratio_of_range_ends: the printed 1467 / 1099; value: ours; "
        "paper: the printed number, -: none printed.")
