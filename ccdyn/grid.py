"""One runner for the grids of settings x seeds: the token-generator grid of the 2-layer part (Sec. 5,
App. E.2; :mod:`ccdyn.two_layer.studies.token_grid`, ``scripts/two_layer.py``) and the HLTM grid of
Dual Deep Networks (Sec. 7, Tables 4 and 6; :mod:`ccdyn.deep.studies.hltm_grid`, ``scripts/hltm.py``).
The parts say what a setting is, how the seeds of one setting are trained and which columns their
tables have; this module does the rest, the same way for both.

- A grid config is a frozen dataclass with the :class:`Axes` mixin: its ``AXES`` pair each grid field
  (a tuple of values) with the setting field it fills, in product order; :meth:`Axes.settings` is every
  combination (the last axis varies fastest) and :meth:`Axes.run_config` every other field, which is
  all that determines a setting's numbers (the run directory's config: ``--resume`` may add settings,
  never change seeds or training).
- :func:`seed_keys`: seed s of every setting uses ``fold_in(PRNGKey(seed), s)`` (optionally split into
  independent streams), so the settings of one seed are paired; the seeds of a setting are trained
  together, vmapped, by the part.
- :func:`run` trains a grid into a run directory (:class:`ccdyn.rundir.RunDir`): a setting's record is
  ``runs/<tag>.json`` stamped with the run's fingerprint (:func:`ccdyn.rundir.write_stamped`, arrays
  beside it as ``<tag>.weights.npz``), the unit of resume (:func:`resume_plan`); the settings still to
  train are spread over the processes of a multi-process run (setting i on process i mod P,
  :func:`ccdyn.parallel.spread`) and process 0 alone writes.
- :func:`table`: the (headers, rows) of a results CSV or printed table from a part's columns.

Files are touched only through :mod:`ccdyn.rundir`; progress lines go to the caller's ``log``.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import pickle
import time
from typing import TYPE_CHECKING, Any, ClassVar

import jax
import numpy as np

from ccdyn import compiling, parallel, rundir

__all__ = ["RUNS", "Axes", "seed_keys", "resume_plan", "run", "table"]

RUNS = "runs"  # the folder of the per-setting records inside the run directory


class Axes:
    """Mixin of a frozen dataclass grid config. Subclasses set ``SETTING`` (the setting class, with a
    file-name-safe ``tag``) and ``AXES``: ((grid field, setting field), ...) in product order."""

    SETTING: ClassVar[Any] = None
    AXES: tuple = ()
    if TYPE_CHECKING:  # a subclass is a dataclass (what dataclasses.asdict needs)
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def settings(self) -> list:
        """Every combination of the axes' values as a ``SETTING``; the last axis varies fastest."""
        fields = [f for _, f in self.AXES]
        values = itertools.product(*(getattr(self, a) for a, _ in self.AXES))
        return [self.SETTING(**dict(zip(fields, v))) for v in values]

    def run_config(self) -> dict:
        """Every field but the axes: what determines each setting's numbers (a setting's result does not
        depend on which other settings are in the grid). The run directory's ``config.json``."""
        axes = {a for a, _ in self.AXES}
        return {k: v for k, v in dataclasses.asdict(self).items() if k not in axes}


@functools.partial(jax.jit, static_argnames=("seed", "n_seeds", "streams"), compiler_options=compiling.QUICK)
def seed_keys(seed: int, n_seeds: int, streams: int = 0):
    """Keys of seeds 0 .. n_seeds-1: ``fold_in(PRNGKey(seed), s)``, (n_seeds, 2); with ``streams`` = k,
    the k independent streams ``split(fold_in(PRNGKey(seed), s), k)`` of every seed, a tuple of k
    (n_seeds, 2) arrays. Seed s's keys do not depend on ``n_seeds``."""
    keys = jax.vmap(lambda s: jax.random.fold_in(jax.random.PRNGKey(seed), s))(np.arange(n_seeds))
    if not streams:
        return keys
    split = jax.vmap(lambda k: jax.random.split(k, streams))(keys)
    return tuple(split[:, j] for j in range(streams))


