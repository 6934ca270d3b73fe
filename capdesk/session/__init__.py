"""The Qt-free session under the window, and what every front end sets up the same way.

Owns the open pictures and their statuses (``core``, ``picture``), long jobs started from the
window (``jobs``, ``altfill_job``), where slow work runs (``tasks``), user settings
(``settings``), the words said to the user (``messages``), opening the describer and the
speaker (``services``, shared with the CLI) and removing a model (``model_removal``, shared too).

The runs the command line starts are here as well, each over the options it was given once:
a batch with its Ray set-up and embedding (``batch_run``), watched folders (``watch_run``),
alt-fill (``altfill_run``), how they stop on Ctrl-C and signals (``stopping``), and
``capdesk screen``'s speech and background service (``screen_speech``, ``screen_service``).

May import: everything below it (altfill/, folders/, sidecars/, describe/, model/, ``speech``).
Never cli/ or gui/, never Qt: the window is a thin shell over this package.
"""
