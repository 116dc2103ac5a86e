"""The fused GPU ascent kernel (ccdyn.one_layer.fused_ascent), on CPU: Pallas's interpreter against a
float64 evaluation of the uniform C_alpha (Lemma 3) written out in numpy, the lowering for a CUDA GPU
(Pallas -> Triton, which needs no GPU), and where the engine uses it."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import compiling, parallel
from ccdyn.activations import get_activation
from ccdyn.data.dataset import make_dataset
from ccdyn.one_layer import dynamics, fused_ascent
from ccdyn.pairwise import get_pairwise

UNIFORM = get_pairwise("uniform")


def _reference(x, p, W, act):
    """u = sum_i h'(z_i) p_i deg (h(z_i) - sum_j p_j h(z_j)) x_i in float64 numpy (z = W x^T)."""
    z = W @ x.T
    h = np.asarray(act.h(jnp.asarray(z, jnp.float64)), np.float64)
    dh = np.asarray(act.dh(jnp.asarray(z, jnp.float64)), np.float64)
    centred = act.degree * (h - (h @ p)[:, None])
    return (dh * p * centred) @ x


def _data(n, d, k, seed, shift=0.5):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)) + shift  # off-centre: the one-pass sums b - a c cancel partly
    p = rng.random(n)
    W = rng.normal(size=(k, d))
    return x, p / p.sum(), W / np.linalg.norm(W, axis=1, keepdims=True)


_SHAPES = [(100, 10, 37, "float32"), (64, 3, 16, "float32"), (130, 17, 50, "float32"), (100, 10, 37, "fma"),
           (64, 3, 16, "fma")]


@pytest.mark.parametrize("n,d,k,arithmetic,name", [  # fast: every activation at the first shape, ReLU at every shape
    (*s, a) if s == _SHAPES[0] or a == "relu" else pytest.param(*s, a, marks=pytest.mark.slow)
    for s in _SHAPES for a in fused_ascent.SUPPORTED])
def test_interpreted_kernel_matches_float64_as_closely_as_the_xla_path(name, n, d, k, arithmetic):
    """Every shape is padded (rows to the block, d to 16 or 32, points to the block): the kernel's error
    against float64 is float32 rounding, no larger than 4x the XLA path's (and below 1e-5 relative), with
    the products as dots or as FMAs over d's columns."""
    act = get_activation(name)
    x, p, W = _data(n, d, k, seed=n + d)
    ds = make_dataset(x, p, dtype=jnp.float32)
    W32 = jnp.asarray(W, jnp.float32)
    ref = _reference(np.asarray(ds.x, np.float64), np.asarray(ds.p, np.float64), np.asarray(W32, np.float64), act)
    blocks = fused_ascent.Blocks(16, 32, precision=arithmetic)
    fused = np.asarray(fused_ascent.ascent(ds.x, ds.p, W32, act, blocks, interpret=True))
    xla = np.asarray(dynamics.ascent(ds, act, W32))  # the CPU path: the two GEMMs
    scale = np.max(np.linalg.norm(ref, axis=1))
    err_fused = np.max(np.linalg.norm(fused - ref, axis=1)) / scale
    err_xla = np.max(np.linalg.norm(xla - ref, axis=1)) / scale
    assert fused.shape == (k, d) and fused.dtype == np.float32
    assert err_fused < 1e-5 and err_fused <= 4 * max(err_xla, np.finfo(np.float32).eps), (err_fused, err_xla)


def test_a_row_does_not_depend_on_the_other_rows():
    """The bits of a row are the same in a batch of 16 (one block) and of 48 (three), at any position."""
    act = get_activation("relu")
    x, p, W = _data(96, 10, 48, seed=3)
    ds = make_dataset(x, p, dtype=jnp.float32)
    W32 = jnp.asarray(W, jnp.float32)
    blocks = fused_ascent.Blocks(16, 32)
    whole = np.asarray(fused_ascent.ascent(ds.x, ds.p, W32, act, blocks, interpret=True))
    part = np.asarray(fused_ascent.ascent(ds.x, ds.p, W32[20:36], act, blocks, interpret=True))
    np.testing.assert_array_equal(whole[20:36], part)


def test_blocks_are_checked():
    for bad in (dict(block_inits=24), dict(block_points=8), dict(num_warps=3), dict(precision="bf16")):
        with pytest.raises(ValueError, match=next(iter(bad))):
            fused_ascent.Blocks(**bad)
    assert fused_ascent.Blocks() == fused_ascent.BLOCKS and hash(fused_ascent.Blocks()) == hash(fused_ascent.BLOCKS)
    assert [fused_ascent.padded_dim(d) for d in (1, 10, 16, 17)] == [16, 16, 16, 32]


