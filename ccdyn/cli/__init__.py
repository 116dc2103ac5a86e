"""What the absl scripts share, one module per job; scripts use ``from ccdyn import cli`` and the
names re-exported here. Scripts read their flags only in ``main`` and hand the values to these helpers.

- :mod:`~ccdyn.cli.parsing`: list flags and validators (:func:`floats`, :func:`ints`,
  :func:`register_numbers`, :func:`register_subset`, :func:`register_unique`, :func:`define_seed`, :data:`SEED_MAX`).
- :mod:`~ccdyn.cli.contract`: :func:`start` (``app.run`` with the failure contract: one ``error:``
  line, exit status 2, the open run directory marked failed; SIGINT / SIGTERM: one line, exit 130 /
  143), :func:`fail`, :func:`or_fail`, and the start-up checks :func:`check_memory`,
  :func:`check_memory_of` (naming the flag that drives the estimate; :func:`sizes_of` its flag values),
  :func:`check_tolerance`.
- :mod:`~ccdyn.cli.budget`: :func:`check_counts`, the start-up check of a script's counts (steps, epochs,
  draws, sets): a compiled loop's int32 limit (:data:`LOOP_MAX`), a lower bound of the time against
  ``CCDYN_MAX_HOURS`` (7 days), the memory they need; one line naming the flag that drives it.
- :mod:`~ccdyn.cli.record`: the run record (:func:`run_record`, :func:`with_run_record`) and the run
  directory (:func:`define_run_flags`, :func:`open_run_dir`, :func:`finish`).
- :mod:`~ccdyn.cli.files`: files from other runs (:func:`read_run_json`: checked before anything is
  written) and files outside a run directory (:func:`define_overwrite`, :func:`check_new_files`).
- :mod:`~ccdyn.cli.progress`: :func:`log` and :func:`progress` on stderr.
- :mod:`~ccdyn.cli.platforms`: :func:`skip_absent_tpu`, run on import: JAX's platform list without
  the TPU when none can be there (no ``Unable to initialize backend 'tpu'`` line on CPU/GPU runs).
- :mod:`~ccdyn.cli.compile_cache`: the persistent compilation cache :func:`start` turns on
  (``CCDYN_COMPILE_CACHE``, default ``~/.cache/ccdyn/xla``; empty: none).
- :mod:`~ccdyn.cli.multihost`: several processes (:func:`define_multihost_flags`,
  :func:`start_processes`, :func:`agree_processes`, :func:`open_run_of_process_0`).

This is the scripts' layer: it may print and exit; the rest of the library does neither. It is
shared by every paper part and imports none; a part's own script flags live in the part (the 1-layer
data and basins flags: :mod:`ccdyn.one_layer.script_flags`).
"""

from ccdyn.cli.budget import LOOP_MAX, check_counts
from ccdyn.cli.contract import check_memory, check_memory_of, check_tolerance, fail, or_fail, sizes_of, start
from ccdyn.cli.files import check_new_files, define_overwrite, read_run_json
from ccdyn.cli.multihost import agree_processes, define_multihost_flags, open_run_of_process_0, start_processes
from ccdyn.cli.parsing import (
    SEED_MAX,
    define_seed,
    floats,
    ints,
    register_numbers,
    register_subset,
    register_unique,
    seed_range,
)
from ccdyn.cli.platforms import skip_absent_tpu
from ccdyn.cli.progress import log, progress
from ccdyn.cli.record import define_run_flags, finish, finish_ledger_run, open_run_dir, run_record, with_run_record

__all__ = ["LOOP_MAX", "check_counts", "floats", "ints", "register_numbers", "register_subset", "register_unique",
           "SEED_MAX", "define_seed", "seed_range", "start", "fail", "or_fail", "check_memory", "check_memory_of",
           "sizes_of", "check_tolerance", "run_record", "with_run_record", "define_run_flags", "open_run_dir", "finish",
           "finish_ledger_run",
           "log", "progress", "define_multihost_flags", "start_processes", "agree_processes", "open_run_of_process_0",
           "read_run_json", "define_overwrite", "check_new_files", "skip_absent_tpu"]

skip_absent_tpu()  # before any script touches a device; a JAX_PLATFORMS set by the user is kept
