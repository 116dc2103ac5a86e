"""ccdyn.compiling: compiler options less those XLA_FLAGS sets itself or XLA does not know, deferred programs."""

from ccdyn import compiling


def test_block_options_give_way_to_xla_flags(monkeypatch):
    monkeypatch.setattr(compiling, "accepts", lambda options: True)  # as where this jaxlib's XLA has every option
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    assert compiling.block_options(compiling.SLIDING) == compiling.SLIDING
    assert compiling.block_options(None) is None and compiling.block_options({}) is None
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
    assert compiling.block_options(compiling.SLIDING) == {"xla_llvm_disable_expensive_passes": True,
                                                          **compiling.OLDER_EMITTER}
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
                       " --xla_cpu_use_fusion_emitters=false")
    assert compiling.block_options(compiling.SLIDING) is None
    monkeypatch.delenv("XLA_FLAGS")
    assert compiling.block_options(compiling.SLIDING) == compiling.SLIDING


def test_an_option_xla_does_not_know_is_found_by_its_probe(monkeypatch):
    assert compiling.accepts({}) and compiling.accepts(compiling.QUICK)
    assert not compiling.accepts({"xla_ccdyn_no_such_option": True})
    monkeypatch.delenv("XLA_FLAGS", raising=False)  # (the suite's own flags set the older emitter for every program)
    with_it = compiling.block_options(compiling.SLIDING)
    assert with_it in (compiling.SLIDING, compiling.SAMPLING)  # the older emitter kept where XLA has it
    assert (with_it == compiling.SLIDING) == compiling.accepts(compiling.OLDER_EMITTER)
    monkeypatch.setattr(compiling, "accepts", lambda options: False)  # a jaxlib without the older emitter
    assert compiling.block_options(compiling.SLIDING) == compiling.SAMPLING
    assert compiling.block_options(compiling.CERTIFYING) == compiling.QUICK


def test_a_deferred_program_is_the_jitted_function():
    """compiling.jit builds jax.jit(fn) with the options at its first use; its results are the function's (here
    exact: integer arithmetic and a static argument), called or lowered and compiled."""
    import jax.numpy as jnp

    @compiling.jit(compiling.SAMPLING, static_argnames="k")
    def program(x, k):
        return (x * k + 3) % 7

    x = jnp.arange(10)
    want = (x * 5 + 3) % 7
    assert program.__name__ == "program"
    assert (program(x, k=5) == want).all() and (program.lower(x, k=5).compile()(x) == want).all()
