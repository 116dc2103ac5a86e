"""The catalogue of the claims ledger: every claim of the three papers (and ccdyn's own accuracy claims), in
paper order, with how it is covered (:class:`Records`, :class:`Tested` or :class:`NotChecked`).

Pure data: :mod:`ccdyn.ledger` (which re-exports every name here) reads the committed results against it and
writes ``results/CLAIMS.md``; to register a new check, add a :class:`Records` pattern to its entry here and its
claims function and files to :data:`ccdyn.ledger.SOURCES`.
"""

from __future__ import annotations

import dataclasses

__all__ = ["Records", "Tested", "NotChecked", "Claim", "CATALOGUE", "READINGS"]

READINGS = "docs/readings.md"  # the readings of the papers ccdyn takes, anchored per claim


@dataclasses.dataclass(frozen=True)
class Records:
    """Covered by the collected records whose id matches ``pattern`` (a regular expression, full match);
    ``reading`` (a more specific anchor) replaces the records' own; ``note`` applies to records without one.
    ``evidence``: pairs (id regex, full match; evidence dict, :data:`ccdyn.verdicts.EVIDENCE_KEYS`) that
    update the evidence of the records they match, for what the catalogue knows about a check's scope
    (a special case, true by construction, an estimate of a certificate, a claim the paper does not make)."""
    pattern: str
    reading: str | None = None
    note: str | None = None
    evidence: tuple = ()


@dataclasses.dataclass(frozen=True)
class Tested:
    """Checked only in the fast test suite: the test node ids and the check kind; ``evidence`` as for
    :class:`Records` (one dict: the tests' scope)."""
    check: str
    nodes: tuple
    note: str | None = None
    reading: str | None = None
    evidence: dict | None = None


@dataclasses.dataclass(frozen=True)
class NotChecked:
    """Not checked by ccdyn, and why."""
    why: str
    reading: str | None = None


@dataclasses.dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    location: str
    statement: str
    cover: Records | Tested | NotChecked


def _c(cid, paper, where, statement, cover):
    return Claim(cid, paper, where, statement, cover)


_DIAGRAM = NotChecked("a diagram or notation, no claim of its own")
_NO_CHECK = "no check in ccdyn yet"
_T2 = "tests/two_layer/test_network.py::"
_TM = "tests/two_layer/test_modulation.py::"
_TD = "tests/deep/"
_T4 = "tests/two_layer/test_theorem4.py::"

