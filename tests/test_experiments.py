"""The token experiment's settings, seeds and the claim checks on synthetic result rows."""

import numpy as np
import pytest

from ccdyn import two_layer
from ccdyn.two_layer import claims, experiment, metrics
from ccdyn.data import tokens


def row(act, p, beta, plus, minus=0.2, loss="infonce", bn="none", zeta=1.0):
    return {"act": act, "n_candidates": p, "beta": beta, "loss": loss, "bn": bn, "zeta": zeta,
            "chi_plus": {"mean": plus, "std": 0.0, "n": 3}, "chi_minus": {"mean": minus, "std": 0.0, "n": 3}}


def paper_like(loss="infonce", scale=1.0):
    """Rows shaped like Fig. 4: linear flat (0.9 at P=1, 0.5 above), ReLU rising with beta."""
    rows = []
    for p in (1, 3):
        for b in (1, 2, 5):
            rows.append(row("linear", p, b, scale * (0.9 if p == 1 else 0.5), 0.4, loss))
            rows.append(row("relu", p, b, scale * (0.4 + 0.1 * b), 0.1, loss))
    return rows


def test_checks_hold_on_paper_like_rows_and_fail_when_reversed():
    rows = paper_like()
    assert claims.check_p1(rows)["holds"] and claims.check_relu_beats_linear(rows)["holds"]
    assert claims.check_relu_lowest_chi_minus(rows)["holds"]
    assert claims.check_infonce_beats_quadratic(rows + paper_like("quadratic", 0.8))["holds"]
    assert not claims.check_infonce_beats_quadratic(rows + paper_like("quadratic", 1.2))["holds"]
    swapped = [{**r, "act": {"linear": "relu", "relu": "linear"}[r["act"]]} for r in rows]
    assert not claims.check_p1(swapped)["holds"] and not claims.check_relu_beats_linear(swapped)["holds"]
    assert claims.verdict_word(claims.check_relu_beats_linear(swapped)) == "fails"
    assert not claims.check_relu_lowest_chi_minus(swapped)["holds"]
    flat_relu = [{**r, "chi_plus": {"mean": 0.9, "std": 0, "n": 3}} if r["act"] == "relu" and r["n_candidates"] > 1
                 else r for r in rows]  # ReLU beats linear but no longer improves with beta
    v = claims.check_relu_beats_linear(flat_relu)
    assert claims.verdict_word(v) == "partly" and not v["parts"]["ReLU improves with beta at every P>1"]
    assert claims.check_bn_helps(rows)["holds"] is None  # no BN rows: no verdict, not a pass


def test_bn_and_sigma_checks():
    rows = []
    for p in (3, 5):
        for b in (1, 5):
            rows += [row("relu", p, b, 0.5, bn="none", zeta=10.0), row("relu", p, b, 0.7, bn="mean_only", zeta=10.0),
                     row("relu", p, b, 0.72, bn="none_backprop", zeta=10.0), row("relu", p, b, 0.3, bn="vanilla",
                                                                                    zeta=10.0),
                     row("relu", p, b, 0.1, bn="var_only", zeta=10.0)]
    v = claims.check_bn_helps(rows, zeta=10.0)
    assert v["holds"] and v["numbers"]["bn_minus_none"]["P5-beta5"] == pytest.approx(0.2)
    s = claims.check_sigma_backprop_hurts(rows)
    assert s["holds"] and s["numbers"]["mu backpropagated"]["wins"] == "2/2"
    rows = [{**r, "chi_plus": {"mean": 0.9, "std": 0, "n": 3}} if r["bn"] == "vanilla" else r for r in rows]
    assert not claims.check_sigma_backprop_hurts(rows)["holds"]


def test_setting_validation_and_tags():
    s = experiment.Setting(act="relu", beta=5, n_candidates=3, bn="mean_only", zeta=10.0)
    assert s.tag == "infonce-relu-bn_mean_only-zeta10-P3-beta5"
    for kwargs, message in [(dict(beta=0), "beta=0 must be an integer >= 1"),
                            (dict(beta=1.5), "beta=1.5 must be an integer >= 1"),
                            (dict(loss="nce"), "loss='nce' is unknown"),
                            (dict(bn="batch"), "bn='batch' is unknown"),
                            (dict(act="sigmoid"), "sigmoid")]:
        with pytest.raises(ValueError, match=message):
            experiment.Setting(**kwargs)


def test_seed_streams_are_distinct_and_prefix_stable():
    d3, b3, i3 = (np.asarray(k) for k in experiment.seed_keys(0, 3))
    d2, _, _ = (np.asarray(k) for k in experiment.seed_keys(0, 2))
    np.testing.assert_array_equal(d3[:2], d2)  # adding seeds does not change the first ones
    assert len({tuple(k) for k in np.concatenate([d3, b3, i3])}) == 9


def test_aggregate_skips_non_finite():
    assert experiment.aggregate([0.5, np.nan, 0.7]) == {"mean": pytest.approx(0.6), "std": pytest.approx(0.1), "n": 2}
    assert experiment.aggregate([np.nan])["n"] == 0


def test_init_scores_are_the_scores_of_the_runs_starting_point():
    spec = tokens.TokenSpec(n_positions=3, n_tokens=6, n_generators=5, n_fixed=2)
    s = experiment.Setting(act="linear", beta=2, n_candidates=2)
    got = experiment.init_scores(s, n_seeds=2, seed=4, spec=spec, d_out=7)
    data_keys, _, init_keys = experiment.seed_keys(4, 2)
    sp = tokens.TokenSpec(n_candidates=2, n_positions=3, n_tokens=6, n_generators=5, n_fixed=2)
    net = experiment.network(s, sp, 7)
    for i in range(2):
        w = two_layer.init_params(init_keys[i], net)["W"]
        d = tokens.make_tokens(data_keys[i], sp)
        want = metrics.matching_scores(w, d.embeddings, d.used, odd=True)
        np.testing.assert_allclose(got["chi_plus"][i], want["chi_plus"], rtol=1e-12)
        np.testing.assert_allclose(got["chi_minus"][i], want["chi_minus"], rtol=1e-12)
