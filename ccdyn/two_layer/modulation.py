"""Global modulation in 2-layer networks (Sec. 4.2, App. C.2-C.3): Lemma 5, Thm. 5 and Thm. 6.

Setting (Assumption 2): uniform alpha, exact populations, no augmentation, a binary global variable
z with P[z = c] = p_c, and K receptive fields whose inputs are independent given z. Each RF's input
given z is a discrete distribution on n support points, so the joint population has 2 n^K points.
One filter per RF (M = 1), and a top layer at its fixed point, S = s s^T with s the top unit
eigenvector of V[f1] (fast top-level training).

- :func:`rf_moments`: L_k = E_z V[x~_k | z] (Eq. 134), Delta_k = E[x~_k | z=1] - E[x~_k | z=0],
  A_k = V[x~_k] = L_k + p0 p1 Delta_k Delta_k^T (Lemma 5, Eq. 120), d_k = w_k^T L_k w_k (Eq. 135) and
  b_k = w_k^T Delta_k (Eq. 137).
- :func:`top_eigen`: lambda and s of V[f1] = D + p0 p1 b b^T (Eq. 138, 139) from the secular
  equation 1 = p0 p1 sum_k b_k^2 / (lambda - d_k), and delta_k (Eq. 143).
- :func:`eq15_velocity`: w'_k = P^perp (s_k^2 A_k + delta_k Delta_k Delta_k^T) w_k (Eq. 15);
  :func:`lemma4_velocity` evaluates the same velocity from the joint population through Lemma 4
  (Eq. 12 with S = s s^T, s from a dense eigendecomposition), the independent route.
- 1-D dynamics of Thm. 6: y' = (y + b) y (Eq. 146), its closed form (Eq. 147), blow-up time t*
  (Eq. 150), an RK4 integrator, and the probability P[E_l] of Eq. 155 with its Monte Carlo estimate.

All of it assumes a homogeneous activation of degree 1 (h(x) = h'(x) x, Assumption 1), so that
f_k = w_k^T x~_k.
"""

from __future__ import annotations

import functools
import itertools

import chex
import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import covariance, pytree, sphere
from ccdyn.activations import Activation

__all__ = [
    "ModulatedPopulation", "modulated_population", "joint_support", "rf_moments", "top_eigen",
    "eq15_velocity", "lemma4_velocity", "closed_form_1d", "blowup_time", "integrate_1d",
    "p_converge", "p_converge_mc", "eq15_flow", "structured_flow", "predicted_winner", "MAX_JOINT_POINTS",
]

MAX_JOINT_POINTS = 1 << 20


@pytree.dataclass(frozen=True)
class ModulatedPopulation:
    """Binary z and K RFs independent given z (Assumption 2, Eq. 13), each on n support points.

    Attributes:
      x: (K, n, d) support points of each RF's input.
      p_x_given_z: (2, K, n) P[x_k = x[k, i] | z]; each (z, k) row sums to 1.
      p_z: (2,) P[z = 0], P[z = 1].
    """

    x: chex.Array
    p_x_given_z: chex.Array
    p_z: chex.Array


def modulated_population(key, n_rf: int, d: int, n_points: int, p1: float = 0.5, concentration: float = 1.0,
                         dtype=None) -> ModulatedPopulation:
    """Random instance: standard normal support points, P[x_k | z] ~ Dirichlet(concentration) per (z, k)."""
    if not 0 < p1 < 1:
        raise ValueError(f"p1={p1} must lie in (0, 1)")
    for name, v in (("n_rf", n_rf), ("d", d), ("n_points", n_points)):
        if v < 1:
            raise ValueError(f"{name}={v} must be >= 1")
    if not concentration > 0:
        raise ValueError(f"concentration={concentration} must be > 0")
    dtype = dtype or jnp.result_type(float)
    kx, kp = jax.random.split(key)
    x = jax.random.normal(kx, (n_rf, n_points, d), dtype)
    p = jax.random.dirichlet(kp, jnp.full((n_points,), concentration, dtype), (2, n_rf)).astype(dtype)
    return ModulatedPopulation(x=x, p_x_given_z=p, p_z=jnp.array([1.0 - p1, p1], dtype))


