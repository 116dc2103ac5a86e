"""SimCLR through variational analysis (issue 14): the paper *Understanding Contrastive Learning
through Variational Analysis and Neural Network Optimization Perspectives*, made runnable.

- :mod:`ccdyn.variational.ntxent`: Eq. 1 and Eq. 4-5 on weighted point sets, Prop. 2.1's latent form;
- :mod:`ccdyn.variational.sphere_configs`: Fig. 3, Thm. 3.2, Prop. A.1, the Riemannian Hessian, Lemma A.2;
- :mod:`ccdyn.variational.kernel`: Eq. 18, Props. 4.1, 4.3, 4.4, Thm. 4.2, Thm. 4.5, Cor. 4.6;
- :mod:`ccdyn.variational.clusters`: Figs. 5-6 with cluster-preservation scores over vmapped seeds;
- :mod:`ccdyn.variational.studies` (``sphere``, ``kernel``, ``clusters``): the records behind
  ``results/simclr_var``; :mod:`ccdyn.variational.claims`: their verdicts; :mod:`ccdyn.variational.figures`.

Import the modules directly (``from ccdyn.variational import kernel``); readings in docs/variational.md.
"""
