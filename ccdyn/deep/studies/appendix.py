"""The DDN statements that had no check (issue #23), each against an independent route, in float64:

- ``lemma1``: Lemma 1 (Eq. 19-22) built from the paper's G_l, Q_l (Eq. 16-18) for the ReLU, the leaky
  ReLU and the power activation, against autodiff w.r.t. the pre-activation; Def. 2's two forms;
- ``l2norm``: Eq. 30, 41, 51, 56 (l2-normalized output) against autodiff; Eq. 56's asymmetry;
- ``lemma2``: Eq. 46 (H negatives, L_nce) against autodiff;
- ``eq80``: Eq. 80's weights against -dL/dr_k- by autodiff at the un-augmented points;
- ``nuisance``: Sec. 5.1's linear neuron with a Gaussian nuisance multiplier (exact population and a
  chi^2 interval for i.i.d. draws);
- ``lemma7``, ``lemma9``: binary transitions on a grid; Eq. 99 and Eq. 166 against the enumerated joint
  of a small categorical TR-HLTM (and a non-TR control);
- ``lemma8``, ``fig11``: Eq. 112 / 123 against the exact bivariate-normal tail, and Fig. 11's Eq. 124
  band and asymptote (Eq. 126), on a (c, gamma) grid;
- ``lemma3_5``: the inequalities of Lemmas 3-5 on random discrete distributions (they can only be refuted).

:func:`run` returns ``{"config", "values": {check: {...}}}``; :func:`ccdyn.deep.claims.appendix_claims`
judges it.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from ccdyn.deep import lucky, network, normalized, nuisance, operator, reversible, tr_hltm

__all__ = ["AppendixConfig", "run", "lemma1", "l2norm", "lemma2", "eq80", "nuisance_check", "lemma7", "lemma9",
           "lemma8", "fig11", "lemma3_5", "CHECKS"]


@dataclasses.dataclass(frozen=True)
class AppendixConfig:
    sizes: tuple = (4, 6, 5, 3)
    net_seed: int = 1
    x_seed: int = 5
    slope: float = 0.1
    power: int = 2
    tau: float = 0.5
    n_negatives: int = 3
    pop: tuple = (5, 3, 0.3)                 # points, views, sigma of the noise population (Eq. 56)
    nuisance: tuple = (6, 5, 2, 3)           # points, d, d_s, antithetic pairs
    mc: tuple = (20, 6, 2, 200)              # points, d, d_s, i.i.d. draws per point
    tree_seed: int = 0
    lemma7_grid: int = 41
    c_grid: tuple = (0.1, 30.0, 25)          # geometric
    gamma_grid: tuple = (0.0, 0.95, 20)      # linear
    asymptote_c: tuple = (1e2, 1e3, 1e4)
    asymptote_gamma: tuple = (0.5, 0.9, 0.99)
    n_dists: int = 2000


def _rel(a, b):
    return float(jnp.linalg.norm(a - b) / jnp.linalg.norm(b))


def _setup(cfg):
    ws = network.init_weights(jax.random.PRNGKey(cfg.net_seed), cfg.sizes)
    xs = jax.random.normal(jax.random.PRNGKey(cfg.x_seed), (2 + cfg.n_negatives, cfg.sizes[0]))
    return ws, xs


def _top(ws, z, l, kind, a, p):
    for k in range(l, len(ws)):
        z = ws[k] @ reversible.psi(z, kind, a, p)
    return z


@functools.partial(jax.jit, static_argnames=("kind", "p", "normalize"))
def _lemma1_pair(ws1, ws2, x1, x2, a, kind, p, normalize):
    out = []
    for l in range(1, len(ws1) + 1):
        target = reversible.forward(ws2, x2, kind, a, p)[0][-1]
        if normalize:
            target = target / jnp.linalg.norm(target)

        def r(z, l=l, target=target):
            t = _top(ws1, z, l, kind, a, p)
            return 0.5 * jnp.sum((((t / jnp.linalg.norm(t)) if normalize else t) - target) ** 2)
        auto = jax.grad(r)(reversible.forward(ws1, x1, kind, a, p)[1][l])
        got = (reversible.lemma1_normalized_gradient(ws1, ws2, x1, x2, l, kind, a) if normalize
               else reversible.lemma1_gradient(ws1, ws2, x1, x2, l, kind, a, p))
        out.append((got, auto))
    return out


def lemma1(cfg: AppendixConfig) -> dict:
    """Eq. 22 (two towers W_1 != W_2) per activation: worst relative error over layers; Def. 2 residuals."""
    ws, xs = _setup(cfg)
    ws2 = network.init_weights(jax.random.PRNGKey(cfg.net_seed + 1), cfg.sizes)
    out = {}
    for kind in reversible.ACTIVATIONS:
        pairs = _lemma1_pair(ws, ws2, xs[0], xs[1], cfg.slope, kind, cfg.power, False)
        tilde, printed = reversible.def2_residuals(ws, xs[0], kind, cfg.slope, cfg.power)
        out[kind] = {"rel": max(_rel(g, a) for g, a in pairs),
                     "min_norm": min(float(jnp.linalg.norm(a)) for _, a in pairs),
                     "def2_tilde_residual": float(tilde), "def2_printed_residual": float(printed)}
    return out


@functools.partial(jax.jit, static_argnames=("slope",))
def _eq41(ws, x1, x2, slope):
    u2 = normalized.unit(ws, x2, slope)
    g = jax.grad(lambda w: 0.5 * jnp.sum((normalized.unit(w, x1, slope) - u2) ** 2))(ws)
    return [(normalized.eq41_gradient(ws, x1, x2, l, slope), network.vec(g[l - 1])) for l in range(1, len(ws) + 1)]


def _multi_loss(w1, ws, xs, tau, normalize):
    out = (lambda w, x: normalized.unit(w, x)) if normalize else network.output  # noqa: E731
    f0, fo = out(w1, xs[0]), jax.vmap(lambda x: out(ws, x))(xs[1:])
    return normalized.nce_multi(0.5 * jnp.sum((f0 - fo[0]) ** 2), 0.5 * jnp.sum((f0 - fo[1:]) ** 2, -1), tau)


@functools.partial(jax.jit, static_argnames=("normalize",))
def _eq46_51(ws, xs, tau, normalize):
    g = jax.grad(_multi_loss)(ws, ws, xs, tau, normalize)
    return [(normalized.lemma2_gradient(ws, xs, l, tau, normalize), network.vec(g[l - 1]))
            for l in range(1, len(ws) + 1)]


@jax.jit
def _eq56(ws, pop):
    out = []
    for l in range(1, len(ws) + 1):
        op = normalized.eq56_operator(ws, pop, l)
        w = network.vec(ws[l - 1])
        out.append((op @ w, normalized.eq56_descent(ws, pop, l, "first"), normalized.eq56_descent(ws, pop, l, "all"),
                    jnp.linalg.norm(op - op.T) / jnp.linalg.norm(op)))
    return out


def _worst(pairs):
    return max(_rel(g, a) for g, a in pairs), min(float(jnp.linalg.norm(a)) for _, a in pairs)


def l2norm(cfg: AppendixConfig) -> dict:
    """Eq. 30 (relu, leaky), 41 (relu, leaky), 51 and 56: worst relative error over layers and the smallest
    autodiff gradient norm (a zero gradient would make the comparison empty)."""
    ws, xs = _setup(cfg)
    ws2 = network.init_weights(jax.random.PRNGKey(cfg.net_seed + 1), cfg.sizes)
    out = {}
    for kind, a in (("relu", 0.0), ("leaky", cfg.slope)):
        out[f"eq30_{kind}"] = _worst(_lemma1_pair(ws, ws2, xs[0], xs[1], a, kind, 2, True))
        out[f"eq41_{kind}"] = _worst(_eq41(ws, xs[0], xs[1], a))
    out["eq51"] = _worst(_eq46_51(ws, xs, cfg.tau, True))
    n, v, s = cfg.pop
    pop = operator.noise_population(jax.random.PRNGKey(cfg.net_seed), n, cfg.sizes[0], v, s)
    rows = _eq56(ws, pop)
    out["eq56_first"] = (max(_rel(d1, opw) for opw, d1, _, _ in rows), min(float(jnp.linalg.norm(o)) for o, *_ in rows))
    out["eq56_all_twice"] = (max(_rel(da, 2 * opw) for opw, _, da, _ in rows), out["eq56_first"][1])
    out["eq56_asymmetry"] = min(float(x) for *_, x in rows)
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in out.items()}


def lemma2(cfg: AppendixConfig) -> dict:
    """Eq. 46 with H = n_negatives and L_nce^tau."""
    ws, xs = _setup(cfg)
    rel, norm = _worst(_eq46_51(ws, xs, cfg.tau, False))
    return {"rel": rel, "min_norm": norm, "H": cfg.n_negatives}


def eq80(cfg: AppendixConfig) -> dict:
    """Eq. 80 against autodiff for H = n_negatives, and H = 1 against xi of Eq. 63."""
    ws, xs = _setup(cfg)
    auto, printed, fixed = normalized.eq80_weights(ws, xs[0], xs[2:], cfg.tau)
    a1, _, f1 = normalized.eq80_weights(ws, xs[0], xs[2:3], cfg.tau)
    r1 = 0.5 * jnp.sum((network.output(ws, xs[0]) - network.output(ws, xs[2])) ** 2)
    return {"autodiff": np.asarray(auto).tolist(), "printed": np.asarray(printed).tolist(),
            "output_distance_over_tau": np.asarray(fixed).tolist(), "rel_printed": _rel(printed, auto),
            "rel_output_distance": _rel(fixed, auto),
            "rel_h1_eq63": _rel(f1, operator.xi(r1, "nce", cfg.tau)[None]), "rel_h1_autodiff": _rel(f1, a1)}


@jax.jit
def _nuisance_sides(ws, pop, qs):
    op = operator.op_ve(operator.view_connections(ws, pop, 1), pop)
    d = operator.descent(ws, pop, 1, "simp")
    return op, nuisance.closed_form(pop, qs), d


def nuisance_check(cfg: AppendixConfig) -> dict:
    """OP = Q^s V[x] Q^s on the antithetic population, the L_simp descent (tied weights, autodiff) =
    2 OP w with no nuisance component, and the chi^2 statistic of i.i.d. draws with its quantile."""
    from scipy.stats import chi2  # noqa: PLC0415
    n, d, d_s, pairs = cfg.nuisance
    pop, qs = nuisance.population(cfg.net_seed, n, d, d_s, pairs)
    ws = (jax.random.normal(jax.random.PRNGKey(cfg.net_seed), (1, d), jnp.float32).astype(qs.dtype),)
    op, closed, desc = _nuisance_sides(ws, pop, qs)
    w = network.vec(ws[0])
    s, dof = nuisance.mc_statistic(cfg.tree_seed, *cfg.mc)
    return {"rel_op": _rel(op, closed), "rel_descent": _rel(desc, 2 * closed @ w),
            "nuisance_part_of_descent": float(jnp.linalg.norm(desc - qs @ desc) / jnp.linalg.norm(desc)),
            "rank_op": int(np.linalg.matrix_rank(np.asarray(closed), 1e-10)), "d_s": d_s,
            "mc_chi2": s, "mc_dof": dof, "mc_quantile": float(chi2.cdf(s, dof))}


def lemma7(cfg: AppendixConfig) -> dict:
    return tr_hltm.lemma7_residuals(cfg.lemma7_grid)


def lemma9(cfg: AppendixConfig) -> dict:
    """Eq. 166 and Eq. 99 against the enumerated joint, on a TR tree and on a non-TR control."""
    out = {}
    for name, tr in (("tr", True), ("not_tr", False)):
        tree = tr_hltm.make_tree(cfg.tree_seed, tr=tr)
        brute = tr_hltm.brute_covariance(tree)
        out[name] = {"rel_eq166": float(np.abs(tr_hltm.lemma9_covariance(tree) - brute).max() / np.abs(brute).max()),
                     "eq99_error": max(float(np.abs(tr_hltm.brute_transition(tree, j)
                                                    - tr_hltm.eq99_transition(tree, j)).max()) for j in (0, 1)),
                     "rank": int(np.linalg.matrix_rank(brute, 1e-10)), "m0": tree["m"][0]}
    return out


def _grid(cfg):
    lo, hi, n = cfg.c_grid
    g0, g1, m = cfg.gamma_grid
    return np.geomspace(lo, hi, int(n)), np.linspace(g0, g1, int(m))


def lemma8(cfg: AppendixConfig) -> dict:
    """Eq. 112 (= Eq. 123) and the bound with Eq. 114's exponent against the exact P(y >= y0) on the grid."""
    cs, gs = _grid(cfg)
    ratios = []  # (printed, fixed) per grid point
    for c in cs:
        for g in gs:
            p = lucky.event_probability(c, g)
            ratios.append((1.0 / lucky.width_eq128(c, g) / p, 1.0 / lucky.width_eq128(c, g, corrected=True) / p))
    printed, fixed = np.array(ratios).T
    worst = int(np.argmax(printed))
    return {"grid": len(printed), "printed_violations": int(np.sum(printed > 1 + 1e-9)),
            "printed_max_ratio": float(printed.max()),
            "printed_worst_at": [float(cs[worst // len(gs)]), float(gs[worst % len(gs)])],
            "printed_at_gamma0_max_dev": float(np.abs(printed.reshape(len(cs), len(gs))[:, 0] - 1).max()),
            "corrected_violations": int(np.sum(fixed > 1 + 1e-9)), "corrected_max_ratio": float(fixed.max())}


def fig11(cfg: AppendixConfig) -> dict:
    """R_hat with the exact Mills ratio inside the band of the Eq. 124 bounds on the grid, and the
    ratio R_hat gamma c / (1 - gamma^2) of Eq. 126 at large c."""
    cs, gs = _grid(cfg)
    lo_r, hi_r = (lambda y: lucky.mills_bounds(y)[0]), (lambda y: lucky.mills_bounds(y)[1])
    outside = 0
    for c in cs:
        for g in gs:
            ex = lucky.r_hat(c, g)
            outside += not (lucky.r_hat(c, g, lo_r) <= ex * (1 + 1e-12) and ex <= lucky.r_hat(c, g, hi_r) * (1 + 1e-12))
    ratio = {f"gamma={g:g}": [lucky.r_hat(c, g) * g * c / (1 - g * g) for c in cfg.asymptote_c]
             for g in cfg.asymptote_gamma}
    return {"grid": len(cs) * len(gs), "outside_band": outside, "asymptote_ratio": ratio,
            "asymptote_c": list(cfg.asymptote_c)}


def lemma3_5(cfg: AppendixConfig) -> dict:
    """Lemmas 3-5 on ``n_dists`` random discrete distributions (2-8 atoms, exact moments): the largest
    left/right ratio of Eq. 87 (phi = tanh, sin 2x, softplus; Lipschitz L = 1, 2, 1), of Eq. 90's two sides
    (phi = exp, x^3: inf / sup phi'' on the atoms' hull in closed form) and of Eq. 91 (ReLU); every ratio
    must be <= 1 (a check that can refute the inequalities, not prove them)."""
    rng = np.random.default_rng(cfg.tree_seed)
    worst = {"eq87": 0.0, "eq90_lower": 0.0, "eq90_upper": 0.0, "eq91_upper": 0.0, "eq91_lower_min": np.inf}
    lip = ((np.tanh, 1.0), (lambda x: np.sin(2 * x), 2.0), (lambda x: np.logaddexp(0.0, x), 1.0))
    second = ((np.exp, np.exp, np.exp), (lambda x: x ** 3, lambda x: 6 * x, lambda x: 6 * x))
    for _ in range(cfg.n_dists):
        k = int(rng.integers(2, 9))
        x, p = rng.normal(size=k) * rng.uniform(0.1, 3.0), rng.dirichlet(np.ones(k))
        mean = p @ x
        var = p @ (x - mean) ** 2
        for phi, lc in lip:
            worst["eq87"] = max(worst["eq87"], float((p @ (phi(x) - p @ phi(x)) ** 2) / (lc ** 2 * var)))
        for phi, d2_lo, d2_hi in second:
            gap = p @ phi(x) - phi(mean)
            lo, hi = 0.5 * var * d2_lo(x.min()), 0.5 * var * d2_hi(x.max())
            worst["eq90_lower"] = max(worst["eq90_lower"], lo - gap)
            worst["eq90_upper"] = max(worst["eq90_upper"], gap - hi)
        gap = float(p @ np.maximum(x, 0.0) - max(float(mean), 0.0))
        worst["eq91_upper"] = max(worst["eq91_upper"], float(gap / np.sqrt(var)))
        worst["eq91_lower_min"] = min(worst["eq91_lower_min"], gap)
    return {"n_dists": cfg.n_dists, **{k: float(v) for k, v in worst.items()}}


CHECKS = {"lemma1": lemma1, "l2norm": l2norm, "lemma2": lemma2, "eq80": eq80, "nuisance": nuisance_check,
          "lemma7": lemma7, "lemma9": lemma9, "lemma8": lemma8, "fig11": fig11, "lemma3_5": lemma3_5}


def run(cfg: AppendixConfig, only=None) -> dict:
    """Every check (or those named in ``only``); needs x64."""
    if not jax.config.read("jax_enable_x64"):
        raise ValueError("the appendix checks need float64: jax.config.update('jax_enable_x64', True)")
    names = list(CHECKS) if only is None else list(only)
    return {"config": dataclasses.asdict(cfg), "values": {k: CHECKS[k](cfg) for k in names}}

