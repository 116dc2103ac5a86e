"""The study records on small configurations: their verdicts come out of the measured numbers (slow:
they compile the whole of Sec. 2-4)."""

import pytest

from ccdyn.verdicts import verdict_word
from ccdyn.variational.studies import kernel, sphere


@pytest.mark.slow
def test_sphere_study_small():
    rec = sphere.sphere_study(sphere.SphereConfig(taus=(0.1, 0.2, 0.3), Ks=tuple(range(1, 33)), lemma_Ks=(2, 3),
                                                  lemma_taus=(0.05, 0.5), hessian_taus=(0.2,), n_dirs=256))
    assert verdict_word(rec["fig3"]["verdict"]) == "holds"
    assert rec["fig3"]["fit"]["slope"] > 0 and rec["fig3"]["indicator_readings"]["atom_argmin_K"] == 1
    assert verdict_word(rec["thm32"]["verdict"]) == "holds" and "S2 cube" in rec["thm32"]["saddles"]
    assert verdict_word(rec["propA1"]["verdict"]) == "partly"  # stationary, but the constant map is a maximum
    assert rec["prop21"]["verdict"]["parts"]["two inputs, one latent measure: equal losses (1e-12)"]


@pytest.mark.slow
def test_kernel_study_small():
    rec = kernel.kernel_study(kernel.KernelConfig(mc_Ms=(64, 256, 1024, 4096), mc_seeds=32, cor_Ms=(64, 1024)))
    words = {v["claim"].split(":")[0]: verdict_word(v) for v in rec["verdicts"]}
    assert words["Prop. 4.3"] == words["Prop. 4.1"] == words["Thm. 4.2"] == "holds"
    assert abs(rec["mc"]["fit"]["slope"] + 0.5) < 0.1
