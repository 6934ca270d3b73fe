"""The one error type that training commands report as a line, not a traceback."""

from __future__ import annotations


class UsageError(ValueError):
    """Settings or inputs that cannot be used (an unknown data format, a depth the encoder does not
    have, a starting checkpoint that does not fit): the message names what and why. Any other error
    is a fault and keeps its traceback."""