def joint_support(pop: ModulatedPopulation):
    """The joint population: inputs (2 n^K, K, d) and probabilities (2 n^K,), enumerated exactly."""
    n_rf, n, _ = pop.x.shape
    count = 2 * n**n_rf
    if count > MAX_JOINT_POINTS:
        raise ValueError(f"the joint population has 2 n^K = {count} points > {MAX_JOINT_POINTS}; use fewer RFs "
                         "or support points")
    idx = np.array(list(itertools.product(range(n), repeat=n_rf)))  # (n^K, K)
    x = pop.x[jnp.arange(n_rf)[None, :], idx]  # (n^K, K, d)
    p_given = jnp.prod(pop.p_x_given_z[:, jnp.arange(n_rf)[None, :], idx], axis=-1)  # (2, n^K)
    p = (pop.p_z[:, None] * p_given).reshape(-1)
    return jnp.concatenate([x, x], axis=0), p


def _gated(x, w, act):
    """x~_k = x_k h'(w_k^T x_k) for support points x (..., K, d) and filters w (K, d)."""
    return x * act.dh(jnp.einsum("...kd,kd->...k", x, w))[..., None]


def rf_moments(pop: ModulatedPopulation, w, act: Activation, batch_norm: bool = False) -> dict:
    """Per-RF moments of the gated input under Assumption 2 (Lemma 5, Eq. 134-137).

    Args:
      w: filters (K, d), one per RF.
      batch_norm: moments of x~_k^bn = x~_k / sigma_k with sigma_k^2 = V[f_k] = w_k^T A_k w_k, the
        population limit of mean-backprop BatchNorm (Def. 5, Cor. 3, Eq. 175-177).

    Returns:
      dict with ``L`` (K, d, d), ``A`` (K, d, d) = V[x~_k], ``Delta`` (K, d), ``d`` (K,), ``b`` (K,),
      ``sigma`` (K,) and ``p0p1``.
    """
    chex.assert_shape(w, pop.x.shape[::2])
    g = _gated(jnp.swapaxes(pop.x, 0, 1), w, act)  # (n, K, d)
    mean = jnp.einsum("zkn,nkd->zkd", pop.p_x_given_z, g)
    second = jnp.einsum("zkn,nkd,nke->zkde", pop.p_x_given_z, g, g)
    cond_cov = second - mean[..., :, None] * mean[..., None, :]
    big_l = jnp.einsum("z,zkde->kde", pop.p_z, cond_cov)
    delta = mean[1] - mean[0]
    p0p1 = pop.p_z[0] * pop.p_z[1]
    a = big_l + p0p1 * delta[:, :, None] * delta[:, None, :]
    sigma = jnp.sqrt(jnp.einsum("kd,kde,ke->k", w, a, w))
    if batch_norm:
        big_l, a, delta = big_l / sigma[:, None, None] ** 2, a / sigma[:, None, None] ** 2, delta / sigma[:, None]
    return {"L": big_l, "A": a, "Delta": delta, "d": jnp.einsum("kd,kde,ke->k", w, big_l, w),
            "b": jnp.sum(w * delta, axis=1), "sigma": sigma, "p0p1": p0p1}