def resume_plan(tags, run_files, *, resume: bool, suffixes=(".json",)) -> list:
    """Per setting (its ``tag``), whether its earlier result is kept (True) or it is trained (False).

    ``run_files``: the names of the files in the run's ``runs/`` folder; a setting is finished when
    ``<tag><suffix>`` exists for every suffix (the record ``.json``, and ``.weights.npz`` when weights
    are asked for). Without ``resume`` every setting is trained. A setting trained earlier in the same
    list counts as finished for the ones after it (a tag listed twice is trained once).
    """
    names, plan = set(run_files), []
    for tag in tags:
        needed = [tag + s for s in suffixes]
        keep = bool(resume and all(n in names for n in needed))
        plan.append(keep)
        if not keep:
            names.update(needed)
    return plan


def run(run_dir, settings, train, *, resume: bool, weights: bool = False, log=None) -> list | None:
    """Trains the settings of a grid that are not finished in ``run_dir`` and returns every record.

    Args:
      run_dir: the open :class:`ccdyn.rundir.RunDir` on process 0 (``runs/`` is made in it), None on the
        other processes of a multi-process run.
      settings: the grid's settings, each with a file-name-safe ``tag``.
      train: ``train(i)`` trains every seed of setting i on this process's devices and returns
        ``(record, arrays)``: a dict (numpy values allowed) and, with ``weights``, a dict of arrays
        written as ``runs/<tag>.weights.npz`` (else None). The record is written with ``wall_s`` (the
        seconds ``train`` took) and the run's ``fingerprint`` added.
      resume: keep the records of the finished settings (:func:`resume_plan`).
      log: called with one line per kept setting.

    Returns:
      On process 0 the records in the order of ``settings`` (as written, or as read back for a kept
      setting); None on the other processes.

    Raises:
      ccdyn.rundir.RunDirError: a kept record is unreadable, belongs to another run or holds another
        setting than the one its file name says (its ``"setting"`` field); found before
        anything is trained, and the other processes stop too.
    """
    tags, n = [s.tag for s in settings], len(settings)
    first = {t: tags.index(t) for t in tags}
    records: dict[int, dict] = {}
    error, plan = None, [False] * n
    if run_dir is not None:
        folder = run_dir.path / RUNS
        folder.mkdir(exist_ok=True)
        try:
            plan = resume_plan(tags, [p.name for p in folder.iterdir()], resume=resume,
                               suffixes=(".json", ".weights.npz") if weights else (".json",))
            for i in map(int, np.flatnonzero(plan)):
                if plan[first[tags[i]]]:  # not a repeat of a setting trained in this run
                    records[i] = rundir.read_stamped(folder / f"{tags[i]}.json", run_dir.fingerprint,
                                                     _as_dict(settings[i]))
                    if log is not None:
                        log(f"[{i + 1}/{n}] {tags[i]}: kept from an earlier run")
        except (rundir.RunDirError, OSError) as e:
            error = e
    got = parallel.broadcast_from_0(np.asarray([error is not None, *plan], np.int32))
    if error is not None:
        raise error
    if got[0]:
        raise rundir.RunDirError("process 0 could not read the records of the earlier run (see its error)")

    def work(i):
        t0 = time.time()
        record, arrays = train(i)
        return pickle.dumps(({**record, "wall_s": time.time() - t0}, arrays))

    for i, payload in parallel.spread([i for i in range(n) if not got[1 + i]], work):
        if run_dir is not None:
            record, arrays = pickle.loads(payload)
            if _as_dict(settings[i]) is not None:  # what a resume checks the record against
                record = {**record, "setting": _as_dict(settings[i])}
            records[i] = rundir.write_stamped(run_dir, run_dir.path / RUNS / tags[i], record, arrays)
    if run_dir is None:
        return None
    return [records[i] if i in records else records[first[tags[i]]] for i in range(n)]


def _as_dict(setting):
    """A setting as the ``"setting"`` field its record carries (None: not checked, for non-dataclasses)."""
    return dataclasses.asdict(setting) if dataclasses.is_dataclass(setting) and not isinstance(setting, type) else None


def table(rows, columns) -> tuple:
    """(headers, body) of a results table: ``columns`` is ((header, cell), ...) and ``cell(row)`` the
    value of that column in a row."""
    return [h for h, _ in columns], [[cell(r) for _, cell in columns] for r in rows]
