"""The batching transform tested directly: a function lifted by ``tiled_sharded`` over tiles and
devices equals the function applied to each tile; init keys do not depend on the chunking."""

import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn import parallel


def _fn(shared, tree):
    """A per-tile function whose rows depend on their whole tile (so a wrong tiling would show)."""
    w, s = tree
    return {"w": w @ shared + jnp.mean(w, axis=0, keepdims=True), "s": s * 2 + jnp.sum(s)}


def _reference(shared, tree, tile):
    w, s = tree
    outs = [_fn(shared, (w[i:i + tile], s[i:i + tile])) for i in range(0, w.shape[0], tile)]
    return {k: np.concatenate([np.asarray(o[k]) for o in outs]) for k in outs[0]}


@pytest.mark.parametrize("tile,n_tiles", [(4, 1), (4, 3), (16, 2)])
def test_lifted_function_equals_the_function_over_tiles(tile, n_tiles):
    rng = np.random.default_rng(tile * n_tiles)
    shared = jnp.asarray(rng.standard_normal((5, 5)))
    n = tile * n_tiles
    tree = (jnp.asarray(rng.standard_normal((n, 5))), jnp.asarray(rng.standard_normal(n)))
    lifted = jax.jit(parallel.tiled_sharded(_fn, parallel.device_mesh(), tile))
    got = lifted(shared, tree)
    want = _reference(shared, tree, tile)
    for k in want:
        np.testing.assert_allclose(np.asarray(got[k]), want[k], rtol=1e-12, atol=1e-12)


