"""Multi-step studies: a frozen config in, a record (plain dict of numbers and verdicts) out.

Each study composes the library (data, dynamics, basins, certificates) into the computation behind
one script and one results folder; the script only parses flags, calls the study and writes files.
Import the study modules directly (``from ccdyn.studies import augmentation``).
"""
