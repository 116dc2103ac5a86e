"""ccdyn.one_layer.studies.kernel_lemmas and its two ledger records on a small run."""

from ccdyn.one_layer import claims
from ccdyn.one_layer.studies import kernel_lemmas

CFG = kernel_lemmas.KernelLemmasConfig(taus=(2.0,), degrees=(10, 40), batch_sizes=(32, 512), n_batches=4)


def test_small_run_and_verdicts():
    rec = kernel_lemmas.run(CFG)
    assert [r[:2] for r in rec["rows"]] == [[2.0, 10], [2.0, 40]]
    assert rec["rows"][1][3] < 1e-13 and rec["rows"][1][5] < 1e-12 and rec["rows"][0][3] > rec["rows"][1][3]
    assert [r[1] for r in rec["batch_rows"]] == [32, 512] and rec["support_points"] == 16 and rec["views"] == 4
    lemma1, lemma2 = claims.kernel_lemmas_claims(rec)
    assert (lemma1["id"], lemma1["verdict"]) == ("core-lemma1", "holds")
    assert lemma2["id"] == "core-lemma2-kernel" and lemma2["numbers"]["fall_smallest_to_largest_N"]["2.0"] > 2
    assert lemma2["verdict"] == "holds"
    assert "| tau | batch_size |" in kernel_lemmas.markdown(rec)
