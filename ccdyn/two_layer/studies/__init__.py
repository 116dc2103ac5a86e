"""Studies of the 2-layer part (frozen config in, plain record out): the token-generator grid of Sec. 5 /
App. E.2 (:mod:`~ccdyn.two_layer.studies.token_grid`, run by :func:`ccdyn.grid.run`)."""
