"""The DDN appendix checks (ccdyn.deep.reversible, normalized, nuisance, tr_hltm; studies.appendix) against
autodiff, enumeration and the exact bivariate normal, in float64; the verdicts of claims.appendix_claims.
The whole study (every check at its committed sizes) is the slow test; the fast ones take one piece each."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from ccdyn.deep import claims, network, normalized, reversible, tr_hltm
from ccdyn.deep.studies import appendix

CFG = appendix.AppendixConfig()


@jax.jit
def _layer1_routes(ws, ws2, x1, x2):
    """Layer 1 (the longest chain: every G_l and Q_l above it): Eq. 22 for the leaky ReLU (a = 0.1) and Eq. 41
    for the ReLU, each with autodiff; Def. 2's two forms. One compiled program."""
    target = reversible.forward(ws2, x2, "leaky", 0.1)[0][-1]
    r = lambda z: 0.5 * jnp.sum((appendix._top(ws, z, 1, "leaky", 0.1, 2) - target) ** 2)  # noqa: E731
    eq22 = (reversible.lemma1_gradient(ws, ws2, x1, x2, 1, "leaky", 0.1), jax.grad(r)(ws[0] @ x1))  # d/d f~_1
    u2 = normalized.unit(ws, x2)
    g = jax.grad(lambda w: 0.5 * jnp.sum((normalized.unit(w, x1) - u2) ** 2))(ws)
    eq41 = (normalized.eq41_gradient(ws, x1, x2, 1), network.vec(g[0]))
    return eq22, eq41, reversible.def2_residuals(ws, x1, "leaky", 0.1)


def test_lemma1_leaky_relu_and_eq41_against_autodiff():
    """Eq. 22 with G_l, Q_l of Eq. 17 (leaky ReLU) and Eq. 41 (l2-normalized, ReLU) equal autodiff at layer 1
    (every layer: the slow study); G_l f~_{l-1} = f~_l (Eq. 26) while Def. 2's G_l f_{l-1} misses it."""
    ws, xs = appendix._setup(CFG)
    ws2 = network.init_weights(jax.random.PRNGKey(CFG.net_seed + 1), CFG.sizes)
    eq22, eq41, (tilde, printed) = _layer1_routes(ws, ws2, xs[0], xs[1])
    for got, auto in (eq22, eq41):
        assert np.linalg.norm(auto) > 1e-2            # a zero gradient would make the comparison empty
        np.testing.assert_allclose(got, auto, rtol=0, atol=1e-12 * np.linalg.norm(auto))
    assert tilde < 1e-14 and printed > 1e-2
    with pytest.raises(ValueError, match="activation"):
        reversible.psi(xs[0], "tanh")


def test_lemma9_and_eq99_on_an_enumerated_categorical_tree():
    tree = tr_hltm.make_tree(0)
    assert all(tr_hltm.is_tr(p) for p in tree["t"].values())
    brute = tr_hltm.brute_covariance(tree)
    assert np.linalg.matrix_rank(brute, 1e-10) == 2                      # m_0 - 1: not a trivial matrix
    np.testing.assert_allclose(tr_hltm.lemma9_covariance(tree), brute, rtol=0, atol=1e-13)
    for j in (0, 1):
        np.testing.assert_allclose(tr_hltm.eq99_transition(tree, j), tr_hltm.brute_transition(tree, j), atol=1e-14)
    bad = tr_hltm.make_tree(0, tr=False)                                  # Eq. 99 needs Def. 3; Eq. 166 does not
    assert not tr_hltm.is_tr(bad["t"]["mu1"])
    assert np.abs(tr_hltm.eq99_transition(bad, 0) - tr_hltm.brute_transition(bad, 0)).max() > 1e-2
    np.testing.assert_allclose(tr_hltm.lemma9_covariance(bad), tr_hltm.brute_covariance(bad), rtol=0, atol=1e-13)


def test_lemma7_on_a_grid_of_binary_transitions():
    r = tr_hltm.lemma7_residuals(11)
    assert r["tr_iff_symmetric_mismatches"] == 0 and r["rho_range"] == [-1.0, 1.0]
    assert r["c_residual"] < 1e-15 and r["closure_residual"] < 1e-15


def test_lemma8_and_fig11_on_a_small_grid():
    cfg = dataclasses.replace(CFG, c_grid=(0.5, 20.0, 4), gamma_grid=(0.0, 0.9, 4), asymptote_c=(1e3, 1e4))
    l8 = appendix.lemma8(cfg)
    assert l8["printed_violations"] > 0 and l8["corrected_violations"] == 0
    assert l8["printed_at_gamma0_max_dev"] < 1e-9           # gamma = 0: Eq. 112 is the exact tail / 2
    f = appendix.fig11(cfg)
    assert f["outside_band"] == 0
    assert all(abs(r[-1] - 1) < 0.01 for r in f["asymptote_ratio"].values())


