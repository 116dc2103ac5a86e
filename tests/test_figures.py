"""Every part's figures.py: each function, called on a tiny record, returns a matplotlib Figure whose
axes carry labels (every panel: an x label or named x ticks and a y label, its own or that of the panel
whose axis it shares; image grids: row labels, weight images a labelled colour bar); a log axis of values
is labelled at the values only. The cases must cover every name in each ``__all__``, so a new figure
function without a case fails here."""

import matplotlib.figure
import numpy as np
import pytest

from ccdyn.deep import figures as deep_figures
from ccdyn.one_layer import figures as one_layer_figures
from ccdyn.plotting import plt
from ccdyn.two_layer import figures as two_layer_figures
from ccdyn.variational import figures as variational_figures

MODULES = (one_layer_figures, two_layer_figures, variational_figures, deep_figures)
IMAGE_GRIDS = {"weights_figure", "mnist_filters_figure", "cluster_snapshots_figure"}  # row labels only
WEIGHT_IMAGES = {"weights_figure", "mnist_filters_figure"}  # and a colour bar

_theta = np.linspace(-np.pi, np.pi, 33)[:-1]
_e = np.cos(2 * _theta) + 1.5
_mean_ci = {"mean": [1.0, 2.0, 3.0], "lo": [0.5, 1.5, 2.5], "hi": [1.5, 2.5, 3.5]}
_track = {"id": 0, "fraction": [0.6, 0.5], "optimum": [0, 0], "energy": [1.0, 1.1], "overlap": [0.99, 0.98],
          "stable": [True, False], "ci95": [[0.5, 0.7], [0.4, 0.6]], "merges_into": None, "dies_at": None,
          "born_from": None}
_chi = {"chi_plus": {"mean": 0.5, "std": 0.1}, "chi_minus": {"mean": 0.2, "std": 0.05}}
_scores = {k: np.array([0.3, 0.4]) for k in ("hf", "max_cos", "dead", "max_cos_live")}
_grid_row = {"vary": "width", "model": "net1", "ratio_end": {"mean": 2.0, "ci": [1.5, 2.5]}, "kept_at_end": 0.5,
             "keep_ratio": 1.5}

_SADDLES = {"optima": [{"energy": 0.32, "fraction": 0.5, "ci95": [0.4, 0.6], "stable": True, "pattern": 0},
                       {"energy": 0.31, "fraction": 0.3, "ci95": [0.2, 0.4], "stable": True, "pattern": 1},
                       {"energy": 0.30, "fraction": 0.2, "ci95": [0.1, 0.3], "stable": False, "pattern": None}],
            "merges": [[0.25, 0, 1, [0], [1]], [0.22, 1, 2, [0, 1], [2]]],
            "landscape": "E_alpha",
            "searches": [{"path_arc": [0.0, 0.5, 1.0], "path_energies": [0.32, 0.25, 0.31], "energy": 0.25,
                          "certified": True, "string": {"climbing_image": 1}}]}

