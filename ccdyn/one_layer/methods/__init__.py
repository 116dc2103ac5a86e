"""The 1-layer dynamics methods, one module each, behind one interface (:mod:`.base`).

:data:`REGISTRY` maps each ``Dynamics.method`` name to a function ``(act, dyn) -> Method`` (most return a
fixed value; ``flow`` picks the sliding variant with ReLU). To add a method: a module here defining its
:class:`~ccdyn.one_layer.methods.base.Method` (``init``, ``step`` returning a
:class:`~ccdyn.one_layer.methods.base.Proposal`, optional ``finish`` and ``check``, its ``knobs``) and one
line in :data:`REGISTRY`; the engine, the runner (chunks, tiles, devices, the values axis, resume) and
``--method`` pick it up (docs/layout.md, "Adding a dynamics method").
"""

from __future__ import annotations

from ccdyn.one_layer.methods import auto, euler_halving, flow, power, sliding_flow
from ccdyn.one_layer.methods.base import KINKED, Method, Proposal, Rerun, Watch

__all__ = ["REGISTRY", "select", "Method", "Proposal", "Rerun", "Watch", "KINKED", "power", "flow", "sliding_flow",
           "euler_halving", "auto"]

REGISTRY = {
    "power": lambda act, dyn: power.POWER,
    "flow": flow.choose,
    "euler_halving": lambda act, dyn: euler_halving.EULER_HALVING,
    "auto": auto.choose,
}


def select(dyn, act=None) -> Method:
    """The method ``dyn.method`` names, for activation ``act`` (``ValueError``: unknown name)."""
    if dyn.method not in REGISTRY:
        raise ValueError(f"method={dyn.method!r} must be one of {', '.join(REGISTRY)}")
    return REGISTRY[dyn.method](act, dyn)
