"""The token experiment (ccdyn.two_layer.studies.token_grid): settings, seed streams, aggregation, chance scores."""

import numpy as np
import pytest

from ccdyn import grid, two_layer
from ccdyn.two_layer import metrics
from ccdyn.two_layer.studies import token_grid
from ccdyn.data import tokens


def test_setting_validation_and_tags():
    s = token_grid.Setting(act="relu", beta=5, n_candidates=3, bn="mean_only", zeta=10.0)
    assert s.tag == "infonce-relu-bn_mean_only-zeta10-P3-beta5"
    for kwargs, message in [(dict(beta=0), "beta=0 must be an integer >= 1"),
                            (dict(beta=1.5), "beta=1.5 must be an integer >= 1"),
                            (dict(loss="nce"), "loss='nce' is unknown"),
                            (dict(bn="batch"), "bn='batch' is unknown"),
                            (dict(act="sigmoid"), "sigmoid")]:
        with pytest.raises(ValueError, match=message):
            token_grid.Setting(**kwargs)


def test_seed_streams_are_distinct_and_prefix_stable():
    d3, b3, i3 = (np.asarray(k) for k in grid.seed_keys(0, 3, 3))
    d2, _, _ = (np.asarray(k) for k in grid.seed_keys(0, 2, 3))
    np.testing.assert_array_equal(d3[:2], d2)  # adding seeds does not change the first ones
    assert len({tuple(k) for k in np.concatenate([d3, b3, i3])}) == 9


def test_aggregate_skips_non_finite():
    assert token_grid.aggregate([0.5, np.nan, 0.7]) == {"mean": pytest.approx(0.6), "std": pytest.approx(0.1), "n": 2}
    assert token_grid.aggregate([np.nan])["n"] == 0


@pytest.mark.slow  # 4 s; fast: the scores' own tests in tests/two_layer/test_metrics.py
def test_init_scores_are_the_scores_of_the_runs_starting_point():
    spec = tokens.TokenSpec(n_positions=3, n_tokens=6, n_generators=5, n_fixed=2)
    s = token_grid.Setting(act="linear", beta=2, n_candidates=2)
    got = token_grid.init_scores(s, n_seeds=2, seed=4, spec=spec, d_out=7)
    data_keys, _, init_keys = grid.seed_keys(4, 2, 3)
    sp = tokens.TokenSpec(n_candidates=2, n_positions=3, n_tokens=6, n_generators=5, n_fixed=2)
    net = token_grid.network(s, sp, 7)
    for i in range(2):
        w = two_layer.init_params(init_keys[i], net)["W"]
        d = tokens.make_tokens(data_keys[i], sp)
        want = metrics.matching_scores(w, d.embeddings, d.used, odd=True)
        np.testing.assert_allclose(got["chi_plus"][i], want["chi_plus"], rtol=1e-12)
        np.testing.assert_allclose(got["chi_minus"][i], want["chi_minus"], rtol=1e-12)
