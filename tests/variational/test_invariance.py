"""ccdyn.variational.invariance and the Thm. 4.2 (T x != x) study and claims: the Eq. 15 closed form
against the autodiff weight step and a jvp, the invariances by construction of T, and the verdict's parts."""

import copy
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from ccdyn import io
from ccdyn.variational import claims
from ccdyn.variational import invariance as inv
from ccdyn.variational import kernel as kr
from ccdyn.variational.studies import thm42_moving

jax.config.update("jax_enable_x64", True)


def _draw(seed=3, n=5, D=7, d=2, M=6):
    k = jax.random.split(jax.random.PRNGKey(seed), 4)
    X, B = jax.random.normal(k[0], (n, D)), jax.random.normal(k[1], (d, M, D))
    nv = jax.random.normal(k[2], (D,))
    return X, B, nv / jnp.linalg.norm(nv), jax.random.uniform(k[3], (n,), minval=0.5, maxval=1.5)


def test_project_out_makes_f_invariant_but_not_its_weight_gradient():
    X, B, n, s = _draw()
    B0 = inv.project_out(B, n)
    TX = inv.kernel_shift(X, n, s)
    assert float(jnp.abs(B0.reshape(-1, X.shape[1]) @ n).max()) < 1e-14
    assert float(kr.invariance_gap(kr.net(B0, X), kr.net(B0, TX))) < 1e-13
    assert float(inv.jacobian_gap(kr.net, B0, X, TX)) > 1e-2


def test_eq15_closed_form_equals_the_weight_step_and_the_jvp():
    X, B, n, s = _draw()
    B0, TX, tau, lr = inv.project_out(B, n), inv.kernel_shift(X, n, s), 0.5, 1e-2
    B1 = kr.gd_net_step(B0, X, tau, lr)
    assert int(inv.gate_flips(B0, B1, jnp.concatenate([X, TX]))) == 0
    step = kr.net(B1, TX) - kr.net(B1, X)  # the gap after the step (it was 0 before)
    pred = inv.eq15_gap_step(B0, X, TX, tau, lr)
    assert float(jnp.abs(pred).max()) > 1e-5  # against a difference of O(1) outputs: rounding ~1e-15
    assert float(jnp.abs(step - pred).max()) < 1e-13
    # the jvp route: the gap's change is -lr (grad f(Tx) - grad f(x)) . grad_w L
    assert abs(lr * float(inv.one_step_condition(B0, X, TX, tau)) - float(jnp.abs(pred).max())) < 1e-12


def test_scaling_keeps_the_normalized_map_and_its_gradient():
    X, B, _, s = _draw()
    TX = inv.scaling(X, s + 0.5)
    assert float(kr.invariance_gap(inv.normalized_net(B, X), inv.normalized_net(B, TX))) < 1e-14
    assert float(inv.jacobian_gap(inv.normalized_net, B, X, TX)) < 1e-14
    assert float(kr.invariance_gap(kr.net(B, X), kr.net(B, TX))) > 1e-2  # the raw f is not invariant
    Bs = inv.train(B, X, 0.5, 0.1, 3)
    assert float(jnp.abs(Bs[0] - kr.gd_net_step(B, X, 0.5, 0.1)).max()) < 1e-15


@pytest.fixture(scope="module")
def record():  # the committed record (the study's run is the slow script test)
    return io.read_json(Path(__file__).resolve().parents[2] / "results/simclr_var/thm42_moving/thm42_moving.json")


def test_study_and_verdict(record):
    (c,) = claims.thm42_moving_claims(record)
    assert c == record["claims"][0]
    assert c["id"] == "simclr-thm-4.2-moving-t" and c["verdict"] == "partly"
    assert [c["parts"][k] for k in c["parts"]] == [True, True, False]
    assert record["orthogonal"]["n_along_data"] < 1e-12 and record["generic"]["n_along_data"] > 0.1
    # the checks can fail: a gap in the scaling case, a wrong Eq. 15, an orthogonal case that loses invariance
    bad = copy.deepcopy(record)
    bad["scaling"]["gaps"][-1] = 1e-6
    bad["generic"]["eq15_abs_diff"] = 1e-3 * bad["generic"]["gap_one_step"]
    bad["orthogonal"]["gaps"][-1] = 1e-3
    (b,) = claims.thm42_moving_claims(bad)
    assert [b["parts"][k] for k in b["parts"]] == [False, False, True]


def test_study_needs_a_direction_off_the_inputs():
    with pytest.raises(ValueError, match="must exceed"):
        thm42_moving.run(thm42_moving.Thm42Config(n=6, D=6))
