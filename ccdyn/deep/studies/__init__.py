"""Studies of the Dual Deep Networks part (frozen config in, plain record out): the Tables 4/6 HLTM grid
(:mod:`~ccdyn.deep.studies.hltm_grid`, run by :func:`ccdyn.grid.run`)."""
