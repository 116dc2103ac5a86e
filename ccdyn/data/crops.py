"""Random resized crops in JAX, batched: the augmentation of App. E.3,
``transforms.RandomResizedCrop((28, 28), scale=(0.5, 1.0), ratio=(0.5, 1.5))``.

A crop box follows torchvision's documented procedure (``RandomResizedCrop.get_params``): up to
``attempts`` = 10 tries of an area fraction s ~ U(scale) and an aspect ratio r = exp(U(log ratio)),
w = round(sqrt(s H W r)), h = round(sqrt(s H W / r)); the first try with 0 < w <= W and 0 < h <= H
wins and its corner is uniform over the integer positions inside the image; if none fits, the
central crop with the ratio clamped to the range. The box is then resized back to H x W by
bilinear interpolation with half-pixel centres, src = (dst + 1/2) h / H - 1/2 + top, clamped to the
box (PyTorch's ``align_corners=False``; PIL's bilinear filter gives the same weights when it
enlarges, which a crop inside the image always is). The resize is two interpolation matrices,
view = R_y image R_x^T with R_y (H, H) and R_x (W, W), so a batch of views is two batched GEMMs.
Boxes are sampled per view: the two views of an image are independent crops (the authors' loader
applies the same random transform twice).
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp

__all__ = ["ATTEMPTS", "check_params", "sample_boxes", "resize_matrix", "crop_resize", "random_resized_crop"]

ATTEMPTS = 10


def _fallback(height, width, ratio_lo, ratio_hi):
    """torchvision's central crop when no try fits: the whole image with its ratio clamped to the range."""
    in_ratio = width / height
    w_narrow = jnp.round(height * ratio_hi)  # in_ratio > max ratio: full height
    h_flat = jnp.round(width / ratio_lo)     # in_ratio < min ratio: full width
    h = jnp.where(in_ratio < ratio_lo, h_flat, height)
    w = jnp.where(in_ratio > ratio_hi, w_narrow, width)
    return h.astype(jnp.int32), w.astype(jnp.int32)


@functools.partial(jax.jit, static_argnames=("n", "height", "width", "attempts"))
def sample_boxes(key, n: int, height: int, width: int, scale=(0.5, 1.0), ratio=(0.5, 1.5),
                 attempts: int = ATTEMPTS):
    """Crop boxes (top, left, h, w), each (n,) int32, of ``n`` independent random resized crops.

    ``scale`` and ``ratio`` are (low, high) pairs of numbers or traced scalars (so they can be vmapped);
    0 < scale_low <= scale_high and 0 < ratio_low <= ratio_high are the caller's to check."""
    k_scale, k_ratio, k_top, k_left = jax.random.split(key, 4)
    area = float(height * width)
    s = jax.random.uniform(k_scale, (n, attempts), minval=scale[0], maxval=scale[1])
    log_r = jax.random.uniform(k_ratio, (n, attempts), minval=jnp.log(ratio[0]), maxval=jnp.log(ratio[1]))
    r = jnp.exp(log_r)
    w = jnp.round(jnp.sqrt(area * s * r)).astype(jnp.int32)
    h = jnp.round(jnp.sqrt(area * s / r)).astype(jnp.int32)
    fits = (w > 0) & (w <= width) & (h > 0) & (h <= height)
    first = jnp.argmax(fits, axis=1)
    found = jnp.any(fits, axis=1)
    fh, fw = _fallback(height, width, ratio[0], ratio[1])
    h = jnp.where(found, jnp.take_along_axis(h, first[:, None], 1)[:, 0], fh)
    w = jnp.where(found, jnp.take_along_axis(w, first[:, None], 1)[:, 0], fw)
    top = jax.random.randint(k_top, (n,), 0, height - h + 1)
    left = jax.random.randint(k_left, (n,), 0, width - w + 1)
    top = jnp.where(found, top, (height - h) // 2)
    left = jnp.where(found, left, (width - w) // 2)
    return top, left, h, w


def resize_matrix(start, size, out: int, full: int, dtype=None):
    """(out, full) bilinear interpolation matrix taking pixels start .. start + size - 1 of a length-``full``
    axis to ``out`` pixels (half-pixel centres, clamped to the box). ``start``, ``size``: scalars."""
    dtype = dtype or jnp.result_type(float)
    src = (jnp.arange(out, dtype=dtype) + 0.5) * (size / out) - 0.5
    src = jnp.clip(src, 0.0, size - 1.0)
    i0 = jnp.floor(src)
    frac = src - i0
    i0 = i0.astype(jnp.int32)
    i1 = jnp.minimum(i0 + 1, size - 1)
    return ((1.0 - frac)[:, None] * jax.nn.one_hot(start + i0, full, dtype=dtype)
            + frac[:, None] * jax.nn.one_hot(start + i1, full, dtype=dtype))


@jax.jit
def crop_resize(images, boxes):
    """(n, H, W) images cropped to ``boxes`` (top, left, h, w) and resized back to H x W, bilinearly."""
    n, height, width = images.shape
    top, left, h, w = boxes
    ry = jax.vmap(lambda a, b: resize_matrix(a, b, height, height, images.dtype))(top, h)
    rx = jax.vmap(lambda a, b: resize_matrix(a, b, width, width, images.dtype))(left, w)
    return jnp.einsum("nah,nhw,nbw->nab", ry, images, rx)


def random_resized_crop(key, images, scale=(0.5, 1.0), ratio=(0.5, 1.5)):
    """One independent random resized crop of every image in (n, H, W), resized back to H x W."""
    n, height, width = images.shape
    return crop_resize(images, sample_boxes(key, n, height, width, scale, ratio))


def check_params(scale, ratio) -> None:
    """``ValueError`` unless 0 < scale_low <= scale_high <= 1 and 0 < ratio_low <= ratio_high (finite)."""
    for name, (lo, hi) in (("scale", scale), ("ratio", ratio)):
        if not (math.isfinite(lo) and math.isfinite(hi) and 0 < lo <= hi):
            raise ValueError(f"{name}=({lo}, {hi}) must satisfy 0 < low <= high")
    if scale[1] > 1:
        raise ValueError(f"scale=({scale[0]}, {scale[1]}) must lie in (0, 1]")