def test_applies_only_when_chosen_to_uniform_float32_data_without_views_and_a_supported_activation(monkeypatch):
    x, p, W = _data(32, 4, 8, seed=1)
    ds = make_dataset(x, p, dtype=jnp.float32)
    W32, relu = jnp.asarray(W, jnp.float32), get_activation("relu")
    monkeypatch.delenv(compiling.KERNEL_ENV, raising=False)
    assert compiling.kernel() == compiling.DEFAULT_KERNEL == "xla"  # until measured on a GPU
    assert not fused_ascent.applies(ds, relu, UNIFORM, W32)
    monkeypatch.setenv(compiling.KERNEL_ENV, "fused")
    assert fused_ascent.applies(ds, relu, UNIFORM, W32)
    assert not fused_ascent.applies(ds, relu, get_pairwise("gaussian", tau=1.0), W32)
    assert not fused_ascent.applies(ds, get_activation("tanh"), UNIFORM, W32)
    assert not fused_ascent.applies(ds, relu, UNIFORM, W32.astype(jnp.float64))
    views = make_dataset(x, p, x_aug=np.stack([x, 2 * x], axis=1), dtype=jnp.float32)
    assert not fused_ascent.applies(views, relu, UNIFORM, W32)
    monkeypatch.setenv(compiling.KERNEL_ENV, "triton")
    with pytest.raises(ValueError, match="CCDYN_KERNEL='triton' must be one of fused, xla"):
        compiling.kernel()


def _lowered(platform, act):
    x, p, W = _data(1024, 10, 256, seed=2)
    ds = make_dataset(x, p, dtype=jnp.float32)
    fn = jax.jit(lambda W: dynamics.ascent(ds, act, W, UNIFORM))
    return fn.trace(jnp.asarray(W, jnp.float32)).lower(lowering_platforms=(platform,)).as_text()


@pytest.mark.parametrize("name", fused_ascent.SUPPORTED)
def test_the_field_lowers_to_the_triton_kernel_for_cuda_when_chosen_and_to_gemms_for_cpu(name, monkeypatch):
    """Lowering Pallas to Triton's IR needs no GPU: a kernel Triton cannot express fails here."""
    act = get_activation(name)
    monkeypatch.setenv(compiling.KERNEL_ENV, "fused")
    assert "xla.gpu.triton" in _lowered("cuda", act)
    assert "xla.gpu.triton" not in _lowered("cpu", act)
    monkeypatch.setenv(compiling.KERNEL_ENV, "xla")
    assert "xla.gpu.triton" not in _lowered("cuda", act)


def test_the_engine_blocks_of_power_and_auto_lower_to_the_kernel_under_shard_map(monkeypatch):
    """The engine's tiled, sharded block (power; auto, whose sliding flow evaluates the field in several
    places) calls the kernel for a GPU: its output type carries shard_map's varying axes."""
    from ccdyn.data.registry import DataSpec, build_dataset
    from ccdyn.one_layer import engine

    monkeypatch.setenv(compiling.KERNEL_ENV, "fused")
    ds = build_dataset(DataSpec(), jnp.float32)
    act, mesh = get_activation("relu"), parallel.device_mesh()
    W = parallel.init_weights(jax.random.PRNGKey(0), 0, 256, ds.dim, jnp.float32)
    for method in ("power", "auto"):
        dyn = engine.Dynamics(method=method, max_steps=10, block=2)
        block = jax.jit(parallel.tiled_sharded(engine.make_block(act, UNIFORM, dyn), mesh, 128))
        text = block.trace(ds, engine.initial_state(W, dyn, act)).lower(lowering_platforms=("cuda",)).as_text()
        assert "xla.gpu.triton" in text, dyn.method


@pytest.mark.parametrize("blocks", [fused_ascent.Blocks(64, 64, 4), fused_ascent.Blocks(256, 128, 8, "tf32x3"),
                                    fused_ascent.Blocks(64, 128, 4, "fma")])
def test_other_block_configurations_lower_for_cuda(blocks):
    x, p, W = _data(300, 10, 100, seed=4)
    fn = jax.jit(lambda W: fused_ascent.ascent(jnp.asarray(x, jnp.float32), jnp.asarray(p, jnp.float32), W,
                                               get_activation("leaky_relu"), blocks))
    text = fn.trace(jnp.asarray(W, jnp.float32)).lower(lowering_platforms=("cuda",)).as_text()
    assert "xla.gpu.triton" in text


def test_a_fused_gpu_tile_has_no_cache_bound():
    gib = 2**30
    gpu = dict(backend="gpu", memory=140 * gib, n_devices=1)
    assert parallel.default_tile(32 * 1024, 1e6, 10**6, activation_bytes=4096, **gpu) == 8192
    assert parallel.default_tile(32 * 1024, 1e6, 10**6, activation_bytes=4096, fused=True, **gpu) == \
        parallel.FUSED_TILE_MAX
    assert parallel.default_tile(32 * 1024, 1e6, 1000, fused=True, **gpu) == 1024  # not wider than the inits
    cpu = dict(gpu, backend="cpu")
    assert parallel.default_tile(32 * 1024, 1e6, 10**6, fused=True, **cpu) == parallel.CPU_TILE
