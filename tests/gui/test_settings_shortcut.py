"""The key that runs ``capdesk screen --focus --speak``: its notation, the Settings dialog that shows and changes
it (offscreen Qt, a real settings file), and GNOME's binding written through the real gsettings and GNOME's own
schema (in a settings file of the test's own), the same one install-user.sh --shortcut writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

from capdesk.screen import shortcut
from capdesk.screen.shortcut import ShortcutError, normalize

THEIRS = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/custom0/"


@pytest.mark.parametrize("typed, stored", [
    ("<Super>d", "<Super>d"), ("Super+D", "<Super>d"), ("ctrl+alt+P", "<Control><Alt>p"),
    ("<Primary><Shift>F5", "<Primary><Shift>F5"), ("Print", "Print"), ("F9", "F9"), ("<Super>/", "<Super>slash"),
    ("Ctrl++", "<Control>plus"), ("  ", ""), ("", ""),
])
def test_keys_are_stored_in_gnomes_notation(typed, stored):
    assert normalize(typed) == stored


@pytest.mark.parametrize("typed, why", [
    ("d", "taken from every program's typing: add a modifier, e.g. <Super>d"),
    ("<Shift>d", "taken from every program's typing"),
    ("<Super>", "has no key after its modifiers"), ("Super+", "has no key after its modifiers"),
    ("<Windows>d", "'Windows' is not a modifier"), ("<Super>dd", "'dd' is not a key name"),
    ("<Super d", "a modifier is not closed"),
])
def test_bad_keys_are_refused_saying_why(typed, why):
    with pytest.raises(ShortcutError, match="^.*" + why.replace("(", r"\(").replace("+", r"\+")):
        normalize(typed)


def test_old_settings_files_load_and_a_bad_key_is_replaced(tmp_path):
    from capdesk.session.settings import Settings

    old = tmp_path / "old.json"
    old.write_text(json.dumps({"rate": 200, "lang": "de"}))  # written before the key existed
    s, problem = Settings.load(old)
    assert problem is None and (s.rate, s.lang, s.screen_shortcut) == (200, "de", "")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rate": 200, "screen_shortcut": "d"}))
    s, problem = Settings.load(bad)
    assert s.rate == 200 and s.screen_shortcut == "" and "'screen_shortcut'" in problem and "modifier" in problem


def test_the_command_names_this_capdesk_quoted_for_gnome(tmp_path):
    app = tmp_path / "Cap Desk"
    app.mkdir()
    (app / "capdesk").write_text("")
    assert shortcut.command(str(app / "capdesk"), frozen=True) == f"'{app}/capdesk' screen --focus --speak"
    # Beside a virtual environment's Python: its capdesk script.
    assert shortcut.command(str(app / "python3"), frozen=False) == f"'{app}/capdesk' screen --focus --speak"


def _schema_dir() -> Path | None:
    for d in (Path("/usr/share/glib-2.0/schemas"), Path("/usr/local/share/glib-2.0/schemas")):
        if (d / f"{shortcut.KEYS}.gschema.xml").exists():
            return d
    return None


needs_gnome_keys = pytest.mark.skipif(shutil.which("gsettings") is None or _schema_dir() is None,
                                      reason="needs gsettings and GNOME's media-keys schema (Debian packages "
                                             "libglib2.0-bin, gnome-settings-daemon-common)")


@pytest.fixture
def gnome(tmp_path, monkeypatch) -> dict[str, str]:
    """GNOME's settings in a file of the test's own (GLib's keyfile backend, which every gsettings process
    reads and writes, unlike the memory backend that each process starts empty), holding another
    program's shortcut; also made this process's environment, as the dialog reads it."""
    env = {"HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"], "GSETTINGS_BACKEND": "keyfile",
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "GSETTINGS_SCHEMA_DIR": str(_schema_dir())}
    for k, v in env.items():
        if k != "PATH":
            monkeypatch.setenv(k, v)
    gs(env, "set", shortcut.KEYS, "custom-keybindings", f"['{THEIRS}']")
    return env


def gs(env: dict[str, str], *args: str) -> str:
    return subprocess.run(["gsettings", *args], env=env, capture_output=True, text=True, check=True).stdout.strip()


@needs_gnome_keys
def test_binding_is_added_changed_and_removed_beside_others(gnome):
    cmd = "'/opt/Cap Desk/capdesk' screen --focus --speak"
    assert shortcut.current(gnome) is None
    assert shortcut.apply("Super+D", gnome, cmd) == "in GNOME, <Super>d now runs capdesk screen --focus --speak"
    assert gs(gnome, "get", shortcut.KEYS, "custom-keybindings") == f"['{THEIRS}', '{shortcut.PATH}']"
    assert gs(gnome, "get", shortcut.ONE, "binding") == "'<Super>d'"
    assert gs(gnome, "get", shortcut.ONE, "command") == f'"{cmd}"'
    assert gs(gnome, "get", shortcut.ONE, "name") == "'CapDesk: describe the focused picture'"
    shortcut.apply("<Control><Alt>p", gnome, cmd)  # changed, not listed twice
    assert gs(gnome, "get", shortcut.KEYS, "custom-keybindings") == f"['{THEIRS}', '{shortcut.PATH}']"
    assert shortcut.current(gnome) == "<Control><Alt>p"
    assert shortcut.apply("", gnome) == "GNOME's shortcut for capdesk screen is removed"
    assert gs(gnome, "get", shortcut.KEYS, "custom-keybindings") == f"['{THEIRS}']"
    assert gs(gnome, "get", shortcut.ONE, "binding") == "''" and shortcut.current(gnome) is None


@needs_gnome_keys
def test_the_installer_and_the_settings_change_the_same_binding(gnome, tmp_path):
    app = tmp_path / "app"
    app.mkdir()
    for f in ("install-user.sh", "org.capdesk.CapDesk.desktop"):
        shutil.copy(ROOT / "installer" / "linux" / f, app)
    shutil.copy(ROOT / "resources" / "icons" / "capdesk.png", app)
    (app / "capdesk").write_text("#!/bin/sh\n")
    (app / "capdesk").chmod(0o755)

    def install(*args: str) -> None:
        subprocess.run(["sh", str(app / "install-user.sh"), *args], env=gnome, capture_output=True, check=True)

    install("--shortcut", "<Super>d")
    assert shortcut.current(gnome) == "<Super>d"
    shortcut.apply("<Super>F9", gnome)
    assert gs(gnome, "get", shortcut.KEYS, "custom-keybindings") == f"['{THEIRS}', '{shortcut.PATH}']"
    install("--uninstall")  # the installer finds the binding the settings changed, and removes it
    assert gs(gnome, "get", shortcut.KEYS, "custom-keybindings") == f"['{THEIRS}']"
    assert shortcut.current(gnome) is None


def test_without_gnome_the_key_is_kept_and_that_is_said(tmp_path):
    env = {"PATH": str(tmp_path)}  # no gsettings on it
    assert not shortcut.gnome_available(env) and shortcut.current(env) is None
    assert "no GNOME keyboard settings here" in shortcut.apply("<Super>d", env)


def _dialog(qtbot, settings):
    from capdesk.gui.dialogs import SettingsDialog

    dlg = SettingsDialog(None, settings, [])
    qtbot.addWidget(dlg)
    return dlg


@needs_gnome_keys
def test_settings_dialog_shows_and_changes_the_key(qtbot, gnome, tmp_path):
    from PySide6.QtWidgets import QLabel, QPlainTextEdit

    from capdesk.session.settings import Settings

    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"rate": 190, "screen_shortcut": "<Super>d"}))
    settings, problem = Settings.load(path)
    assert problem is None
    dlg = _dialog(qtbot, settings)
    field = dlg.shortcut
    # Shown, named for a screen reader, explained, and a plain text edit (which Orca reads whole).
    assert field.text() == "<Super>d" and isinstance(field, QPlainTextEdit)
    assert isinstance(dlg.lang, QPlainTextEdit)  # the dialog's other text field too
    assert field.accessibleName() == "Key that describes the focused picture"
    assert "capdesk screen --focus --speak" in field.accessibleDescription()
    label = next(w for w in dlg.findChildren(QLabel) if w.buddy() is field)
    assert label.text() == "Screen description &key:"
    assert any("runs capdesk screen --focus --speak" in w.text() for w in dlg.findChildren(QLabel))

    field.setText("ctrl+alt+p")
    dlg.accept()
    settings.save(path)  # as the main window does once the dialog is accepted
    saved = json.loads(path.read_text())
    assert saved["screen_shortcut"] == "<Control><Alt>p" and saved["rate"] == 190
    assert gs(gnome, "get", shortcut.ONE, "binding") == "'<Control><Alt>p'"
    assert gs(gnome, "get", shortcut.ONE, "command") == repr(shortcut.command())
    assert gs(gnome, "get", shortcut.KEYS, "custom-keybindings") == f"['{THEIRS}', '{shortcut.PATH}']"
    assert dlg.changes == ["Key that describes the focused picture: <Control><Alt>p",
                           "in GNOME, <Control><Alt>p now runs capdesk screen --focus --speak"]

    # Emptied: no key, and GNOME's binding goes with it.
    dlg = _dialog(qtbot, Settings.load(path)[0])
    assert dlg.shortcut.text() == "<Control><Alt>p"
    dlg.shortcut.setText("")
    dlg.accept()
    assert dlg.s.screen_shortcut == "" and shortcut.current(gnome) is None


@needs_gnome_keys
def test_settings_dialog_shows_the_installers_key_and_leaves_it_alone(qtbot, gnome):
    from capdesk.session.settings import Settings

    shortcut.apply("<Super>d", gnome, "capdesk screen --focus --speak")
    dlg = _dialog(qtbot, Settings())
    assert dlg.shortcut.text() == "<Super>d"
    dlg.accept()  # nothing changed: GNOME's binding is not touched, and the settings learn the key
    assert dlg.changes == [] and dlg.s.screen_shortcut == "<Super>d"
    assert gs(gnome, "get", shortcut.ONE, "command") == "'capdesk screen --focus --speak'"


def test_a_bad_key_keeps_the_dialog_open_saying_why(qtbot, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    from capdesk.session.settings import Settings

    said: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text: said.append(text))
    monkeypatch.setenv("PATH", "/nonexistent")  # no gsettings: nothing of the user's is read or written
    settings = Settings()
    dlg = _dialog(qtbot, settings)
    dlg.show()
    dlg.shortcut.setText("d")
    dlg.accept()
    assert dlg.isVisible() and dlg.result() == 0 and settings.screen_shortcut == ""
    assert said == ["The key cannot be used: 'd' would be taken from every program's typing: add a modifier, "
                    "e.g. <Super>d."]
