"""JAX's platform list for the scripts: :func:`skip_absent_tpu` names the platforms JAX would try,
less the TPU when no TPU library or chip is present, so that a CPU or GPU run does not log JAX's
``Unable to initialize backend 'tpu': ... libtpu.so ...`` probe failure.

JAX (0.10) tries every registered backend when ``jax_platforms`` is unset; the TPU backend is the one
registered to fail quietly, which it does by logging that line. Setting ``jax_platforms`` is what JAX
documents to choose the backends (``JAX_PLATFORMS=cpu``); the list set here is JAX's own registrations
(the PJRT plugins, e.g. CUDA, included) in JAX's priority order, so the default device is the one JAX
would pick. A ``JAX_PLATFORMS`` set by the user (even empty), a ``jax_platforms`` set in code, a TPU
library or TPU chip, or backends already started leave JAX as it is.
"""

from __future__ import annotations

import os

import jax

__all__ = ["skip_absent_tpu"]


def skip_absent_tpu() -> str | None:
    """Set ``jax_platforms`` to JAX's registered platforms less ``tpu`` when no TPU can be there;
    returns the list set, or None when JAX is left as it is (see the module docstring)."""
    # jax.config.read refuses a flag with a context manager, as jax_platforms is; its attribute is made at run time
    if "JAX_PLATFORMS" in os.environ or jax.config.jax_platforms:  # type: ignore[attr-defined]
        return None
    try:  # JAX's registry of backends has no public accessor; any change there leaves JAX's default
        from jax._src import hardware_utils, xla_bridge
        from jax._src.cloud_tpu_init import get_tpu_library_path

        if xla_bridge.backends_are_initialized():
            return None
        if get_tpu_library_path() is not None or hardware_utils.num_available_tpu_chips_and_device_id()[0] > 0:
            return None
        xla_bridge._discover_and_register_pjrt_plugins()
        registered = sorted(xla_bridge._backend_factories.items(), key=lambda kv: -kv[1].priority)
        names = [name for name, _ in registered if name != "tpu"]
    except (ImportError, AttributeError, TypeError):
        return None
    if "cpu" not in names:
        return None
    platforms = ",".join(names)
    jax.config.update("jax_platforms", platforms)
    return platforms
