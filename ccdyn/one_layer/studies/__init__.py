"""The 1-layer part's studies (Sec. 3, App. B.5): a frozen config in, a plain record of numbers out.

Each study composes the part's maths (data, dynamics, basins, certificates) into the computation behind
one script and one results folder; the script only parses flags, calls the study and writes files; the
verdicts come from :mod:`ccdyn.one_layer.claims`. Import the modules directly
(``from ccdyn.one_layer.studies import augmentation``).
"""
