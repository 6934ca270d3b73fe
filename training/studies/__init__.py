"""Measurements and studies run by hand on the real data (``python training/studies/NAME.py``):
what the model cards and docs/training.md quote, kept so that every figure can be reproduced.
Speed and memory benchmarks live in ``bench/``."""
