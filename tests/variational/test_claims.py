"""ccdyn.variational.claims on the committed results/simclr_var JSON: every verdict the studies wrote
comes out again from the numbers beside it (moving the verdicts out of the studies changed none), and
the ledger holds one record per verdict with unique ids."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from ccdyn import io
from ccdyn.variational import claims

RESULTS = Path(__file__).resolve().parents[2] / "results" / "simclr_var"


@pytest.fixture(scope="module")
def records():
    return tuple(io.read_json(RESULTS / p) for p in ("sphere/sphere.json", "kernel/kernel.json", "kernel/clusters.json"))


@pytest.mark.parametrize("key, fn", [("prop21", claims.prop21_verdict), ("fig3", claims.fig3_verdict),
                                     ("thm32", claims.thm32_verdict), ("propA1", claims.propA1_verdict),
                                     ("lemmaA2", claims.lemmaA2_verdict)])
def test_sphere_verdicts_again(records, key, fn):
    sphere = records[0]
    assert io.as_json(fn(sphere[key])) == sphere[key]["verdict"]


def test_kernel_and_cluster_verdicts_again(records):
    _, kernel, clusters = records
    assert io.as_json(claims.kernel_verdicts(kernel)) == kernel["verdicts"]
    c = clusters["config"]
    cfg = SimpleNamespace(dims=tuple(c["dims"]), at=tuple(c["at"]), share=c["share"])
    again = claims.cluster_verdicts(cfg, clusters["summaries"], clusters["grid"])
    assert io.as_json(again) == clusters["verdicts"]


def test_ledger(records):
    led = claims.ledger(*records)
    n = 5 + len(records[1]["verdicts"]) + len(records[2]["verdicts"])
    assert len(led) == n == len({r["id"] for r in led})
    assert [r["verdict"] for r in led[:5]] == ["partly", "holds", "holds", "partly", "holds"]
    assert {r["check"] for r in led[5:11]} == {"autodiff", "sampled estimate", "simulation against a closed form",
                                                "closed form"}
    assert claims.ledger(sphere=records[0])[0]["id"] == "simclr-prop-2.1"
