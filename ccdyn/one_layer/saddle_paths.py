"""Starting paths of the saddle search (:mod:`ccdyn.one_layer.saddles`, step 1): great circles between two
optima, and paths through a point where two basins touch, made of the flow's own ascent from each side.

A pair's string can start on the great circle between its optima, but that arc may run over a third
maximum (on the circle: the short arc between two maxima whose basins touch on the far arc), and then the
string relaxes to that third maximum's saddle, not the pair's. The touching probes
(:mod:`ccdyn.one_layer.saddle_seeds`) find where the two basins meet: a bracket (lo, hi) of two points a
few 1e-4 rad apart, lo in basin a and hi in basin b. :func:`seeded_paths` starts the string there: the
ascent from lo (fixed arc-length steps along P^perp A(w) w, the flow's direction) runs inside basin a up
to a, the ascent from hi inside basin b up to b; the path is a <- lo | hi -> b, resampled to M images at
equal arc length. Every image of it starts in basin a or b, and it crosses their boundary at the probe.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from ccdyn import sphere
from ccdyn.activations import Activation
from ccdyn.data.dataset import Dataset
from ccdyn.one_layer import dynamics
from ccdyn.pairwise import Pairwise

__all__ = ["great_circle_paths", "arc_angle", "reparametrize", "slerp", "ascent_paths", "seeded_paths", "ASCENT_STEP",
           "ASCENT_STEPS"]

ASCENT_STEP = 0.02  # rad per step of the seeded paths' ascent
ASCENT_STEPS = 250  # steps: up to 5 rad from the boundary to an optimum


def great_circle_paths(A, B, n_images: int, *, direction=None, angle=None):
    """(P, M, d) paths of M images along great circles, from the rows of A to the rows of B.

    By default the shorter arc (B's component orthogonal to A gives the direction; antipodal pairs
    take the first tangent basis vector of A). ``direction`` (P, d) unit tangents at A and ``angle``
    (P,) arc lengths give any other arc (e.g. the long way round on the circle).
    """
    A = sphere.normalize(jnp.asarray(A))
    if direction is None:
        B = sphere.normalize(jnp.asarray(B, A.dtype))
        fallback = jax.vmap(lambda a: sphere.tangent_basis(a)[:, 0])(A)
        direction = sphere.normalize(sphere.tangent(A, B), fallback)
        angle = arc_angle(A, B)
    t = jnp.linspace(0.0, 1.0, int(n_images), dtype=A.dtype)
    ang = jnp.asarray(angle, A.dtype)[:, None, None] * t[None, :, None]
    return jnp.cos(ang) * A[:, None] + jnp.sin(ang) * jnp.asarray(direction, A.dtype)[:, None]


def arc_angle(a, b):
    """Angle between unit vectors along the last axis, accurate near 0 and pi: 2 atan2(|a-b|, |a+b|)."""
    return 2.0 * jnp.arctan2(jnp.linalg.norm(a - b, axis=-1), jnp.linalg.norm(a + b, axis=-1))


def slerp(a, b, f):
    """Points at fraction f (..., 1) of the great-circle arc from unit a to unit b."""
    om = arc_angle(a, b)[..., None]
    small = om < 1e-7
    s = jnp.where(small, 1.0, jnp.sin(om))
    ca = jnp.where(small, 1.0 - f, jnp.sin((1.0 - f) * om) / s)
    cb = jnp.where(small, f, jnp.sin(f * om) / s)
    return sphere.normalize(ca * a + cb * b)


def reparametrize(path, n_out: int | None = None):
    """Images redistributed at equal arc length along each spherical polyline (P, L, d): (P, n_out, d)
    (default n_out = L); ends kept."""
    seg = arc_angle(path[:, 1:], path[:, :-1])  # (P, L-1)
    s = jnp.concatenate([jnp.zeros_like(seg[:, :1]), jnp.cumsum(seg, axis=1)], axis=1)
    m = path.shape[1]
    target = s[:, -1:] * jnp.linspace(0.0, 1.0, int(n_out or m), dtype=path.dtype)[None]
    idx = jax.vmap(lambda si, ti: jnp.searchsorted(si, ti, side="right"))(s, target) - 1
    idx = jnp.clip(idx, 0, m - 2)
    s0 = jnp.take_along_axis(s, idx, axis=1)
    sg = jnp.take_along_axis(seg, idx, axis=1)
    f = jnp.clip((target - s0) / jnp.where(sg > 0, sg, 1.0), 0.0, 1.0)
    a = jnp.take_along_axis(path, idx[..., None], axis=1)
    b = jnp.take_along_axis(path, idx[..., None] + 1, axis=1)
    out = slerp(a, b, f[..., None])
    return out.at[:, 0].set(path[:, 0]).at[:, -1].set(path[:, -1])


@functools.partial(jax.jit, static_argnames=("act", "pw", "n_steps"))
def _ascent(ds, act, pw, starts, targets, *, n_steps, h):
    def body(w, _):
        t = sphere.normalize(sphere.tangent(w, dynamics.ascent(ds, act, w, pw)), jnp.zeros_like(w))
        nxt = sphere.normalize(jnp.cos(h) * w + jnp.sin(h) * t)
        nxt = jnp.where((arc_angle(w, targets) <= h)[:, None], targets, nxt)  # within a step of its optimum: there
        return nxt, nxt

    _, traj = jax.lax.scan(body, starts, None, length=n_steps)
    return jnp.concatenate([starts[:, None], jnp.moveaxis(traj, 0, 1)], axis=1)


def ascent_paths(ds: Dataset, act: Activation, pw: Pairwise, starts, targets, *, n_steps: int = ASCENT_STEPS,
                 h: float = ASCENT_STEP):
    """(S, n_steps + 1, d): from each row of ``starts`` (S, d), steps of ``h`` rad along the flow's tangent
    direction P^perp A(w) w / ||.|| (the run's ascent field, Lemma 3), held at the row of ``targets`` once
    within ``h`` of it (so it does not circle a maximum; a path that never gets there stops after
    ``n_steps``: the caller joins it to the target by its great circle)."""
    starts = sphere.normalize(jnp.asarray(starts, ds.x.dtype))
    targets = sphere.normalize(jnp.asarray(targets, ds.x.dtype))
    return _ascent(ds, act, pw, starts, targets, n_steps=int(n_steps), h=float(h))


def seeded_paths(ds: Dataset, act: Activation, pw: Pairwise, lo, hi, a, b, n_images: int, *,
                 n_steps: int = ASCENT_STEPS, h: float = ASCENT_STEP):
    """(S, n_images, d) starting strings through the boundary brackets (lo in a's basin, hi in b's), from
    the optima a (S, d) to b (S, d): a, the ascent from lo reversed, the ascent from hi, b; resampled at
    equal arc length (module docstring)."""
    a = sphere.normalize(jnp.asarray(a, ds.x.dtype))
    b = sphere.normalize(jnp.asarray(b, ds.x.dtype))
    up = ascent_paths(ds, act, pw, jnp.concatenate([jnp.asarray(lo), jnp.asarray(hi)]), jnp.concatenate([a, b]),
                      n_steps=n_steps, h=h)
    s = a.shape[0]
    poly = jnp.concatenate([a[:, None], up[:s, ::-1], up[s:], b[:, None]], axis=1)
    return reparametrize(poly, int(n_images))
