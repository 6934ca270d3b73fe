"""Settings and inputs a training command cannot use: reported in one line that names them, not as a traceback."""

from __future__ import annotations


class UsageError(ValueError):
    """Settings or inputs that cannot be used (an unknown data format, a depth the encoder does not
    have, a starting checkpoint that does not fit): the message names what and why. ``capdesk train
    fit``, ``prepare``, ``ensemble`` and ``scst`` print only these (and a missing path; ``ensemble``
    also a broken bundle) that way; any other error is a fault and keeps its traceback."""