def top_eigen(d, b, p0p1, n_iter: int = 200):
    """Top eigenpair of D + p0 p1 b b^T (Eq. 138) and delta_k (Eq. 143).

    lambda is the root above max_k d_k of 1 = p0 p1 sum_k b_k^2 / (lambda - d_k), found by bisection
    on [max d, max d + p0 p1 ||b||^2]; s_k = b_k / (Z (d_k - lambda)) (Eq. 139), Z normalizing s;
    delta_k = p0 p1 / (Z^2 (lambda - d_k)) sum_{k' != k} b_k'^2 / (lambda - d_k') (Eq. 143).
    Needs b_k* != 0 for k* = argmax d (otherwise lambda = max d is degenerate, see App. C.3).

    Returns:
      (lambda, s (K,), delta (K,)).
    """
    lo = jnp.max(d)
    hi = lo + p0p1 * jnp.sum(b * b) + jnp.finfo(d.dtype).eps * (1 + jnp.abs(lo))

    def secular(lam):
        return 1.0 - p0p1 * jnp.sum(b * b / (lam - d))

    def body(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        up = secular(mid) < 0  # the root is above mid
        return jnp.where(up, mid, lo), jnp.where(up, hi, mid)

    lo, hi = jax.lax.fori_loop(0, n_iter, body, (lo, hi))
    lam = 0.5 * (lo + hi)
    r = b / (d - lam)
    z2 = jnp.sum(r * r)
    s = r / jnp.sqrt(z2)
    q = b * b / (lam - d)
    delta = p0p1 / (z2 * (lam - d)) * (jnp.sum(q) - q)
    return lam, s, delta


def _project(w, g):
    return sphere.tangent(sphere.normalize(w), g)


def eq15_velocity(pop: ModulatedPopulation, w, act: Activation, batch_norm: bool = False):
    """w'_k = P^perp_{w_k} (s_k^2 A_k(w_k) + delta_k Delta_k Delta_k^T) w_k (Thm. 5, Eq. 15); (K, d).

    ``batch_norm=True`` gives Cor. 3 (Eq. 178) with every quantity in its ``bn`` form; we keep the
    projection P^perp (Eq. 178 omits it) so that both forms move w on the sphere.
    """
    m = rf_moments(pop, w, act, batch_norm)
    _, s, delta = top_eigen(m["d"], m["b"], m["p0p1"])
    field = (s**2)[:, None] * jnp.einsum("kde,ke->kd", m["A"], w) + (delta * m["b"])[:, None] * m["Delta"]
    return _project(w, field)


def lemma4_velocity(pop: ModulatedPopulation, w, act: Activation, batch_norm: bool = False):
    """The same velocity from the joint population and Lemma 4 (Eq. 12, 140) with S = s s^T.

    s is the top eigenvector of the population V[f1] by a dense eigendecomposition; the cross-RF
    blocks C[x~_k, x~_k'] come from the joint population, not from Lemma 5. With ``batch_norm``,
    Lemma 6 (Eq. 166): f1 -> (f1 - mu) / sigma and x~_k -> x~_k / sigma_k with the population
    statistics of f1. (K, d).
    """
    x, p = joint_support(pop)
    n_rf, dim = w.shape
    f1 = act.h(jnp.einsum("nkd,kd->nk", x, w))
    scale = jnp.ones((n_rf,), f1.dtype)
    if batch_norm:
        scale = 1.0 / jnp.sqrt(jnp.diagonal(covariance.population_cov(f1, f1, p)))
        f1 = (f1 - p @ f1) * scale
    _, vecs = jnp.linalg.eigh(covariance.population_cov(f1, f1, p))
    s = vecs[:, -1]
    g = (_gated(x, w, act) * scale[None, :, None]).reshape(x.shape[0], n_rf * dim)
    c = covariance.population_cov(g, g, p).reshape(n_rf, dim, n_rf, dim)
    field = jnp.einsum("k,j,kdje,je->kd", s, s, c, w)
    return _project(w, field)


def eq15_flow(pop: ModulatedPopulation, w0, act: Activation, *, batch_norm: bool = False, eta: float = 0.1,
              n_steps: int = 1000, record_every: int = 10):
    """Euler steps w_k <- (w_k + eta w'_k) / ||.|| of the Eq. 15 (or Cor. 3) velocity for all RFs at once.

    Returns:
      (record, w): record (n_steps // record_every, K, d) holds w after every ``record_every`` steps.
    """
    if n_steps % record_every:
        raise ValueError(f"n_steps={n_steps} must be a multiple of record_every={record_every}")

    def step(w, _):
        w = w + eta * eq15_velocity(pop, w, act, batch_norm)
        return w / jnp.linalg.norm(w, axis=1, keepdims=True), None

    def block(w, _):
        w, _ = jax.lax.scan(step, w, None, length=record_every)
        return w, w

    w0 = w0 / jnp.linalg.norm(w0, axis=1, keepdims=True)
    w, record = jax.lax.scan(block, w0, None, length=n_steps // record_every)
    return record, w


def structured_flow(y0, b, *, eta: float = 0.05, n_steps: int = 2000):
    """The flow of Thm. 6 in the basis {u_l}: y' = P^perp_y (y + b) o y, i.e. A(w) = sum_l (u_l^T w + b_l)
    u_l u_l^T (g(x) = x + b_l), by normalized Euler steps for a batch of unit starts y0 (n, L)."""

    def step(y, _):
        y = y + eta * sphere.tangent(y, (y + b) * y)
        return y / jnp.linalg.norm(y, axis=-1, keepdims=True), None

    y, _ = jax.lax.scan(step, y0, None, length=n_steps)
    return y


def predicted_winner(y0, b):
    """Thm. 6's predictor of the attractor: the component whose blow-up time t*_l (Eq. 150) comes first;
    -1 when no component has y_l(0) > 0."""
    t = blowup_time(y0, b)
    return jnp.where(jnp.any(y0 > 0, axis=-1), jnp.argmin(t, axis=-1), -1)


def closed_form_1d(y0, b, t):
    """Solution of y' = (y + b) y (Eq. 146): y/(y + b) = y0/(y0 + b) e^{b t} (Eq. 147), solved for y."""
    r = y0 / (y0 + b) * jnp.exp(b * t)
    return b * r / (1.0 - r)


def blowup_time(y0, b):
    """t* = ln(1 + b / y0) / b for y0 > 0, b > 0 (Eq. 150); +inf for y0 <= 0 (no blow-up)."""
    y0 = jnp.asarray(y0)
    safe = jnp.where(y0 > 0, y0, 1.0)
    return jnp.where(y0 > 0, jnp.log1p(b / safe) / b, jnp.inf)


def integrate_1d(y0, b, t_end: float, n_steps: int):
    """Classical RK4 for y' = (y + b) y on [0, t_end] with n_steps steps; returns y at the n_steps + 1 times."""
    h = t_end / n_steps
    f = lambda y: (y + b) * y  # noqa: E731

    def step(y, _):
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        y = y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y, y

    _, ys = jax.lax.scan(step, jnp.asarray(y0, jnp.result_type(float)), None, length=n_steps)
    return jnp.concatenate([jnp.asarray(y0, ys.dtype)[None], ys])


def p_converge(eps: float, d: int) -> float:
    """P[E_l] = P[Y_l > 0, Y_l + eps >= max_{l' != l} Y_l'] for d i.i.d. Y ~ U[-1, 1] (Eq. 154, 155).

    Eq. 155 for -1 < eps <= 1 (its first branch is garbled in the text: for eps >= 1 the event is
    Y_l > 0, so P = 1/2); for -2 < eps <= -1 the integral of Eq. 154 gives (1 + eps/2)^d / d, and 0
    for eps <= -2.
    """
    if d < 1:
        raise ValueError(f"d={d} must be >= 1")
    if eps >= 1:
        return 0.5
    if eps >= 0:
        return (1.0 - ((1.0 + eps) / 2.0) ** d) / d + eps / 2.0
    if eps > -1:
        return ((1.0 + eps / 2.0) ** d - ((1.0 + eps) / 2.0) ** d) / d
    return (1.0 + eps / 2.0) ** d / d if eps > -2 else 0.0


def p_converge_mc(key, eps: float, d: int, n: int, batch: int = 65536) -> int:
    """Monte Carlo count of the event of Eq. 152 over n draws of Y ~ U[-1, 1]^d (component 0 is l)."""
    if d < 2:
        raise ValueError(f"d={d} must be >= 2 (the event compares Y_l with the other components)")
    counts, done, i = [], 0, 0
    while done < n:
        m = min(batch, n - done)
        counts.append(_mc_count(jax.random.fold_in(key, i), eps, m, d, batch))
        done, i = done + m, i + 1
    return int(sum(counts))  # one host sync at the end


@functools.partial(jax.jit, static_argnums=(3, 4))
def _mc_count(key, eps, m, d: int, batch: int):
    y = jax.random.uniform(key, (batch, d), minval=-1.0, maxval=1.0)
    hit = (y[:, 0] > 0) & (y[:, 0] + eps >= jnp.max(y[:, 1:], axis=1))
    return jnp.sum(hit & (jnp.arange(batch) < m))
