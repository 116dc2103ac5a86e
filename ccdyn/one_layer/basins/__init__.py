"""Basins of attraction of the 1-layer flow over many random initializations (Sec. 3.3).

Pipeline: the engine (:mod:`ccdyn.one_layer.engine`) runs random unit inits to a stop -> cluster the
converged endpoints into distinct optima -> refine every optimum in float64 and certify it
(:func:`ccdyn.one_layer.certify.assess`) -> basin fractions with simultaneous intervals. One module per
role, every public name re-exported here (``basins.run``, ``basins.BasinsConfig``, ...):

- :mod:`~ccdyn.one_layer.basins.config`: :class:`BasinsConfig`, the memory estimate and the tile /
  chunk-size rule, the up-front cost estimate;
- :mod:`~ccdyn.one_layer.basins.job`: :func:`run` (engine, then analysis: arrays) and :func:`run_job`
  (the whole job into a run directory: the files of ``scripts/basins.py``);
- :mod:`~ccdyn.one_layer.basins.stopping`: the stopping rules (``--target_miss``, ``--target_halfwidth``,
  ``--target_unseen``) and the incremental clustering they use;
- :mod:`~ccdyn.one_layer.basins.analysis`: clustering, float64 refinement, certificates, labels;
- :mod:`~ccdyn.one_layer.basins.report`: ``summary.json``, the printed table and its statistics in
  words, the hints per final status and the cost warning (naming flags), the comparison of several runs.
"""

from ccdyn.one_layer.basins.analysis import (
    ANALYSIS_CHUNK,
    KINK_MARGIN,
    analyze,
    basin_mass_on_patterns,
    cluster,
    describe_optima,
    greedy_labels,
    merge_duplicates,
    refine,
)
from ccdyn.one_layer.basins.config import BasinsConfig, cost_estimate, memory_estimate, sized, sizing
from ccdyn.one_layer.basins.job import OUTPUTS, SCRIPT, analyze_result, library_record, open_options, run, run_job
from ccdyn.one_layer.basins.report import (
    AUTO_HINTS,
    COMPARISON_COLUMNS,
    COST_RATIO_WARN,
    COST_WARN_S,
    STATISTICS_COLUMNS,
    STATUS_HINTS,
    comparison_rows,
    cost_warning,
    read_summary,
    statistics,
    statistics_lines,
    summary,
    table,
    table_key,
    uncertified_lines,
    warning_line,
    write_summary,
)
from ccdyn.one_layer.basins.stopping import IncrementalClusters, StopRule, precise_enough, stop_plan, stop_rule

__all__ = ["BasinsConfig", "memory_estimate", "sized", "sizing", "cost_estimate", "cost_warning", "COST_RATIO_WARN",
           "COST_WARN_S", "precise_enough", "IncrementalClusters", "stop_plan", "StopRule", "stop_rule",
           "analyze_result", "statistics", "run", "run_job", "open_options", "library_record", "SCRIPT", "OUTPUTS",
           "cluster", "greedy_labels", "refine", "describe_optima", "merge_duplicates", "basin_mass_on_patterns",
           "analyze", "ANALYSIS_CHUNK", "KINK_MARGIN", "summary", "write_summary", "read_summary", "table_key",
           "statistics_lines", "uncertified_lines", "warning_line", "table", "STATUS_HINTS", "AUTO_HINTS",
           "STATISTICS_COLUMNS",
           "COMPARISON_COLUMNS", "comparison_rows"]
