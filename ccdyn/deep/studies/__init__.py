"""The Dual Deep Networks part's studies: a frozen config in, a plain record of numbers out. Import the
modules directly (``from ccdyn.deep.studies import digits``); the verdicts come from :mod:`ccdyn.deep.claims`."""
