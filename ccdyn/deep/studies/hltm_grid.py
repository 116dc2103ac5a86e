"""The HLTM experiment of *Understanding Self-supervised Learning with Dual Deep Networks* (Sec. 7,
Table 4, Table 6, App. D.1, Figs. 13-14) as a grid of settings, each trained over vmapped seeds.

A :class:`Setting` is (reading, depth L, width |N_mu|, delta_lower); :class:`GridConfig` is every
combination plus the shared training settings, run by :func:`ccdyn.grid.run`. Seed s of every setting
uses the key ``fold_in(PRNGKey(seed), s)`` (:func:`ccdyn.grid.seed_keys`), so the settings of one seed
are paired: the same uniform draws make its polarities rho = delta_lower + (1 - delta_lower) u, and the
same evaluation and data streams. :func:`run_setting` returns the per-setting record (the unit of
``--resume``); :func:`table6_rows`
reduces records to mean and std over seeds of NC at initialization, after epoch 1 and at the last
epoch (a seed whose losses or scores went non-finite, :func:`finite_seeds`, is left out and counted);
:func:`op_curves` gives the median ||OP_mu||_F over seeds per evaluated epoch (Figs. 13-14).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ccdyn import grid, report
from ccdyn.data import hltm as tree_data
from ccdyn.deep import hltm

__all__ = ["TABLE6_LATENTS", "FIGURE_LATENTS", "PHASES", "Setting", "GridConfig", "run_setting", "finite_seeds",
           "table6_rows", "op_curves", "figure_panels", "results_csv", "results_table", "results_table_key"]

TABLE6_LATENTS = ("s", "s0", "s1", "s101", "s0111")
FIGURE_LATENTS = ("s0", "s1", "s010", "s1100")
PHASES = ("init", "epoch1", "converged")


@dataclasses.dataclass(frozen=True)
class Setting:
    """One grid point: loss reading, tree depth, nodes per latent, lower end of the polarity range."""

    reading: str = "paper"
    depth: int = 5
    width: int = 10
    delta_lower: float = 0.7

    def __post_init__(self):
        object.__setattr__(self, "delta_lower", float(self.delta_lower))

    @property
    def tag(self) -> str:
        return f"{self.reading}-L{self.depth}-w{self.width}-d{self.delta_lower:g}"


_H = hltm.HltmConfig()


@dataclasses.dataclass(frozen=True)
class GridConfig(grid.Axes):
    """Every combination of ``readings`` x ``depths`` x ``widths`` x ``deltas_lower``, trained with
    the shared settings below (App. D.1 defaults) and scored every ``eval_every`` epochs (and after
    epoch 1)."""

    readings: tuple = ("paper",)
    depths: tuple = (5,)
    widths: tuple = (2, 10)
    deltas_lower: tuple = (0.7, 0.8, 0.9)
    n_seeds: int = 10
    seed: int = 0
    tau: float = _H.tau  # the training defaults are HltmConfig's (App. D.1)
    lr: float = _H.lr
    batch_size: int = _H.batch_size
    samples_per_epoch: int = _H.samples_per_epoch
    epochs: int = _H.epochs
    n_eval: int = _H.n_eval
    eval_every: int = 5

    SETTING = Setting
    AXES = (("readings", "reading"), ("depths", "depth"), ("widths", "width"), ("deltas_lower", "delta_lower"))

    def __post_init__(self):
        if self.n_seeds < 1 or self.eval_every < 1:
            raise ValueError(f"n_seeds={self.n_seeds} and eval_every={self.eval_every} must be >= 1")
        for s in self.settings():
            self.hltm_config(s)  # validates every setting before anything runs

    def hltm_config(self, s: Setting) -> hltm.HltmConfig:
        return hltm.HltmConfig(depth=s.depth, width=s.width, delta_lower=s.delta_lower, reading=s.reading,
                               tau=self.tau, lr=self.lr, batch_size=self.batch_size,
                               samples_per_epoch=self.samples_per_epoch, epochs=self.epochs, n_eval=self.n_eval)

    def eval_epochs(self) -> list:
        return sorted({0, 1, self.epochs} | set(range(0, self.epochs + 1, self.eval_every)))

    def run_steps(self) -> int:
        """Seed-steps (one SGD step of one seed) of the whole grid."""
        return len(self.settings()) * self.n_seeds * self.epochs * (self.samples_per_epoch // self.batch_size)


def run_setting(s: Setting, config: GridConfig, on_epoch=None) -> dict:
    """Trains the seeds of one setting; the record keeps per-seed scores of every evaluated epoch."""
    cfg = config.hltm_config(s)
    r = hltm.train(cfg, grid.seed_keys(config.seed, config.n_seeds), eval_epochs=config.eval_epochs(),
                   on_epoch=on_epoch)
    finite = (np.all(np.isfinite(r["loss"]), 1) & np.all(np.isfinite(r["nc"]), (1, 2))
              & np.all(np.isfinite(r["op"]), (1, 2)))
    return {"setting": dataclasses.asdict(s), "latents": hltm.latent_names(s.depth),
            "seed_steps": config.n_seeds * cfg.epochs * cfg.steps_per_epoch,
            **{k: np.asarray(v).tolist() for k, v in r.items()}, "finite": finite.tolist()}


def finite_seeds(record: dict) -> np.ndarray:
    """Per seed of a :func:`run_setting` record: no NaN / inf in its losses and scores (records written
    before this flag existed count as finite)."""
    return np.asarray(record.get("finite", [True] * len(record["nc"])), bool)


def _phase_index(epochs):
    epochs = list(epochs)
    return {"init": epochs.index(0), "epoch1": epochs.index(1), "converged": len(epochs) - 1}


def table6_rows(records) -> list:
    """One row per (setting, latent of Table 6 present in the tree): mean and std (ddof 0) over seeds
    of NC at each phase, and the epoch of "converged"."""
    rows = []
    for rec in records:
        s, idx = rec["setting"], _phase_index(rec["epochs"])
        ok = finite_seeds(rec)
        nc = np.asarray(rec["nc"], float)[ok]  # a seed that went non-finite is left out, never averaged in
        for name in TABLE6_LATENTS:
            if name not in rec["latents"]:
                continue
            j = rec["latents"].index(name)
            row = {**s, "latent": name, "n_seeds": nc.shape[0], "converged_epoch": rec["epochs"][-1]}
            if not ok.all():
                row["nonfinite_seeds"] = int((~ok).sum())
            for ph, e in idx.items():
                v = nc[:, e, j]
                row[ph] = ({"mean": float(np.mean(v)), "std": float(np.std(v))} if v.size else
                           {"mean": float("nan"), "std": float("nan")})
            rows.append(row)
    return rows


def op_curves(records, key: str = "op") -> dict:
    """{(setting tag, latent): (epochs, median over seeds of ||OP_mu||_F)} for the figure latents."""
    out = {}
    for rec in records:
        tag = Setting(**rec["setting"]).tag
        v = np.asarray(rec[key])
        for name in FIGURE_LATENTS:
            if name in rec["latents"]:
                out[(tag, name)] = (np.asarray(rec["epochs"]),
                                    np.median(v[finite_seeds(rec)][:, :, rec["latents"].index(name)], 0))
    return out


CSV_COLUMNS = (
    ("reading", lambda r: r["reading"]), ("depth", lambda r: r["depth"]), ("width", lambda r: r["width"]),
    ("delta_lower", lambda r: r["delta_lower"]), ("latent", lambda r: r["latent"]),
    ("depth_of_latent", lambda r: tree_data.node_depth(tree_data.node_index(r["latent"]))),
    ("n_seeds", lambda r: r["n_seeds"])) + tuple(
    (f"{ph}_{m}", lambda r, ph=ph, m=m: round(r[ph][m], 4)) for ph in PHASES for m in ("mean", "std"))
TABLE_COLUMNS = (
    ("reading", lambda r: r["reading"]), ("L", lambda r: r["depth"]), ("|N_mu|", lambda r: r["width"]),
    ("delta_lower", lambda r: r["delta_lower"]), ("latent", lambda r: r["latent"])) + tuple(
    (ph, lambda r, ph=ph: f"{r[ph]['mean']:.2f} ± {r[ph]['std']:.2f}") for ph in PHASES)


def results_csv(rows) -> tuple:
    """(headers, rows) of ``results.csv``: the setting, the latent and its depth, NC mean and std per phase."""
    return grid.table(rows, CSV_COLUMNS)


def results_table(rows) -> tuple:
    """(headers, rows) of the printed summary: NC mean ± std per phase."""
    return grid.table(rows, TABLE_COLUMNS)


def results_table_key() -> list:
    """The key of :func:`results_table`'s columns (one entry per column and symbol; docs/ddn.md)."""
    return report.key_lines(
        "reading: paper = per-sample L_nce (Eq. 2, H = 1) with rho > 0; authors = the authors' batch sigmoid loss "
        "with random signs of rho; nce_random_sign = per-sample L_nce with random signs of rho; L: tree depth; "
        "|N_mu|: nodes per latent; delta_lower: polarities rho ~ U[delta_lower, 1] (Eq. 14); latent: z_mu in heap "
        "order (s the root, s0 and s1 its children, s0111 a bottom latent at L = 5); init, epoch1, converged: "
        "NC_mu = max over the latent's nodes j of |Pearson(z_mu, pre-activation of j)| on fixed evaluation samples, "
        "mean ± std (ddof 0) over the finite seeds, before training, after epoch 1 and after the last epoch "
        "(Table 6's three phases).")


