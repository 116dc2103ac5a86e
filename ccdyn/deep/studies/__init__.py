"""The Dual Deep Networks part's studies: a frozen config in, a plain record of numbers out: the
Tables 4/6 HLTM grid (:mod:`~ccdyn.deep.studies.hltm_grid`, run by :func:`ccdyn.grid.run`) and the digits
analogue (:mod:`~ccdyn.deep.studies.digits`). Import the modules directly; the verdicts come from
:mod:`ccdyn.deep.claims`."""