CATALOGUE = (
    # --- core: Y. Tian, Understanding the Role of Nonlinearity in Training Dynamics of Contrastive Learning
    _c("core-sec2-gradient", "core", "Sec. 2 (Eq. 1-2)", "the InfoNCE and quadratic losses' gradients are alpha-CL "
       "energy gradients with the loss's pairwise weights alpha held fixed",
       Tested("autodiff", ("tests/test_covariance.py::test_infonce_gradient_is_minus_2n2_energy_gradient",
                           _T2 + "test_loss_gradient_is_alpha_cl_gradient"), reading=READINGS + "#core-eq-1")),
    _c("core-lemma1", "core", "Lemma 1", "Gaussian alpha of any bounded-below g has kernel structure (Def. 1)",
       Records(r"core-lemma1", reading="docs/independent_checks.md")),
    _c("core-lemma2", "core", "Lemma 2", "with kernel-structured alpha, C_alpha of a batch is asymptotically PSD "
       "(sum_l z_l^2 V form) as N -> infinity", Records(r"core-lemma2-kernel", reading="docs/independent_checks.md")),
    _c("core-cor1", "core", "Cor. 1", "without augmentation and with a large batch, C_alpha[g] -> sum_l z_l^2 V[g]",
       Tested("closed form", ("tests/test_covariance.py::"
                              "test_uniform_alpha_without_augmentation_is_biased_covariance",),
              note="uniform alpha only (z_0 = 1)")),
    _c("core-lemma3", "core", "Lemma 3", "1-layer dynamics with homogeneous activation: w' = P_w^perp A(w) w",
       Tested("autodiff", ("tests/one_layer/test_dynamics.py::test_autodiff_gradient_is_a_times_w_over_degree",))),
    _c("core-eq8", "core", "Eq. 8 (latent categorical model)", "every pattern u_m is a stable local maximal "
       "eigenvector (LME)", Tested("closed form", ("tests/one_layer/test_certify.py::"
                                                   "test_latent_categorical_every_pattern_is_stable",))),
    _c("core-eq9", "core", "Eq. 9 (latent summation model)", "u_m is an LME exactly when q < (3 - sqrt 5) / 2",
       Tested("closed form", ("tests/one_layer/test_certify.py::test_latent_summation_lme_threshold",
                              "tests/one_layer/test_kinks.py::test_a_smooth_saddle_is_not_certified"))),
    _c("core-sec3", "core", "Sec. 3 (Fig. 1 left)", "ReLU-like activations learn every planted pattern, linear only "
       "the PCA direction", Records(r"core-sec3-patterns")),
    _c("core-thm1", "core", "Thm. 1", "an LME with lambda_gap > rho is stable", Records(r"core-thm1")),
    _c("core-thm2", "core", "Thm. 2", "ReLU roughness bound rho <= C_0^3 vol(C_0) r / pi", Records(r"core-thm2")),
    _c("core-cor2", "core", "Cor. 2", "Gaussian alpha scales the roughness by z_0(alpha_g) < 1 relative to uniform",
       Records(r"core-cor2(-exact)?", reading=READINGS + "#core-cor-2", note="the roughness rho, not Thm. 2's r: "
               "the size r_g = z_0 r_u is checked by neither row")),
    _c("core-thm3", "core", "Thm. 3 (Def. 4)", "power iteration from a start with sup omega <= gamma on B_gamma "
       "converges to a critical point",
       Records(r"core-thm3(-exact)?", reading=READINGS + "#core-thm-3", evidence=(
           (r"core-thm3", {"scope": "estimate", "why": "the hypothesis sup omega <= gamma on B_gamma is estimated at "
                           "64 sampled points, not certified; core-thm3-exact certifies it on the activation "
                           "regions"}),))),
    _c("core-fig1", "core", "Fig. 1 (right)", "power iteration from u_m converges to a stable optimum next to u_m",
       Records(r"core-fig1")),
    _c("core-lemma4", "core", "Lemma 4", "2-layer dynamics: V' and w_km' from the contrastive covariance (Eq. 12)",
       Tested("autodiff", (_T2 + "test_lemma4_velocity_is_degree_times_autodiff_of_energy",
                           _T2 + "test_lemma4_velocity_matches_dense_eq12"))),
    _c("core-thm4", "core", "Thm. 4", "linear 2-layer network: (1) the filters' gradients are co-linear (rank 1 per "
       "RF); (2) a path of critical points joins distinct critical filters to identical ones",
       Tested("autodiff", (_T2 + "test_theorem4_linear_filters_get_colinear_gradients",
                           _T4 + "test_thm4_part2_path_of_critical_points_with_a_fixed_top_layer",
                           _T4 + "test_thm4_critical_set_is_the_null_space_of_the_autodiff_hessian",
                           _T4 + "test_thm4_fast_top_layer_has_no_unprojected_critical_point",
                           _T4 + "test_thm4_on_the_sphere_critical_filters_are_one_direction_up_to_sign"),
              note="part (1) with a top layer V = v s^T; part (2) holds for a fixed V = v s^T along the path that "
                   "keeps sum_m s_km w_km (the proof's swap path is not critical unless s_k1 = s_k2; with full-rank "
                   "data the identical end point is 0); with the fast top layer Eq. 14 has no critical point and on "
                   "the sphere critical filters are +-one direction already",
              reading=READINGS + "#core-thm-4",
              evidence={"scope": "special case", "why": "part (2) holds only with a fixed top layer V = v s^T, and on "
                        "full-rank data its identical end point is w = 0; the proof's swapped point is not critical "
                        "(gradient norm 10.5 in the test's case), and under Assumption 2 (fast top layer) Eq. 14 has "
                        "no critical point at all"})),
    _c("core-sec4-rank1-s", "core", "Sec. 4 (after Lemma 4)", "a stationary top layer is V = v s^T with s the "
       "maximal eigenvector of C_alpha[f_1], so S = s s^T is rank 1",
       Records(r"core-sec4-rank1-s", reading="docs/independent_checks.md#core-sec-4-rank-1-s")),
    _c("core-lemma5", "core", "Lemma 5 (Assumption 2)", "closed form of V[x~] and V[f_1] under conditional "
       "independence (Eq. 120, 138)", Records(r"core-lemma5-general", reading="docs/independent_checks.md#core-lemma-5",
                                              note="Eq. 120 for C = 2 to 5 and M = 1 to 4 (C = 2, M = 1 with Eq. 138 "
                                                   "in tests/two_layer/test_modulation.py)")),
    _c("core-lemma5-c2", "core", "Lemma 5 (C = 2), Eq. 138", "for C = 2 the between-class term of Eq. 120 is "
       "p0 p1 Delta Delta^T (rank 1), so V[f_1] = D + p0 p1 b b^T", Records(r"core-lemma5-c2")),
    _c("core-thm5", "core", "Thm. 5 (Eq. 15)", "w_k' under conditional independence (C = 2, M = 1)",
       Records(r"core-thm5")),
    _c("core-eq143", "core", "Eq. 142-143 (proof of Thm. 5)", "the modulation coefficient delta_k >= 0 of Eq. 143, and "
       "the alternative printed after it, delta_k = 1 - p0 p1 b_k^2 / (lambda - d_k)",
       Records(r"core-eq143(-alternative)?")),
    _c("core-fig7", "core", "Fig. 7 (Eq. 146-150)", "y' = (y + b) y: stable point -b, blow-up at t* when y(0) > 0",
       Records(r"core-fig7")),
    _c("core-eq151", "core", "Eq. 151", "dt*/db < 0: a larger b_l blows up sooner (the time-to-blow-up ordering)",
       Records(r"core-eq151", reading="docs/independent_checks.md#core-eq-151-eq-156-157")),
    _c("core-eq155", "core", "Eq. 155", "probability that component l wins, P[E_l]",
       Records(r"core-eq155", reading=READINGS + "#core-eq-155")),
    _c("core-eq155-bounds", "core", "after Eq. 155", "positive modulation gives P[E_l] >= eps_l / 2, negative "
       "P[E_l] <= (1/d)(1 + eps_l / 2)^d", Records(r"core-eq155-bounds")),
    _c("core-eq156-157", "core", "Eq. 156-157", "the basin probability's dependence on the modulation",
       Records(r"core-eq156-157", reading="docs/independent_checks.md#core-eq-151-eq-156-157")),
    _c("core-thm6", "core", "Thm. 6", "global modulation enlarges the attractive basin of u_l", Records(r"core-thm6")),
    _c("core-lemma6", "core", "Lemma 6 (Def. 5)", "dynamics with mean-backprop BatchNorm",
       Tested("autodiff", (_T2 + "test_lemma4_velocity_is_degree_times_autodiff_of_energy",
                           _TM + "test_eq15_equals_lemma4_on_the_joint_population"))),
    _c("core-cor3", "core", "Cor. 3", "with BatchNorm every RF learns at a comparable speed (d_k^bn)",
       Records(r"core-cor3")),
    _c("core-appD-dbn", "core", "App. D (after Cor. 3)", "d_k^bn -> 1 / (1 + p0 p1 (w_k^T Delta_k / sqrt d_k)^2), "
       "more uniform across RFs than d_k", Records(r"core-appD-dbn")),
    _c("core-lemma7-10", "core", "Lemmas 7-10 (App. B.4)", "bounds used in the proof of Thm. 3 (1 - d_t, weight "
       "difference, eigenvector expansion, Lipschitz step)", NotChecked("proof steps of Thm. 3, checked only "
                                                                        "through Thm. 3 itself")),
    _c("core-lemma11", "core", "Lemma 11 (Eq. 103)", "the local region B_gamma as a cap around w(0)",
       Tested("closed form", ("tests/one_layer/test_irregularity.py::test_cap_threshold_matches_eq_103",))),
    _c("core-appB5", "core", "App. B.5", "augmentation removes local optima (rotations) and ties them into orbits "
       "(shifts)", Records(r"core-appB5-.*", reading=READINGS + "#core-app-b5")),
    _c("core-fig2", "core", "Fig. 2", "the 2-layer setting", _DIAGRAM),
    _c("core-fig3", "core", "Fig. 3", "the token-generator data of Sec. 5", _DIAGRAM),
    _c("core-fig4", "core", "Fig. 4 / 9 (Sec. 5)", "P = 1: linear good at every beta, ReLU needs large beta; P > 1: "
       "ReLU beats linear and improves with beta",
       Records(r"core-(p1|relu-beats-linear)-(fig4-infonce|sensitivity-lr).*", reading="docs/two_layer_readings.md")),
    _c("core-fig4-caption", "core", "Fig. 4 caption", "similar trends for LeakyReLU (slope 0.05) and quadratic "
       "activations", Records(r"core-fig4-caption-.*", reading="docs/two_layer_readings.md")),
    _c("core-fig5", "core", "Fig. 5", "learned weights at P = 3, beta = 5 match the generators' tokens",
       NotChecked("a picture (results/two_layer/fig5/weights.png); no verdict is computed from it")),
    _c("core-fig6", "core", "Fig. 6", "decomposition of V[x~]", _DIAGRAM),
    _c("core-fig8", "core", "Fig. 8 (App. E.1)", "ReLU has many local maxima on the circle, linear two",
       Records(r"core-fig8")),
    _c("core-appE1", "core", "App. E.1 (Fig. 8)", "unlike PCA directions, the ReLU local optima are not orthogonal "
       "to each other", Records(r"core-appE1-not-orthogonal")),
    _c("core-fig9", "core", "Fig. 9", "ReLU has the lowest irrelevant-matching score chi_-",
       Records(r"core-relu-lowest-chi-minus-(fig4-infonce|sensitivity-lr).*", reading="docs/two_layer_readings.md")),
    _c("core-fig10", "core", "Fig. 10", "with the quadratic loss the same trends hold, and InfoNCE does better",
       Records(r"core-((p1|relu-beats-linear|relu-lowest-chi-minus)-(fig10|sensitivity-quadratic)|"
               r"infonce-beats-quadratic-).*", reading="docs/two_layer_readings.md")),
    _c("core-fig11", "core", "Fig. 11", "BN does not help much at small non-uniformity (zeta = 2), helps at large "
       "zeta for large beta and P", Records(r"core-bn-.*", reading=READINGS + "#core-fig-11")),
    _c("core-table1", "core", "Table 1", "backpropagating sigma_k^2 through BN hurts (zeta = 10)",
       Records(r"core-sigma-backprop-hurts-.*", reading="docs/two_layer_readings.md")),
    _c("core-fig12-13", "core", "App. E.3, Figs. 12-13", "filters learned with augmentation are smoother",
       Records(r"core-appE3-.*", reading="docs/two_layer_readings.md"
                                         "#mnist-app-e3-figs-1213-ccdyntwo_layerstudiesmnist-scriptsmnistpy")),
    # --- DDN: Tian, Yu, Chen, Ganguli, Understanding Self-supervised Learning with Dual Deep Networks
    _c("ddn-thm1", "DDN", "Thm. 1", "gradient of the squared distance r for dual deep ReLU networks",
       Tested("autodiff", (_TD + "test_network.py::test_theorem1_gradient_of_squared_distance",))),
    _c("ddn-lemma1", "DDN", "Lemma 1 (App. A)", "recursive gradient update (the connection K_l)",
       Records(r"ddn-lemma1", reading=READINGS + "#ddn-lemma-1")),
    _c("ddn-thm2", "DDN", "Thm. 2 (Eq. 6)", "dL/dr_+ > 0, dL/dr_k- < 0 and their sum is 0 for the three losses",
       Tested("autodiff", (_TD + "test_operator.py::test_theorem2_and_xi_of_eq6",))),
    _c("ddn-remark-eq2", "DDN", "remark after Eq. 2", "with unit outputs Eq. 2 is SimCLR's cosine InfoNCE "
       "(-1/2 ||u - v||^2 = sim(u, v) - 1, e^{-1/tau} cancels)", Records(r"ddn-remark-eq2")),
    _c("ddn-lemma2", "DDN", "Lemma 2", "batch-of-one gradient as weighted pair differences", Records(r"ddn-lemma2")),
    _c("ddn-thm3", "DDN", "Thm. 3", "L_simp: the update is the covariance operator", Records(r"ddn-thm3")),
    _c("ddn-thm4", "DDN", "Thm. 4", "L_tri, L_nce: covariance operator plus a residue theta", Records(r"ddn-thm4")),
    _c("ddn-eq59", "DDN", "Eq. 59 (proof of Thm. 4)", "eps = dL/dr_k-|_X - dL/dr_k-|_X0 is bounded: |eps| <= 1 "
       "(L_tri), |eps| <= 2 / tau (L_nce)", Records(r"ddn-eq59")),
    _c("ddn-eq79", "DDN", "Eq. 79 (proof of Thm. 4)", "the residue theta <= (2 M_K^2 / tau^2) {2 E[||f(x) - f(x')|| "
       "(sqrt tr V_aug + c_0)] + 3 tr E_x V_aug} (vanishes without augmentation)", Records(r"ddn-eq79")),
    _c("ddn-eq7", "DDN", "Eq. 7", "L^{tau,exact}: the covariance operator without residue", Records(r"ddn-eq7")),
    _c("ddn-cor1", "DDN", "Cor. 1", "L_simp^beta: the update with (1 + beta) r_+", Records(r"ddn-cor1")),
    _c("ddn-l2norm", "DDN", "Eq. 28-30, 41, 51, 56", "the same operators with l2-normalized outputs",
       Records(r"ddn-l2norm", reading=READINGS + "#ddn-l2-normalized")),
    _c("ddn-sec51", "DDN", "Sec. 5.1 (Eq. 11-13, Fig. 3)", "1-D translation: linear neurons do not learn, a "
       "selective ReLU neuron gets a rank-1 operator",
       Tested("closed form", (_TD + "test_translation.py::test_linear_neurons_do_not_learn",
                              _TD + "test_translation.py::test_selective_relu_neuron_gets_rank_one_operator",
                              _TD + "test_translation.py::test_pattern_counts_of_the_two_objects"))),
    _c("ddn-sec51-linear", "DDN", "Sec. 5.1 (linear neuron)", "a Gaussian multiplier acting only on the nuisance "
       "subspace gives OP = Q^s V[x] Q^s: a linear neuron reduces dimension within the semantic subspace",
       Records(r"ddn-sec51-linear", reading=READINGS + "#ddn-sec-51-nuisance")),
    _c("ddn-lemma3-5", "DDN", "Lemmas 3-5", "variance squashing and sharpened Jensen inequalities",
       Records(r"ddn-lemma3-5")),
    _c("ddn-lemma6", "DDN", "Lemma 6 (Eq. 98-99, 177)", "TR-HLTM: transitions compose as 1 1^T / m + the product "
       "of the C's along the path (binary: the polarity is the product)", Records(r"ddn-lemma6")),
    _c("ddn-lemma7", "DDN", "Lemma 7", "a binary TR-HLTM is an SB-HLTM", Records(r"ddn-lemma7")),
    _c("ddn-lemma8", "DDN", "Lemma 8", "lower bound of a 2-D Gaussian tail",
       Records(r"ddn-lemma8", reading="docs/independent_checks.md#ddn-thm-5-remark")),
    _c("ddn-thm5", "DDN", "Thm. 5 (Eq. 124, 128, Fig. 11)", "lucky nodes at initialization when |N_mu| is large "
       "enough; the remark's rho >= 63.3%, 1099 <= |N_mu| <= 1467",
       Records(r"ddn-thm5-remark", reading="docs/independent_checks.md#ddn-thm-5-remark",
               note="the remark's numbers only; the theorem's probability bound is checked through Eq. 123")),
    _c("ddn-thm5-lucky", "DDN", "Thm. 5 (Eq. 128-130)", "with |N_mu| >= Eq. 128 nodes, with probability >= "
       "1 - eta some node has 2 w_j^T a_mu > 0 and |s_j| >= the bound of Eq. 130", Records(r"ddn-thm5-lucky")),
    _c("ddn-eq125", "DDN", "Eq. 125 (Thm. 5 remark)", "Mills-ratio bounds y/(1 + y^2) < r(y) < 1/y and "
       "0 < e(y) < 1/y", Records(r"ddn-eq125")),
    _c("ddn-thm6", "DDN", "Thm. 6 (Eq. 179)", "activation covariance in SB-HLTM is o_mu a_mu a_mu^T",
       Tested("enumeration", (_TD + "test_hltm.py::test_theorem6_activation_covariance_on_enumerated_tree",),
              evidence={"failed_part": "the main text's o_mu = rho_0mu^2 (1 - rho_0mu^2) is not the enumerated "
                        "covariance (off by 82% at mu = s0 on the test's tree with p_root = 0.5, which the test "
                        "asserts; 50-82% for p_root 0.5-0.9); the proof's rho_0mu^2 (1 - rho_0^2) is exact"})),
    _c("ddn-lemma9", "DDN", "Lemma 9", "activation covariance in TR-HLTM", Records(r"ddn-lemma9")),
    _c("ddn-eq80", "DDN", "Eq. 80", "H > 1 InfoNCE: the pair weights xi_k at the un-augmented points",
       Records(r"ddn-eq80", reading=READINGS + "#ddn-eq-80")),
    _c("ddn-table2", "DDN", "Table 2", "L_nce^exact (Eq. 7) is about as good as L_nce (ResNet-18, STL-10)",
       Records(r"ddn-table2-.*")),
    _c("ddn-table3", "DDN", "Table 3", "beta = -0.5 helps, beta = +0.2 hurts (extended loss)",
       Records(r"ddn-table3-.*", reading=READINGS + "#ddn-table-3")),
    _c("ddn-table2-3-resnet", "DDN", "Tables 2-3 (ResNet-18)", "the paper's numbers on STL-10 / CIFAR-10",
       NotChecked("ResNet-18 on STL-10 / CIFAR-10 is out of reach on this machine; only the digits analogue runs")),
    _c("ddn-table4-6", "DDN", "Tables 4, 6", "normalized correlation of latents and nodes (SB-HLTM, L = 5)",
       Records(r"ddn-table[46]-.*", reading=READINGS + "#ddn-hltm")),
    _c("ddn-appD1", "DDN", "App. D.1", "top latents are harder; NC non-trivial at init; over-parameterization helps",
       Records(r"ddn-appD1-.*", reading=READINGS + "#ddn-hltm")),
    _c("ddn-fig13-14", "DDN", "Figs. 13-14", "the covariance operator's Frobenius norm over training",
       Records(r"ddn-fig13-14")),
    *[_c(f"ddn-fig{n}", "DDN", f"Fig. {n}", "diagram or notation", _DIAGRAM) for n in (1, 2, 4, 5, 6, 7, 8, 9, 10, 12)],
    _c("ddn-fig11", "DDN", "Fig. 11", "log 1/R(c, gamma) from Eq. 124", Records(r"ddn-fig11")),
    _c("ddn-tables1-5", "DDN", "Tables 1, 5", "notation", _DIAGRAM),
    # --- SimCLR-var: Understanding Contrastive Learning through Variational Analysis and NN Optimization
    _c("simclr-fig1-2", "SimCLR-var", "Figs. 1-2", "t-SNE of MNIST / CIFAR-10 and an illustration",
       NotChecked("illustrations of real data sets, no claim checked")),
    _c("simclr-prop2.1", "SimCLR-var", "Prop. 2.1", "an invariant map makes NT-Xent a function of f#mu only",
       Records(r"simclr-prop-2\.1", reading="docs/variational.md#eq-4-and-eq-1")),
    _c("simclr-prop3.1", "SimCLR-var", "Prop. 3.1 (Eq. 7)", "the first optimality condition of Eq. 4",
       Tested("autodiff", ("tests/variational/test_sphere_configs.py::test_prop31_gradient_eq7_matches_autodiff",))),
    _c("simclr-prop3.1-eq6", "SimCLR-var", "Prop. 3.1 (Eq. 6)", "the first optimality condition of Eq. 4 with "
       "augmentations", Records(r"simclr-prop3\.1-eq6")),
    _c("simclr-thm3.2", "SimCLR-var", "Thm. 3.2", "symmetric discrete measures are stationary",
       Records(r"simclr-thm-3\.2", reading=READINGS + "#simclr-thm-3-2")),
    _c("simclr-fig3", "SimCLR-var", "Fig. 3, Remark 3.1", "the loss falls with the number of clusters to a plateau",
       Records(r"simclr-fig-3", reading="docs/variational.md#fig-3")),
    _c("simclr-remarks", "SimCLR-var", "Remarks 3.2, 4.1-4.3", "relations to other work and discussion",
       NotChecked("discussion, no claim of its own")),
    _c("simclr-prop4.1", "SimCLR-var", "Prop. 4.1", "the function-space flow is J(-grad_w L)",
       Records(r"simclr-prop-4\.1")),
    _c("simclr-thm4.2", "SimCLR-var", "Thm. 4.2",
       "plain GD keeps invariance; the network only if grad_w f is invariant",
       Records(r"simclr-thm-4\.2(-moving-t)?", reading=READINGS + "#simclr-thm-4-2", evidence=(
           (r"simclr-thm-4\.2", {"scope": "by construction", "why": "checked only where the statements hold by "
                                 "construction (T x = x); simclr-thm-4.2-moving-t exercises T x != x"}),))),
    _c("simclr-prop4.3", "SimCLR-var", "Prop. 4.3", "the explicit kernel is the network's NTK",
       Records(r"simclr-prop-4\.3")),
    _c("simclr-prop4.4", "SimCLR-var", "Prop. 4.4", "the width-M kernel tends to the arccos limit",
       Records(r"simclr-prop-4\.4")),
    _c("simclr-thm4.5", "SimCLR-var", "Thm. 4.5", "per-cluster velocity in the clustering setting",
       Records(r"simclr-thm-4\.5")),
    _c("simclr-cor4.6", "SimCLR-var", "Cor. 4.6", "beta -> 1/2 for ReLU as M -> infinity", Records(r"simclr-cor-4\.6")),
    _c("simclr-remark4.4", "SimCLR-var", "Remark 4.4", "small clusters contribute less and may be missed",
       Records(r"simclr-remark-4\.4.*")),
    _c("simclr-fig4", "SimCLR-var", "Fig. 4", "(no Fig. 4 in the text copy: its numbering goes from 3 to 5)",
       NotChecked("the text copy of the paper has no Fig. 4")),
    _c("simclr-fig5", "SimCLR-var", "Fig. 5", "the network keeps the clusters, plain GD spreads them",
       Records(r"simclr-\d-d-fig-5.*", reading="docs/variational.md#figs-56-parameters-the-paper-leaves-open")),
    _c("simclr-fig6", "SimCLR-var", "Fig. 6", "the same with a 4-layer network in 2-D and 3-D",
       Records(r"simclr-\d-d-fig-6.*", reading="docs/variational.md#figs-56-parameters-the-paper-leaves-open")),
    _c("simclr-propA1", "SimCLR-var", "Prop. A.1",
       "three kinds of local minimizers satisfy the Euler-Lagrange equation",
       Records(r"simclr-prop-a-1")),
    _c("simclr-lemmaA2", "SimCLR-var", "Lemma A.2", "second variation > 0 when sigma > 3 K^2 tau",
       Records(r"simclr-lemma-a-2", reading=READINGS + "#simclr-lemma-a-2")),
    # --- ccdyn's own accuracy claims (docs/flow.md)
    _c("simclr-appA1", "SimCLR-var", "App. A.1", "with an invariant map VICReg and BYOL depend on the data only "
       "through f#mu", Records(r"simclr-appA1")),
    _c("ccdyn-flow", "ccdyn", "docs/flow.md", "the flow's basins are exact in 2-D and stable under flow_rtol / 10",
       Records(r"ccdyn-flow-.*")),
    _c("ccdyn-kinks", "ccdyn", "docs/flow.md (Kinks)", "optima certified on ReLU kinks are strict local maxima",
       Records(r"ccdyn-kink-certificates")),
    # --- barriers between the optima (docs/saddles.md): beyond the papers
    _c("ccdyn-barriers-ortho", "ccdyn", "docs/saddles.md (core Thm. 3, Fig. 1)", "a larger pattern overlap lowers "
       "the barriers between the pattern optima without merging them", Records(r"ccdyn-barriers-ortho-eps")),
    _c("ccdyn-barriers-tau", "ccdyn", "docs/saddles.md (core Cor. 2, Sec. 5)", "Gaussian alpha at a smaller tau "
       "gives more and deeper optima (barriers in the flow's potential)", Records(r"ccdyn-barriers-tau")),
)