def test_counted_lift_runs_each_devices_first_tiles_only():
    """``counted``: the first ``counts`` tiles are the function over them, the other rows come back as
    they went in; with every tile counted it is the plain lift."""
    rng = np.random.default_rng(7)
    shared = jnp.asarray(rng.standard_normal((5, 5)))
    tile, n = 4, 20
    tree = (jnp.asarray(rng.standard_normal((n, 5))), jnp.asarray(rng.standard_normal(n)))
    lifted = jax.jit(parallel.tiled_sharded(lambda sh, t: tuple(_fn(sh, t).values()), parallel.device_mesh(), tile,
                                            counted=True))
    want = _reference(shared, tree, tile)
    for count in (0, 2, 5, 9):
        got = lifted(shared, tree, jnp.array([count], jnp.int32))
        live = min(count, n // tile) * tile
        for g, k, a in zip(got, want, tree):
            np.testing.assert_allclose(np.asarray(g)[:live], want[k][:live], rtol=1e-12, atol=1e-12)
            np.testing.assert_array_equal(np.asarray(g)[live:], np.asarray(a)[live:])
    assert lifted._cache_size() == 1


def test_init_weights_depend_only_on_the_init_index(key):
    whole = parallel.init_weights(key, 0, 10, 4, jnp.float64)
    parts = jnp.concatenate([parallel.init_weights(key, 0, 3, 4, jnp.float64),
                             parallel.init_weights(key, 3, 7, 4, jnp.float64)])
    np.testing.assert_array_equal(np.asarray(whole), np.asarray(parts))
    np.testing.assert_allclose(np.linalg.norm(np.asarray(whole), axis=1), 1.0)


def test_init_weights_are_the_same_bits_whatever_start_and_count(key):
    """Drawn over 16 or 48 rows in one program, XLA fused the norm's multiply-adds into FMAs or not
    (float32, d = 5: 2 of the first 16 inits differed in the last bit); drawn in fixed blocks they are
    the same rows of one long draw, across a block boundary too."""
    rows = parallel.init_block()  # 512 on CPU (a GPU draws blocks of 65536: the same bits there, measured)
    assert (parallel.init_block("cpu"), parallel.init_block("gpu")) == (parallel.INIT_BLOCK, parallel.GPU_INIT_BLOCK)
    ref = np.asarray(parallel.init_weights(key, 0, rows + 100, 5, jnp.float32))
    assert ref.shape == (rows + 100, 5) and ref.dtype == np.float32
    for start, count in ((0, 16), (0, 48), (7, 37), (rows - 3, 90)):
        np.testing.assert_array_equal(np.asarray(parallel.init_weights(key, start, count, 5, jnp.float32)),
                                      ref[start:start + count], err_msg=f"{start} {count}")
    assert parallel.init_weights(key, 4, 0, 5).shape == (0, 5)


def test_chunk_arithmetic():
    assert parallel.padded_chunk(1, 8, 2) == 16 and parallel.padded_chunk(17, 8, 2) == 32
    assert parallel.padded_chunk(0, 8, 1) == 8
    assert parallel.chunk_ranges(10, 4) == [(0, 4), (4, 4), (8, 2)]
    with pytest.raises(ValueError, match="--coordinator_address is required"):
        parallel.initialize_distributed(None, 2, 0)


def test_two_forced_devices_give_the_one_device_result():
    """The same lifted function on a mesh of 2 (forced CPU) devices: bit-identical to 1 device."""
    code = textwrap.dedent("""
        import jax, jax.numpy as jnp, numpy as np
        jax.config.update("jax_enable_x64", True)
        from ccdyn import parallel
        fn = lambda shared, w: jnp.tanh(w @ shared) + jnp.mean(w, axis=0)
        w = parallel.init_weights(jax.random.PRNGKey(3), 0, 64, 6, jnp.float64)
        shared = jnp.eye(6) * 0.7
        outs = [np.asarray(jax.jit(parallel.tiled_sharded(fn, parallel.device_mesh(devs), 8))(shared, w))
                for devs in (jax.devices()[:1], jax.devices())]
        assert len(jax.local_devices()) == 2
        np.testing.assert_array_equal(outs[0], outs[1])
        print("ok")
    """)
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=2".strip()
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_sizing_rule():
    """The stated rule: 512 on CPU; on an accelerator the largest power of 2 <= 16384 whose tile fits in
    1/8 of the memory and is not wider than the inits per device (on a GPU, whose activations fit in
    32 MiB); 32 tiles per device per chunk."""
    gib = 2**30
    assert parallel.default_tile(1e9, 1e9, 10**6, backend="cpu", memory=gib, n_devices=1) == parallel.CPU_TILE
    big = dict(backend="gpu", memory=80 * gib, n_devices=1)
    assert parallel.default_tile(32 * 1024, 1e6, 10**6, **big) == parallel.ACCEL_TILE_MAX
    # the memory bound: 1/8 of 80 GiB = 10 GiB holds 10 GiB / 2 MiB = 5120 inits -> 4096
    assert parallel.default_tile(2 * 2**20, 0, 10**6, **big) == 4096
    assert parallel.default_tile(2 * 2**20, 2 * gib, 10**6, **big) == 4096  # 8 GiB left: 4096 still fits
    assert parallel.default_tile(2 * 2**20, 3 * gib, 10**6, **big) == 2048
    # not wider than the inits per device: 3000 inits on 2 devices -> 1500 -> 2048
    assert parallel.default_tile(1, 0, 3000, backend="gpu", memory=80 * gib, n_devices=2) == 2048
    assert parallel.default_tile(1, 0, 1, backend="tpu", memory=gib, n_devices=4) == 1
    # on a GPU the activations of a tile fit in the L2 cache: 1024 points x 4 bytes -> 32 MiB / 4 KiB = 8192
    assert parallel.default_tile(32 * 1024, 1e6, 10**6, activation_bytes=4096, **big) == 8192
    assert parallel.default_tile(32 * 1024, 1e6, 10**6, activation_bytes=4096 * 3, **big) == 2048
    tpu = dict(big, backend="tpu")  # measured on a GPU only: the TPU rule has no cache bound
    assert parallel.default_tile(32 * 1024, 1e6, 10**6, activation_bytes=4096, **tpu) == parallel.ACCEL_TILE_MAX
    assert parallel.default_chunk(512, 1) == 16384 and parallel.default_chunk(4096, 8) == 4096 * 8 * 32


def test_global_arrays_round_trip_and_single_process_collectives():
    mesh = parallel.device_mesh()
    host = np.arange(8.0 * mesh.devices.size).reshape(4 * mesh.devices.size, 2)
    tree = {"a": host, "b": np.arange(host.shape[0], dtype=np.int32)}
    sharded = parallel.to_global(tree, mesh)
    assert sharded["a"].sharding.spec == jax.sharding.PartitionSpec(parallel.AXIS)
    back = parallel.to_host(sharded)
    np.testing.assert_array_equal(back["a"], host)
    assert back["b"].dtype == np.int32
    replicated = parallel.to_global(host, mesh, jax.sharding.PartitionSpec())
    assert replicated.sharding.is_fully_replicated
    np.testing.assert_array_equal(parallel.broadcast_from_0(np.array([3, 4])), [3, 4])
    np.testing.assert_array_equal(parallel.gather_rows(np.array([3, 4])), [[3, 4]])
    assert parallel.host_device().platform == "cpu"


def test_spread_and_gather_bytes_with_one_process():
    seen = []
    out = list(parallel.spread([3, 1, 2], lambda i: seen.append(i) or bytes([i]) * i))
    assert out == [(3, b"\x03\x03\x03"), (1, b"\x01"), (2, b"\x02\x02")] and seen == [3, 1, 2]
    assert parallel.gather_bytes(b"abc") == [b"abc"] and parallel.gather_bytes(b"") == [b""]
