"""The Qt-free session under the window, and what every front end sets up the same way.

Owns the open pictures and their statuses (``core``, ``picture``), long jobs started from the
window (``jobs``, ``altfill_job``), where slow work runs (``tasks``), user settings
(``settings``), the words said to the user (``messages``) and opening the describer and the
speaker (``services``, shared with the CLI).

May import: everything below it (altfill/, folders/, sidecars/, describe/, model/, ``speech``).
Never cli/ or gui/, never Qt: the window is a thin shell over this package.
"""
