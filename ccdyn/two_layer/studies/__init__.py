"""The 2-layer part's studies (Sec. 4-5, App. E.3): a frozen config in, a plain record of numbers out.
Import the modules directly (``from ccdyn.two_layer.studies import modulation``); the verdicts come from
:mod:`ccdyn.two_layer.claims`."""
