"""install-user.sh --shortcut: GNOME's custom keybinding for ``capdesk screen --focus --speak`` set through the
real gsettings and GNOME's own schema (in a settings file of the test's own), kept beside the user's other
shortcuts, and removed by --uninstall."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

KEYS = "org.gnome.settings-daemon.plugins.media-keys"
OURS = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/capdesk-screen/"
THEIRS = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/custom0/"


def _schema_dir() -> Path | None:
    for d in (Path("/usr/share/glib-2.0/schemas"), Path("/usr/local/share/glib-2.0/schemas")):
        if (d / f"{KEYS}.gschema.xml").exists():
            return d
    return None


needs_gnome_keys = pytest.mark.skipif(shutil.which("gsettings") is None or _schema_dir() is None,
                                reason="needs gsettings and GNOME's media-keys schema (Debian packages "
                                       "libglib2.0-bin, gnome-settings-daemon-common)")


@needs_gnome_keys
def test_shortcut_is_set_beside_others_and_removed(tmp_path):
    app = tmp_path / "Cap Desk"  # a folder with a space: the command must still run
    app.mkdir()
    for f in ("install-user.sh", "org.capdesk.CapDesk.desktop"):
        shutil.copy(ROOT / "installer" / "linux" / f, app)
    shutil.copy(ROOT / "resources" / "icons" / "capdesk.png", app)
    (app / "capdesk").write_text("#!/bin/sh\n")
    (app / "capdesk").chmod(0o755)
    env = {"HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"], "GSETTINGS_BACKEND": "keyfile",
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "GSETTINGS_SCHEMA_DIR": str(_schema_dir())}

    def gs(*args: str) -> str:
        return subprocess.run(["gsettings", *args], env=env, capture_output=True, text=True, check=True).stdout.strip()

    def install(*args: str) -> subprocess.CompletedProcess:
        r = subprocess.run(["sh", str(app / "install-user.sh"), *args], env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r

    gs("set", KEYS, "custom-keybindings", f"['{THEIRS}']")
    r = install("--shortcut", "<Super>d")
    assert "Press <Super>d" in r.stdout
    assert gs("get", KEYS, "custom-keybindings") == f"['{THEIRS}', '{OURS}']"
    one = f"{KEYS}.custom-keybinding:{OURS}"
    assert gs("get", one, "binding") == "'<Super>d'"
    assert gs("get", one, "command") == f"\"'{app}/capdesk' screen --focus --speak\""
    install("--shortcut", "<Super>d")  # a second install does not list it twice
    assert gs("get", KEYS, "custom-keybindings") == f"['{THEIRS}', '{OURS}']"

    r = install("--uninstall")
    assert "shortcut" in r.stdout
    assert gs("get", KEYS, "custom-keybindings") == f"['{THEIRS}']"
    assert gs("get", one, "binding") == "''"


def test_shortcut_needs_a_key(tmp_path):
    r = subprocess.run(["sh", str(ROOT / "installer" / "linux" / "install-user.sh"), "--shortcut"],
                       env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
    assert r.returncode == 2 and "--shortcut needs a key" in r.stderr
