"""Symmetric binary hierarchical latent tree model (SB-HLTM) of *Understanding Self-supervised
Learning with Dual Deep Networks* (Sec. 6.1, Eq. 14; App. D.1), as read in docs/ddn.md.

A complete binary tree of depth L: node 0 is the root z_0, the children of node i are 2i+1 (left,
"0") and 2i+2 (right, "1") (heap order; the paper's name "s010" is left-right-left from the root);
the 2^L nodes of depth L are the visible leaves, the network's input. Every latent is binary; the
root is 1 with probability ``p_root`` (1/2 in the paper) and a child equals its parent with
probability (1 + rho)/2, rho being the polarity of that edge (Eq. 14); the sampler draws each
flip from a 16-bit uniform number, so its flip probability is (1 - rho)/2 rounded to a multiple of
2^-16 (:func:`flip_thresholds`), while :func:`enumerate_joint` uses (1 - rho)/2 itself. Polarities are drawn per
edge, rho ~ U[delta_lower, delta_upper]; the paper draws them positive, the authors' code gives each
a random sign (``random_sign=True``).

Augmentation (Sec. 6): the positive view of a sample resamples every latent below the root with z_0
fixed; a negative is an independent sample. :func:`enumerate_joint` lists every configuration of a
small tree with its probability, the exact route the sampler and Thm. 6 are checked against.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np

from ccdyn import pytree

__all__ = ["Tree", "n_nodes", "node_depth", "node_name", "node_index", "parent", "ancestors", "make_tree",
           "path_polarity", "flip_thresholds", "sample", "sample_views", "leaves", "enumerate_joint", "MAX_EXACT_NODES"]

MAX_EXACT_NODES = 20  # enumerate_joint lists 2^(nodes) configurations


@pytree.dataclass(frozen=True)
class Tree:
    """One SB-HLTM instance.

    Attributes:
      rho: (n_nodes,) polarity of the edge from each node's parent (rho[0], the root's, is 0 and unused).
      p_root: P(z_0 = 1), a scalar.
    """

    rho: chex.Array
    p_root: chex.Array


def n_nodes(depth: int) -> int:
    """Latents of a complete binary tree of ``depth`` (leaves included): 2^(depth+1) - 1."""
    return 2 ** (depth + 1) - 1


def node_depth(i: int) -> int:
    """Distance of node ``i`` from the root."""
    return int(np.floor(np.log2(i + 1)))


def node_name(i: int) -> str:
    """The paper's name of node ``i``: "s" followed by the left (0) / right (1) moves from the root."""
    bits = []
    while i > 0:
        bits.append(str((i - 1) % 2))
        i = parent(i)
    return "s" + "".join(reversed(bits))


def node_index(name: str) -> int:
    """Heap index of a node named as in the paper ("s", "s0", "s1100", ...)."""
    if not name.startswith("s") or any(c not in "01" for c in name[1:]):
        raise ValueError(f"node name {name!r} must be 's' followed by 0/1 moves (e.g. 's010')")
    i = 0
    for c in name[1:]:
        i = 2 * i + 1 + int(c)
    return i


def parent(i: int) -> int:
    return (i - 1) // 2


def ancestors(i: int) -> list:
    """Ancestors of node ``i``, nearest first (the root last)."""
    out = []
    while i > 0:
        i = parent(i)
        out.append(i)
    return out


def make_tree(key, depth: int, delta_lower: float, delta_upper: float = 1.0, *, random_sign: bool = False,
              p_root: float = 0.5) -> Tree:
    """Draws the polarities of a depth-``depth`` SB-HLTM: rho ~ U[delta_lower, delta_upper] per edge,
    with a random sign per edge when ``random_sign`` (the authors' code)."""
    if depth < 1:
        raise ValueError(f"depth={depth} must be >= 1")
    if not -1 <= delta_lower <= delta_upper <= 1:
        raise ValueError(f"need -1 <= delta_lower={delta_lower} <= delta_upper={delta_upper} <= 1")
    if not 0 <= p_root <= 1:
        raise ValueError(f"p_root={p_root} must lie in [0, 1]")
    k1, k2 = jax.random.split(key)
    n = n_nodes(depth)
    rho = jax.random.uniform(k1, (n,), minval=delta_lower, maxval=delta_upper)
    if random_sign:
        rho = rho * jnp.where(jax.random.bernoulli(k2, 0.5, (n,)), -1.0, 1.0)
    return Tree(rho=rho.at[0].set(0.0), p_root=jnp.asarray(p_root, rho.dtype))