CASES = {
    "landscape_figure": lambda: one_layer_figures.landscape_figure(
        _theta, {"relu": _e}, {"relu": (np.array([0.0, np.pi]), np.array([2.5, 2.5]), np.array([False, True]))},
        [0.0, 1.0]),
    "basins_figure": lambda: one_layer_figures.basins_figure(
        [{"fraction": 0.6, "ci95": [0.5, 0.7], "stable": True, "pattern": 0, "overlap": 0.99, "energy": 1.2},
         {"fraction": 0.4, "ci95": [0.3, 0.5], "stable": False, "pattern": None, "overlap": 0.1, "energy": 0.8}]),
    "power_iteration_figure": lambda: one_layer_figures.power_iteration_figure({0.0: np.full((2, 5), 1e-3)}),
    "rotation_augmentation_figure": lambda: one_layer_figures.rotation_augmentation_figure(
        _theta, {"0": _e, "1": np.full_like(_e, 2.0)}, {"relu": ([2, 0], [3, 1])}, ["0", "1"],
        {"relu": ([4, 8], [1e-3, 1e-5]), "linear": ([4, 8], [0.0, 0.0])}),
    "orbit_basins_figure": lambda: one_layer_figures.orbit_basins_figure(
        {"none": [{"fractions": [0.5, 0.4], "ci95": [[0.4, 0.6], [0.3, 0.5]], "size": 2, "expected_size": 2}]}),
    "roughness_figure": lambda: one_layer_figures.roughness_figure({"run": [(0.4, 0.1, True), (0.2, 0.5, False)]}),
    "continuation_figure": lambda: one_layer_figures.continuation_figure(
        {"values": [0.0, 1.0], "param": "ortho_eps", "tracks": [_track]}),
    "disconnectivity_figure": lambda: one_layer_figures.disconnectivity_figure(_SADDLES),
    "saddle_paths_figure": lambda: one_layer_figures.saddle_paths_figure(_SADDLES),
    "barriers_along_figure": lambda: one_layer_figures.barriers_along_figure(
        {"param": "ortho_eps", "per_value": [{"value": 0.0, "n_optima": 3, "barrier_min": 0.05, "barrier_median": 0.07,
                                              "barrier_max": 0.08}, {"value": 0.3, "n_optima": 1}]}),
    "matching_figure": lambda: two_layer_figures.matching_figure(
        {"relu": {(1, 1): _chi, (1, 2): _chi}, "linear": {(1, 1): _chi}}, [1, 2], [1]),
    "weights_figure": lambda: two_layer_figures.weights_figure(
        {"seed 0": (np.zeros((2, 3, 4)), np.eye(2, 4, dtype=bool))}),
    "blowup_figure": lambda: two_layer_figures.blowup_figure(
        {0.5: {"t": np.linspace(0, 1, 201), "rk4": np.linspace(0.5, 2, 201), "closed_form": np.linspace(0.5, 2, 201),
               "t_star": 1.1}}, np.geomspace(0.1, 1, 5), {1.0: np.geomspace(2, 0.5, 5)}),
    "mnist_filters_figure": lambda: two_layer_figures.mnist_filters_figure(np.arange(96.0).reshape(2, 3, 16), 4),
    "mnist_scores_figure": lambda: two_layer_figures.mnist_scores_figure(
        {"final": {"no_aug": _scores, "aug": _scores}, "init": {"no_aug": _scores}}),
    "fig3_figure": lambda: variational_figures.fig3_figure(
        {"taus": [0.1, 0.2], "Ks": [1, 2, 3], "loss": [[3.0, 2.0, 1.9], [3.5, 2.5, 2.4]], "plateau": [1.9, 2.4],
         "min_sq_distance": [None, 4.0, 3.0], "threshold": [3.0, float("nan")], "rel_tol": 1e-3,
         "fit": {"slope": 1.0, "intercept": 0.0, "r2": 1.0}}),
    "mc_rate_figure": lambda: variational_figures.mc_rate_figure([16, 64], [0.1, 0.05],
                                                                 {"intercept": 0.0, "slope": -0.5}),
    "cluster_curves_figure": lambda: variational_figures.cluster_curves_figure(
        {"net1": {"iters": [0, 1, 2], "ratio": _mean_ci, "silhouette": _mean_ci, "uniformity": _mean_ci}}, 2.0),
    "cluster_snapshots_figure": lambda: variational_figures.cluster_snapshots_figure(
        {"net1": {"iters": [0, 5], "points": [np.eye(4, 2), np.eye(4, 2)], "labels": [0, 1, 2, 3]}}),
    "cluster_grid_figure": lambda: variational_figures.cluster_grid_figure(
        [dict(_grid_row, value=8), dict(_grid_row, value=32), dict(_grid_row, vary="small cluster size", value=4)]),
    "ddn_op_figure": lambda: deep_figures.ddn_op_figure({"width": {"|N| = 2": {0: ([1, 2], [0.5, 0.6])}}}, [0]),
}


