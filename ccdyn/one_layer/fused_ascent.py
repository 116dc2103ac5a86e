"""The uniform-alpha ascent u(w) = A(w) w as one fused GPU kernel (Pallas, Triton backend).

The XLA path (:func:`ccdyn.one_layer.dynamics.ascent`) computes u in two GEMMs with the init axis first,
Z = W X^T and U = G X, and writes the (inits x points) activations Z, h(Z), h'(Z) and G to device memory
between its kernels: with d = 10 that traffic, not the arithmetic, bounds the step on a GPU. Here one
program per block of ``block_inits`` rows walks over the points in blocks of ``block_points`` and keeps
three running sums per row in registers, never writing an activation:

    a = sum_i p_i h(z_i),   b = sum_i p_i h(z_i) h'(z_i) x_i,   c = sum_i p_i h'(z_i) x_i   (z_i = w^T x_i)

and u = deg (b - a c). This is the uniform C_alpha of Lemma 3 in one pass: with S = deg h(Z) and the
Laplacian L S = p o (S - S p) of :func:`ccdyn.covariance.laplacian_apply`,
u_k = sum_i h'(z_ki) p_i deg (h(z_ki) - a_k) x_i = deg (b_k - a_k c_k).

Shapes: d is padded to a power of 2 >= 16 (the Triton dot's smallest K), the points to a multiple of
``block_points`` (a padded point has x = 0 and p = 0, so h(0) = 0 adds nothing), the rows to a multiple
of ``block_inits``; every row's sums run over the points in the same order whatever its block, so a row's
u does not depend on the other rows (the engine's bits across chunks and devices, docs/reproducibility.md).

Where it runs: :func:`applies` (uniform alpha, no augmented views, float32, an activation of
:data:`SUPPORTED`, and the kernel chosen: :func:`ccdyn.compiling.kernel`, ``CCDYN_KERNEL`` in the
environment, ``fused`` or ``xla``, read when a program is traced, so set it before the process starts),
and then only when the program is lowered for a CUDA GPU (``lax.platform_dependent`` in
:func:`ccdyn.one_layer.dynamics.ascent`); a CPU or TPU program keeps the XLA path and its bits. The
default, :data:`ccdyn.compiling.DEFAULT_KERNEL`, is ``xla`` until the kernel has been compiled by Triton
and measured on a GPU: no GPU was available when it was written (``benchmarks/bench_fused.py`` is the
measurement, issue #37). The tests run it in Pallas's interpreter and lower it to Triton's IR on CPU,
which checks everything but the final compilation to GPU code.

``precision`` (:class:`Blocks`): ``"float32"`` (the default) computes the products as IEEE float32 dots
(on the CUDA cores); ``"tf32x3"`` as dots that split each operand into two TF32 parts (tensor cores,
three products, about float32 accuracy); ``"fma"`` as float32 FMAs over the d real columns, without a
dot and without padding d (:func:`_kernel_fma`). benchmarks/bench_fused.py measures each against float64.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect

import jax
import jax.numpy as jnp

from ccdyn import compiling

__all__ = ["SUPPORTED", "PRECISIONS", "ARITHMETIC", "Blocks", "BLOCKS", "used_for", "applies", "ascent",
           "padded_dim"]

SUPPORTED = ("relu", "leaky_relu", "linear", "quadratic")  # h(0) = 0 (padding adds nothing), lowered by Triton
PRECISIONS = {"float32": jax.lax.DotAlgorithmPreset.F32_F32_F32, "tf32x3": jax.lax.DotAlgorithmPreset.TF32_TF32_F32_X3}
ARITHMETIC = (*PRECISIONS, "fma")  # the products as dots of these precisions, or as float32 FMAs over d's columns


@dataclasses.dataclass(frozen=True)
class Blocks:
    """A kernel configuration (hashable: a static argument of ``jit``): rows per program, points per inner
    step, warps per program, and how the products are computed (``precision``, module docstring)."""

    block_inits: int = 128
    block_points: int = 128
    num_warps: int = 4
    precision: str = "float32"

    def __post_init__(self):
        for name in ("block_inits", "block_points", "num_warps"):
            v = getattr(self, name)
            if v < 1 or v & (v - 1):
                raise ValueError(f"{name}={v} must be a power of 2")
        if self.block_inits < 16 or self.block_points < 16:
            raise ValueError(f"block_inits={self.block_inits} and block_points={self.block_points} must be >= 16 "
                             "(Triton's dot)")
        if self.precision not in ARITHMETIC:
            raise ValueError(f"precision={self.precision!r} must be one of {sorted(ARITHMETIC)}")


BLOCKS = Blocks()  # the configuration the engine uses (benchmarks/bench_fused.py sweeps the others)


def used_for(alpha: str, act_name: str, views: bool, float32: bool) -> bool:
    """Whether a run's steps use the fused kernel on a CUDA GPU: it is the kernel chosen
    (:func:`ccdyn.compiling.kernel`), ``alpha`` is uniform, there are no augmented ``views``, the arithmetic
    is ``float32`` and the activation is one of :data:`SUPPORTED` (also the sizing rule's test,
    :func:`ccdyn.one_layer.basins.config.sized`)."""
    return compiling.kernel() == "fused" and alpha == "uniform" and not views and float32 and act_name in SUPPORTED


def applies(ds, act, pairwise, W) -> bool:
    """:func:`used_for` of this ascent: the rows W (k, d) and the data are float32."""
    return W.ndim == 2 and used_for(pairwise.kind, act.name, ds.x_aug is not None,
                                    W.dtype == jnp.float32 and ds.x.dtype == jnp.float32)


def padded_dim(d: int) -> int:
    """d padded to the kernel's column count: a power of 2, at least 16."""
    return max(16, 1 << (d - 1).bit_length())


