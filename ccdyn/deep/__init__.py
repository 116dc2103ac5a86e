"""Dual Deep Networks (*Understanding Self-supervised Learning with Dual Deep Networks*): the deep
ReLU network and its connection (:mod:`ccdyn.deep.network`), the covariance operator OP_l of Thm. 3-4
and Cor. 1 (:mod:`ccdyn.deep.operator`), the 1-D translation model of Sec. 5
(:mod:`ccdyn.deep.translation`), the tree network trained on SB-HLTM data with its normalized
correlations and ||OP_mu||_F (:mod:`ccdyn.deep.hltm`), the Table 4/6 grid (:mod:`ccdyn.deep.studies.hltm_grid`),
the App. D.1 trends as verdicts (:mod:`ccdyn.deep.claims`) and the 8x8-digits analogue of Tables 2-3
(:mod:`ccdyn.deep.studies.digits`). Readings: docs/ddn.md."""
