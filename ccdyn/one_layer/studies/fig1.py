"""Fig. 1 (right): power iteration (Eq. PI) started at each planted pattern u_m of a latent summation
model whose basis is only nearly orthogonal (Thm. 3).

For every ||U^T U - I||_2 = eps of :class:`Fig1Config` and every m, w(0) = u_m / ||u_m||; the study
records the moves ||w(t+1) - w(t)|| for t < ``n_steps`` and certifies the end point (float64).
``scripts/power_iteration.py`` writes the record as ``power_iteration.json`` and draws the moves.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import activations, data, one_layer, pairwise, report
from ccdyn.one_layer import certify

__all__ = ["Fig1Config", "run", "table", "table_key", "TABLE_COLUMNS", "CONVERGED_TOL"]

TABLE_COLUMNS = ("ortho_eps", "converged", "steps", "min cos(w*, u_m)", "stable optima", "starts", "last move")
CONVERGED_TOL = 1e-12  # a start has converged once one move ||w(t+1) - w(t)|| is below it


@dataclasses.dataclass(frozen=True)
class Fig1Config:
    """Latent summation d, M, q (exact population: M <= ``data.MAX_EXACT_M``), the bases' ||U^T U - I||_2
    values, a homogeneous activation, the number of power-iteration steps and the bases' seed."""

    d: int = 10
    m: int = 10
    q: float = 0.2
    ortho_eps: tuple = (0.0, 0.05, 0.1, 0.2)
    act: str = "relu"
    n_steps: int = 30
    data_seed: int = 0


def _moves_to(moves, tol: float = CONVERGED_TOL) -> list:
    """Per start: the first step whose move is below ``tol`` (1-based), or None."""
    return [int(np.argmax(r < tol)) + 1 if np.any(r < tol) else None for r in moves]


def run(cfg: Fig1Config) -> dict:
    """Power iteration from every u_m at every eps.

    Returns:
      ``{"config": ..., "ortho_eps": {str(eps): {"moves" (M, n_steps), "overlap_with_start" (M,),
      "residual", "is_lme", "stable" (certificate of each end point), "steps_to_1e-12"}}}``.
    """
    act, pw = activations.get_activation(cfg.act), pairwise.get_pairwise("uniform")
    per_eps = {}
    for eps in cfg.ortho_eps:
        u = data.near_orthogonal_basis(jax.random.PRNGKey(cfg.data_seed), cfg.d, cfg.m, eps)
        ds = data.latent_summation(u, cfg.q)
        w0 = jnp.asarray((u / np.linalg.norm(u, axis=0)).T)
        w, mv, _ = one_layer.power_iteration(ds, act, w0, n_steps=cfg.n_steps, pairwise=pw)
        certs = jax.device_get(jax.vmap(lambda v, ds=ds: certify.certify(ds, act, v, pw))(w))
        moves = np.asarray(mv).T
        per_eps[str(eps)] = {"moves": moves, "overlap_with_start": np.sum(np.asarray(w) * np.asarray(w0), axis=1),
                             "residual": certs.residual, "is_lme": certs.is_lme, "stable": certs.is_stable,
                             "steps_to_1e-12": _moves_to(moves)}
    return {"config": {**dataclasses.asdict(cfg), "dtype": "float64"}, "ortho_eps": per_eps}


def _steps(steps: list) -> str:
    """The range of the steps to convergence of the converged starts ("-" when none converged)."""
    done = [k for k in steps if k is not None]
    return "-" if not done else f"{min(done)}" if min(done) == max(done) else f"{min(done)}-{max(done)}"


def table(record: dict) -> str:
    """One row per eps: the starts that converged and the steps they needed, the smallest cos(w*, u_m), the
    stable end points, the largest last move (the key of the columns: :func:`table_key`)."""
    rows = [[float(eps), sum(k is not None for k in r["steps_to_1e-12"]), _steps(r["steps_to_1e-12"]),
             f"{np.min(r['overlap_with_start']):.4f}", int(np.sum(r["stable"])), len(r["stable"]),
             f"{float(np.max(np.asarray(r['moves'])[:, -1])):.1e}"] for eps, r in record["ortho_eps"].items()]
    return report.format_table(TABLE_COLUMNS, rows)


def table_key(n_steps: int) -> list:
    """The key of :func:`table`'s columns, for a run of ``n_steps`` power-iteration steps."""
    return report.key_lines(
        f"ortho_eps: ||U^T U - I||_2 of the basis; converged: starts w(0) = u_m whose move ||w(t+1) - w(t)|| fell "
        f"below {CONVERGED_TOL:g} within {n_steps} steps; steps: the first such step (range over the converged "
        "starts, 1: u_m is already a fixed point); min cos(w*, u_m): the smallest cosine of an end point with its "
        "start; stable optima: end points certified stable (float64); starts: M; last move: the largest "
        "||w(t+1) - w(t)|| of the last step.")
