"""ccdyn.compiling.block_options: a method's compiler options, less those XLA_FLAGS sets itself."""

from ccdyn import compiling


def test_block_options_give_way_to_xla_flags(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    assert compiling.block_options(compiling.SLIDING) == compiling.SLIDING
    assert compiling.block_options(None) is None and compiling.block_options({}) is None
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
    assert compiling.block_options(compiling.SLIDING) == {"xla_llvm_disable_expensive_passes": True}
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true")
    assert compiling.block_options(compiling.SLIDING) is None
    monkeypatch.delenv("XLA_FLAGS")
    assert compiling.block_options(compiling.SLIDING) == compiling.SLIDING