def test_lemmas3_5_on_random_distributions_and_a_refuted_variant():
    r = appendix.lemma3_5(dataclasses.replace(CFG, n_dists=200))
    assert r["eq87"] <= 1 + 1e-12 and r["eq90_lower"] <= 1e-12 and r["eq90_upper"] <= 1e-12
    assert r["eq91_upper"] <= 1 and r["eq91_lower_min"] >= 0
    assert r["eq87"] > 0.9                # nearly tight: the check would see a constant below L^2
    (c,) = claims.appendix_claims({"values": {"lemma3_5": dict(r, eq91_upper=1.2)}})
    assert c["verdict"] == "partly"


def _values(**over):
    v = {"lemma2": {"rel": 3e-16, "min_norm": 0.4, "H": 3},
         "eq80": {"autodiff": [0.3], "printed": [1e-5], "output_distance_over_tau": [0.3], "rel_printed": 1.0,
                  "rel_output_distance": 0.0, "rel_h1_eq63": 0.0, "rel_h1_autodiff": 0.0},
         "lemma8": {"grid": 4, "printed_violations": 3, "printed_max_ratio": 2.0, "printed_worst_at": [9, 0.2],
                    "printed_at_gamma0_max_dev": 0.0, "corrected_violations": 0, "corrected_max_ratio": 1.0}}
    v.update(over)
    return {"values": v, "command": "python scripts/ddn_appendix.py"}


def test_appendix_claims_words():
    words = {c["id"]: c["verdict"] for c in claims.appendix_claims(_values())}
    assert words == {"ddn-lemma2": "holds", "ddn-eq80": "partly", "ddn-lemma8": "fails"}
    # a gradient that is zero or off by more than rounding does not hold
    for bad in ({"rel": 3e-16, "min_norm": 0.0, "H": 3}, {"rel": 1e-6, "min_norm": 0.4, "H": 3}):
        (c,) = claims.appendix_claims({"values": {"lemma2": bad}})
        assert c["verdict"] == "fails"


@pytest.mark.slow
def test_the_committed_study_verdicts():
    record = appendix.run(CFG)
    words = {c["id"]: c["verdict"] for c in claims.appendix_claims(record)}
    assert words == {"ddn-lemma1": "holds", "ddn-l2norm": "holds", "ddn-lemma2": "holds", "ddn-eq80": "partly",
                     "ddn-sec51-linear": "holds", "ddn-lemma7": "holds", "ddn-lemma6": "holds", "ddn-lemma9": "holds",
                     "ddn-lemma8": "fails", "ddn-fig11": "holds", "ddn-lemma3-5": "holds"}


def test_script_bad_flags():
    from tests.scripts import inprocess
    with inprocess.script("ddn_appendix") as script:
        assert "--checks must name some of" in (inprocess.flag_error(script, "--checks=lemma1,foo") or "")
        assert "--checks must name some of" in (inprocess.flag_error(script, "--checks=lemma1,lemma1") or "")
        assert "--seed=-1" in (inprocess.flag_error(script, "--seed=-1") or "")


def test_fig13_14_verdict_counts_each_curve_once():
    up, flat = {"epochs": [0, 50], "median": [0.001, 0.4]}, {"epochs": [0, 50], "median": [1e-6, 0.0]}
    rec = {"command": "python scripts/ddn_figures.py", "medians": {"paper": {
        "depth L (delta_lower 0.8, |N_mu| 10)": {"depth L = 5": {"s0": up}, "depth L = 6": {"s0": up}},
        "|N_mu| (depth L 5, delta_lower 0.8)": {"|N_mu| = 10": {"s0": up}, "|N_mu| = 2": {"s0": flat}}}}}
    (c,) = claims.figures_claims(rec)
    assert c["verdict"] == "partly" and c["numbers"]["width_10"]["up"] == "2/2"
    assert c["numbers"]["width_2"]["not_up"] == ["L=5 d=0.8 w=2 s0"]


def test_fig13_14_panel_without_width_is_refused():
    up = {"epochs": [0, 50], "median": [0.001, 0.4]}
    rec = {"command": "python scripts/ddn_figures.py", "medians": {"paper": {
        "depth L (delta_lower 0.8)": {"depth L = 5": {"s0": up}}}}}
    with pytest.raises(ValueError, match="names \\|N_mu\\|"):
        claims.figures_claims(rec)