def _kernel(w_ref, x_ref, xt_ref, p_ref, u_ref, *, h, dh, degree, n_blocks, blocks: Blocks):
    bn, algo = blocks.block_points, PRECISIONS[blocks.precision]
    w = w_ref[...]  # (block_inits, dp)
    dot = functools.partial(jax.lax.dot_general, precision=algo, preferred_element_type=jnp.float32)
    rows = (((1,), (0,)), ((), ()))

    def body(j, sums):
        a, b, c = sums
        x = x_ref[_ds(j * bn, bn), :]  # (bn, dp)
        xt = xt_ref[:, _ds(j * bn, bn)]  # (dp, bn)
        p = p_ref[_ds(j * bn, bn)][None, :]  # (1, bn)
        z = dot(w, xt, rows)  # (block_inits, bn)
        ph, pdh = p * h(z), p * dh(z)
        return a + jnp.sum(ph, axis=1), b + dot(ph * dh(z), x, rows), c + dot(pdh, x, rows)

    zeros = jnp.zeros(w.shape, jnp.float32)
    a, b, c = jax.lax.fori_loop(0, n_blocks, body, (jnp.zeros(w.shape[:1], jnp.float32), zeros, zeros))
    u_ref[...] = degree * (b - a[:, None] * c)


def _kernel_fma(w_ref, x_ref, xt_ref, p_ref, u_ref, *, h, dh, degree, n_blocks, blocks: Blocks, d: int):
    """:func:`_kernel` with the products as float32 FMAs over the d real columns (no dot, no padding of d):
    z = sum_k w_k x_k^T, and b_k, c_k as row sums; the same sums, another order of the additions."""
    del x_ref
    bn = blocks.block_points
    ws = [w_ref[:, k][:, None] for k in range(d)]  # (block_inits, 1) each

    def body(j, sums):
        a, b, c = sums
        xs = [xt_ref[k, _ds(j * bn, bn)][None, :] for k in range(d)]  # (1, bn) each
        p = p_ref[_ds(j * bn, bn)][None, :]
        z = ws[0] * xs[0]
        for k in range(1, d):
            z = z + ws[k] * xs[k]
        hz, dhz = h(z), dh(z)
        g, q = p * hz * dhz, p * dhz
        b = tuple(bk + jnp.sum(g * xk, axis=1) for bk, xk in zip(b, xs))
        c = tuple(ck + jnp.sum(q * xk, axis=1) for ck, xk in zip(c, xs))
        return a + jnp.sum(p * hz, axis=1), b, c

    zero = jnp.zeros(ws[0].shape[:1], jnp.float32)
    a, b, c = jax.lax.fori_loop(0, n_blocks, body, (zero, (zero,) * d, (zero,) * d))
    for k in range(d):
        u_ref[:, k] = degree * (b[k] - a * c[k])


def _like(a):
    """The output's type: a's shape and dtype, varying over the same mesh axes as a under ``shard_map``
    (its checker needs this of a kernel's output; JAX names the field ``manual_axis_type`` or ``vma``)."""
    names = inspect.signature(jax.ShapeDtypeStruct).parameters
    aval = jax.typeof(a)
    kw = {n: getattr(aval, n) for n in ("manual_axis_type", "vma") if n in names and hasattr(aval, n)}
    return jax.ShapeDtypeStruct(a.shape, a.dtype, **kw)


def _ds(start, size):
    from jax.experimental import pallas as pl

    return pl.ds(start, size)


@functools.partial(jax.jit, static_argnames=("act", "blocks", "interpret"))
def ascent(x, p, W, act, blocks: Blocks = BLOCKS, interpret: bool = False):
    """u(w) = A(w) w (uniform alpha, Lemma 3) for every row of W (k, d), data x (n, d) with weights p (n,),
    in one fused kernel (module docstring); float32. ``interpret``: Pallas's interpreter (any backend)."""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as plgpu

    (k, d), n = W.shape, x.shape[0]
    dp, bm, bn = padded_dim(d), blocks.block_inits, blocks.block_points
    kp, n_pad = -(-k // bm) * bm, -(-n // bn) * bn
    xs = jnp.zeros((n_pad, dp), jnp.float32).at[:n, :d].set(x.astype(jnp.float32))
    ps = jnp.zeros((n_pad,), jnp.float32).at[:n].set(p.astype(jnp.float32))
    ws = jnp.zeros((kp, dp), jnp.float32).at[:k, :d].set(W)
    kw = dict(h=lambda z: act.h(z), dh=lambda z: act.dh(z), degree=float(act.degree), n_blocks=n_pad // bn,
              blocks=blocks)
    kernel = (functools.partial(_kernel_fma, d=d, **kw) if blocks.precision == "fma"
              else functools.partial(_kernel, **kw))
    u = pl.pallas_call(
        kernel,
        out_shape=_like(ws),
        grid=(kp // bm,),
        in_specs=[pl.BlockSpec((bm, dp), lambda i: (i, 0)), pl.BlockSpec((n_pad, dp), lambda i: (0, 0)),
                  pl.BlockSpec((dp, n_pad), lambda i: (0, 0)), pl.BlockSpec((n_pad,), lambda i: (0,))],
        out_specs=pl.BlockSpec((bm, dp), lambda i: (i, 0)),
        compiler_params=plgpu.CompilerParams(num_warps=blocks.num_warps, num_stages=1),
        interpret=interpret,
        name="ccdyn_fused_ascent",
    )(ws, xs, xs.T, ps)
    return u[:k, :d]