def figure_panels(records, reading: str = "paper", key: str = "op") -> dict:
    """Panels of the Figs. 13-14 analogue: {factor: {label: {latent: (epochs, median)}}} for each of
    depth, delta_lower and width that takes several values among the ``reading`` records, the other
    two held at a reference (the smallest depth, the middle delta_lower, the largest width)."""
    recs = [r for r in records if r["setting"]["reading"] == reading]
    if not recs:
        return {}
    axes = {k: sorted({r["setting"][k] for r in recs}) for k in ("depth", "delta_lower", "width")}
    ref = {"depth": axes["depth"][0], "delta_lower": axes["delta_lower"][len(axes["delta_lower"]) // 2],
           "width": axes["width"][-1]}
    names = {"depth": "depth L", "delta_lower": "delta_lower", "width": "|N_mu|"}
    panels = {}
    for factor, values in axes.items():
        if len(values) < 2:
            continue
        fixed = ", ".join(f"{names[k]} {ref[k]:g}" for k in ref if k != factor)
        panel = {}
        for r in recs:
            s = r["setting"]
            if all(s[k] == ref[k] for k in ref if k != factor):
                curves = op_curves([r], key)
                panel[f"{names[factor]} = {s[factor]:g}"] = {lat: v for (_, lat), v in curves.items()}
        panels[f"{names[factor]} ({fixed})"] = panel
    return panels
