"""CapDesk: offline image descriptions for people who cannot see the picture."""

__version__ = "0.1.0"
