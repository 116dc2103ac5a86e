"""The SimCLR variational part's studies (the records behind ``results/simclr_var``): a frozen config in,
a plain record of numbers out. Import the modules directly (``from ccdyn.variational.studies import
sphere``); the verdicts come from :mod:`ccdyn.variational.claims`."""
