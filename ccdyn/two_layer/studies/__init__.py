"""The 2-layer part's studies (Sec. 4-5, App. E.2-E.3): a frozen config in, a plain record of numbers out:
the token-generator grid (:mod:`~ccdyn.two_layer.studies.token_grid`, run by :func:`ccdyn.grid.run`),
``modulation`` and ``mnist``. Import the modules directly (``from ccdyn.two_layer.studies import
modulation``); the verdicts come from :mod:`ccdyn.two_layer.claims`."""
