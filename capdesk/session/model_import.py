"""Installing a model bundle, for the CLI (``capdesk models import``) and the window's Models dialog alike:
the bundle is checked as ``capdesk.model.install`` checks it, and its manifest's ``policy`` section as the
describer will read it, so that a model whose settings are broken is refused on import, naming the manifest
and the key, not the first time a picture is described with it."""

from __future__ import annotations

import os
from pathlib import Path

from capdesk.describe.settings import PolicySettings
from capdesk.model.bundle import Bundle
from capdesk.model.install import Installed, install


def _policy_readable(bundle: Bundle) -> None:
    PolicySettings.for_model(bundle.manifest.get("policy"), bundle.path / "manifest.json")


def import_model(src: str | os.PathLike[str], models_dir: Path | None = None) -> Installed:
    """Check the bundle at ``src`` (its files and its policy settings) and install it; BundleError (one
    line, naming ``src``) when it is refused, and then nothing is installed."""
    return install(src, models_dir, check=_policy_readable)
