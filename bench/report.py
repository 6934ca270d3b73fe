"""What every user-level benchmark ends with: the machine's load after the runs, said and kept."""

from __future__ import annotations

import json
import os
from pathlib import Path


def finish(report: dict, path: Path | None) -> int:
    """Add the load average after the runs to ``report``, print it beside the one before, and write the
    report as JSON to ``path`` when one was given."""
    report["load_after"] = os.getloadavg()
    print(f"\nload average before {report['load_before']}, after {report['load_after']}")
    if path:
        path.write_text(json.dumps(report, indent=1))
    return 0
