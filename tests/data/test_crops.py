"""Random resized crops: the interpolation-matrix resize against a per-pixel loop and against PIL's
bilinear resize, the identity box, the boxes' ranges and torchvision's fallback box."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from PIL import Image

from ccdyn.data import crops

KEY, N = jax.random.PRNGKey(0), 4000  # one compiled sampler serves every test


def _loop_resize(img, top, left, h, w):
    """Bilinear resize of the box back to the image size, pixel by pixel (half-pixel centres, clamped)."""
    H, W = img.shape
    out = np.zeros((H, W))
    for a in range(H):
        y = min(max((a + 0.5) * h / H - 0.5, 0.0), h - 1.0)
        y0 = int(np.floor(y))
        y1, fy = min(y0 + 1, h - 1), y - np.floor(y)
        for b in range(W):
            x = min(max((b + 0.5) * w / W - 0.5, 0.0), w - 1.0)
            x0 = int(np.floor(x))
            x1, fx = min(x0 + 1, w - 1), x - np.floor(x)
            p = lambda i, j: img[top + i, left + j]  # noqa: E731
            out[a, b] = ((1 - fy) * ((1 - fx) * p(y0, x0) + fx * p(y0, x1))
                         + fy * ((1 - fx) * p(y1, x0) + fx * p(y1, x1)))
    return out


def test_crop_resize_matches_a_loop_and_pil():
    rng = np.random.default_rng(0)
    img = rng.random((4, 10, 9))
    boxes = tuple(jnp.asarray(v) for v in ([0, 3, 1, 0], [2, 0, 4, 0], [7, 5, 9, 10], [5, 9, 3, 9]))
    out = np.asarray(crops.crop_resize(jnp.asarray(img), boxes))
    for n in range(4):
        t, l, h, w = (int(b[n]) for b in boxes)
        np.testing.assert_allclose(out[n], _loop_resize(img[n], t, l, h, w), atol=1e-12)
        pil = Image.fromarray(img[n].astype(np.float32), mode="F").crop((l, t, l + w, t + h)).resize((9, 10),
                                                                                                   Image.BILINEAR)
        np.testing.assert_allclose(out[n], np.asarray(pil), atol=1e-5)
    np.testing.assert_array_equal(out[3], img[3])  # the whole image: the identity


def _numpy_boxes(rng, n, H, W, scale=(0.5, 1.0), ratio=(0.5, 1.5)):
    """(h, w) of torchvision's RandomResizedCrop.get_params, one box at a time."""
    out = []
    for _ in range(n):
        for _ in range(10):
            area = H * W * rng.uniform(*scale)
            r = np.exp(rng.uniform(np.log(ratio[0]), np.log(ratio[1])))
            w, h = int(round(np.sqrt(area * r))), int(round(np.sqrt(area / r)))
            if 0 < w <= W and 0 < h <= H:
                out.append((h, w))
                break
        else:
            out.append((H, W))
    return np.asarray(out).T


def test_boxes_lie_in_range_and_follow_the_scale_and_ratio():
    top, left, h, w = (np.asarray(v) for v in crops.sample_boxes(KEY, N, 28, 28, (0.5, 1.0), (0.5, 1.5)))
    assert np.all((top >= 0) & (left >= 0) & (top + h <= 28) & (left + w <= 28) & (h >= 1) & (w >= 1))
    area, ratio = h * w / 784, w / h
    assert area.min() >= 0.45 and area.max() <= 1.0 and ratio.min() >= 0.45 and ratio.max() <= 1.6
    ref = _numpy_boxes(np.random.default_rng(0), 3000, 28, 28)  # the documented procedure, in numpy
    for ours, theirs in ((h, ref[0]), (w, ref[1])):
        assert abs(ours.mean() - theirs.mean()) < 0.3 and abs(ours.std() - theirs.std()) < 0.3
    assert abs(area.mean() - np.mean(ref[0] * ref[1] / 784)) < 0.01
    assert abs(np.mean(top - (28 - h) / 2)) < 0.3 and abs(np.mean(left - (28 - w) / 2)) < 0.3  # uniform offsets
    assert len(set(zip(top, left))) > 100


def test_fallback_is_torchvisions_central_crop():
    # ratio 2 on a square: w = round(sqrt(2 s) 28) >= 28 sqrt(2 * 0.5) never fits below -> full width, h = 14
    top, left, h, w = (np.asarray(v)[:3] for v in crops.sample_boxes(KEY, N, 28, 28, (0.5, 1.0), (2.0, 2.0)))
    assert list(h) == [14] * 3 and list(w) == [28] * 3 and list(top) == [7] * 3 and list(left) == [0] * 3
    top, left, h, w = (np.asarray(v)[:3] for v in crops.sample_boxes(KEY, N, 28, 28, (1.0, 1.0), (0.25, 0.25)))
    assert list(h) == [28] * 3 and list(w) == [7] * 3 and list(left) == [10] * 3 and list(top) == [0] * 3


@pytest.mark.parametrize("scale, ratio", [((0.0, 1.0), (0.5, 1.5)), ((0.6, 0.5), (1, 1)), ((0.5, 1.2), (1, 1)),
                                          ((0.5, 1.0), (2.0, 1.0))])
def test_bad_parameters(scale, ratio):
    with pytest.raises(ValueError, match="scale|ratio"):
        crops.check_params(scale, ratio)
