"""ccdyn.two_layer.lemma5_exact and the Lemma 5 (C > 2, M > 1) claim: the gated input against a loop, Eq. 120
against enumeration of the joint population, and a coupled population (no conditional independence) on which
Eq. 120 must fail."""

import copy
import itertools
from pathlib import Path

import numpy as np

from ccdyn import io
from ccdyn.two_layer import claims
from ccdyn.two_layer import lemma5_exact as l5


def test_gated_input_is_the_loop():
    rng = np.random.default_rng(0)
    x, W = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    want = np.array([np.concatenate([xi * float(w @ xi > 0) for w in W]) for xi in x])
    assert np.array_equal(l5.gated(x, W), want)


def test_eq120_equals_enumeration_for_three_classes_and_two_filters():
    rng = np.random.default_rng(1)
    p, X, P = l5.population(rng, 3, 2, 3, 3)
    W = rng.normal(size=(2, 2, 3))
    V, between = l5.closed_form(p, X, P, W)
    E = l5.enumerated(p, X, P, W)
    assert np.abs(V - E).max() < 1e-13 * np.abs(E).max()
    assert np.linalg.matrix_rank(between, tol=1e-10 * np.abs(between).max()) == 2  # C - 1


def test_eq120_fails_without_conditional_independence():
    rng = np.random.default_rng(2)
    p, X, P = l5.population(rng, 3, 2, 3, 3)
    P[:, 1] = P[:, 0]  # both RFs draw the same index: same marginals, coupled given z
    W = rng.normal(size=(2, 2, 3))
    V, _ = l5.closed_form(p, X, P, W)
    feats, probs = [], []
    for c, i in itertools.product(range(3), range(3)):
        feats.append(np.concatenate([l5.gated(X[c, k, i], W[k]) for k in range(2)]))
        probs.append(p[c] * P[c, 0, i])
    F, w = np.array(feats), np.array(probs)
    mu = w @ F
    coupled = (F - mu).T @ ((F - mu) * w[:, None])
    assert np.abs(V - coupled).max() > 1e-3


def test_claims_from_the_committed_record():
    rec = io.read_json(Path(__file__).resolve().parents[2] / "results/theory/lemma5_general/lemma5_general.json")
    (c,) = claims.lemma5_general_claims(rec)
    assert c == rec["claims"][0] and c["verdict"] == "holds" and c["numbers"]["shapes_beyond_C2_M1"] >= 3
    bad = copy.deepcopy(rec)
    bad["rows"][-1]["max_rel_diff"] = 1e-6
    assert claims.lemma5_general_claims(bad)[0]["verdict"] == "partly"
