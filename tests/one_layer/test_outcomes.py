"""One outcome style (ccdyn.one_layer.outcomes.Outcome): the kink refinement's and the saddle refinement's
codes are IntEnums with a key and a text, like the engine's Status, with the codes they had."""

import jax.numpy as jnp
import numpy as np

from ccdyn.one_layer import engine, kinks, saddles
from ccdyn.one_layer.outcomes import Outcome


def test_refinement_codes_keep_their_values_and_gain_key_and_text():
    assert [int(s) for s in kinks.RefineStatus] == [0, 1, 2, 3, 4, 5]
    assert kinks.RefineStatus.CONVERGED == 1 and kinks.RefineStatus(3).text == "iteration limit"
    assert kinks.RefineStatus.TOO_MANY_ACTIVE.key == "too_many_active"
    assert kinks.RefineStatus.CYCLE.text.startswith("active set cycles")
    assert [int(s) for s in saddles.SaddleStatus] == [0, 1, 2, 3]
    assert saddles.SaddleStatus(2).text == "non-finite" and saddles.SaddleStatus.NOT_CONVERGED.key == "not_converged"
    for vocabulary in (kinks.RefineStatus, saddles.SaddleStatus, engine.Status):
        assert all(isinstance(s.key, str) and isinstance(s.text, str) and s.text for s in vocabulary)


def test_an_outcome_member_is_an_int_in_jitted_code_and_numpy():
    class Toy(Outcome):
        FIRST = 0
        SECOND_ONE = 1, "the second"

    assert Toy.FIRST.text == "first" and Toy.SECOND_ONE.text == "the second" and Toy.SECOND_ONE.key == "second_one"
    got = jnp.where(jnp.array([True, False]), Toy.SECOND_ONE, Toy.FIRST)
    np.testing.assert_array_equal(np.asarray(got), [1, 0])
    assert np.array([1, 0], np.int32)[0] == Toy.SECOND_ONE and Toy(1) is Toy.SECOND_ONE