def path_polarity(tree: Tree, i: int, j: int):
    """rho_{ij} for an ancestor ``i`` of ``j``: the product of the edge polarities on the path (Lemma 6,
    Eq. 103 / 177); 1 when i == j."""
    out, k = jnp.ones((), tree.rho.dtype), j
    while k != i:
        if k == 0:
            raise ValueError(f"node {i} is not an ancestor of node {j}")
        out, k = out * tree.rho[k], parent(k)
    return out


def flip_thresholds(tree: Tree):
    """Per node, the 16-bit threshold t with P(flip) = t / 2^16 ~ (1 - rho) / 2 (error <= 2^-17)."""
    return jnp.round((1 - tree.rho) / 2 * 65536).astype(jnp.uint32)


def _descend(key, tree: Tree, z_root, depth: int):
    """All latents (n, n_nodes) given the root values z_root (n,): each edge flips its parent's value
    when a uniform 16-bit number (two per threefry word, drawn for all edges at once) is below its
    threshold (:func:`flip_thresholds`)."""
    n, m = z_root.shape[0], n_nodes(depth) - 1
    bits = jax.random.bits(key, (n, (m + 1) // 2), jnp.uint32)
    u16 = jnp.concatenate([bits & 0xFFFF, bits >> 16], axis=1)[:, :m]
    flip = (u16 < flip_thresholds(tree)[1:]).astype(jnp.int8)
    z = [z_root.astype(jnp.int8)[:, None]]
    for d in range(1, depth + 1):
        z.append(jnp.repeat(z[-1], 2, axis=1) ^ flip[:, 2 ** d - 2:2 ** (d + 1) - 2])
    return jnp.concatenate(z, axis=1)


def sample(key, tree: Tree, n: int, depth: int):
    """n independent samples of every latent, (n, n_nodes) in {0, 1} (int8)."""
    chex.assert_shape(tree.rho, (n_nodes(depth),))
    k1, k2 = jax.random.split(key)
    z0 = jax.random.bernoulli(k1, tree.p_root, (n,)).astype(jnp.int8)
    return _descend(k2, tree, z0, depth)


def sample_views(key, tree: Tree, n: int, depth: int):
    """(z, z_pos, z_neg), each (n, n_nodes): samples, their positive views (every latent below the root
    resampled, z_0 kept) and independent negatives."""
    k1, k2, k3 = jax.random.split(key, 3)
    z = sample(k1, tree, n, depth)
    return z, _descend(k2, tree, z[:, 0], depth), sample(k3, tree, n, depth)


def leaves(z, depth: int):
    """The visible leaves (…, 2^depth) of latents (…, n_nodes): the network's input."""
    return z[..., 2 ** depth - 1:]


def enumerate_joint(tree: Tree, depth: int):
    """Every configuration of the latents with its probability: (z (2^n, n) int8, p (2^n,))."""
    n = n_nodes(depth)
    if n > MAX_EXACT_NODES:
        raise ValueError(f"depth={depth} has {n} latents; exact enumeration allows at most {MAX_EXACT_NODES}")
    z = ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1).astype(np.int8)
    p = jnp.where(z[:, 0] == 1, tree.p_root, 1 - tree.p_root)
    for i in range(1, n):
        same = z[:, i] == z[:, parent(i)]
        p = p * jnp.where(same, (1 + tree.rho[i]) / 2, (1 - tree.rho[i]) / 2)
    return jnp.asarray(z), p