def test_every_figure_function_has_a_case():
    names = {n for m in MODULES for n in m.__all__}
    assert names == set(CASES), f"without a case: {names - set(CASES)}; unknown: {set(CASES) - names}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_figure_is_returned_with_labelled_axes(name):
    fig = CASES[name]()
    try:
        assert isinstance(fig, matplotlib.figure.Figure), f"{name} returned {type(fig).__name__}"
        assert any(a.get_ylabel() for a in fig.axes), f"{name}: no axis has a y label"
        if name not in IMAGE_GRIDS:
            assert any(a.get_xlabel() or any(t.get_text() for t in a.get_xticklabels()) for a in fig.axes), \
                f"{name}: no axis has an x label (or named x ticks)"
            plotted = [a for a in fig.axes if a.has_data() and not _is_colorbar(a)]
            assert plotted, name
            for a in plotted:  # every panel says what its axes are (itself, or the panel whose axis it shares)
                assert _labelled(a, fig, "x"), f"{name}: a panel without x label"
                assert _labelled(a, fig, "y"), f"{name}: a panel without y label"
        if name in WEIGHT_IMAGES:  # one colour bar that says what the colours are
            bars = [a for a in fig.axes if _is_colorbar(a)]
            assert len(bars) == 1 and bars[0].get_ylabel(), f"{name}: no labelled colour bar"
    finally:
        plt.close(fig)


def _labelled(ax, fig, xy: str) -> bool:
    own = lambda a: getattr(a, f"get_{xy}label")() or any(t.get_text() for t in getattr(a, f"get_{xy}ticklabels")())
    shared = getattr(ax, f"get_shared_{xy}_axes")()
    return own(ax) or any(own(b) for b in fig.axes if b is not ax and shared.joined(ax, b))


def _is_colorbar(ax) -> bool:
    return getattr(ax, "_colorbar", None) is not None  # matplotlib marks the axes a colour bar is drawn in


def _labelled_ticks(axis) -> list:
    """The x positions whose tick labels are drawn (major and minor), after the figure is drawn."""
    ticks = axis.get_major_ticks() + axis.get_minor_ticks()
    return sorted(t.get_loc() for t in ticks if t.label1.get_visible() and t.label1.get_text() and t.get_visible())


@pytest.mark.parametrize("betas", [[1, 5], [1, 2, 3], [0.5, 1, 5, 50]])
def test_log_axis_is_labelled_only_at_the_values(betas):
    chi = {(1, b): _chi for b in betas}
    fig = two_layer_figures.matching_figure({"relu": chi}, betas, [1])
    try:
        fig.canvas.draw()
        for ax in fig.axes:
            assert ax.get_xscale() == "log"
            shown = [x for x in _labelled_ticks(ax.xaxis) if ax.get_xlim()[0] <= x <= ax.get_xlim()[1]]
            if shown:  # the shared x axis hides the top row's labels
                assert shown == sorted(betas), (betas, shown)
        assert _labelled_ticks(fig.axes[-1].xaxis)
    finally:
        plt.close(fig)


def test_figures_of_runs_with_no_finite_value_draw():
    """A kernel grid whose seeds all went non-finite (kernel_dynamics --tau=1e-10) and roughness runs with no
    resolved radius (no point to plot): both figures draw (log axes over no data failed at drawing: "Data
    cannot be log-scaled"; an empty legend was numpy's raw "No artists with labels" warning)."""
    import io
    import warnings

    bad = dict(_grid_row, ratio_end={"mean": float("nan"), "ci": None}, kept_at_end=0.0)
    rows = [dict(bad, vary=k, model=m, value=v) for k, v in (("width", 8), ("tau", 1e-10)) for m in ("net1", "points")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fig in (variational_figures.cluster_grid_figure(rows), one_layer_figures.roughness_figure({"relu": []})):
            try:
                fig.savefig(io.BytesIO(), format="png")
                assert any(t.get_text() for a in fig.axes for t in a.texts)  # says why the panel is empty
            finally:
                plt.close(fig)
