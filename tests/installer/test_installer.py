"""The installer's own pieces, on real files and real Debian tools. The whole chain (build, install
into a fresh Debian root, use, purge) is installer/smoke_test_linux.sh, which CI runs."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALLER = ROOT / "installer"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _need(tool: str) -> str:
    exe = shutil.which(tool)
    if not exe:
        pytest.skip(f"{tool} is not installed (scripts/install-system-packages.sh installs it)")
    return exe


def test_desktop_entry_is_valid_and_opens_images():
    exe = _need("desktop-file-validate")
    entry = INSTALLER / "linux" / "org.capdesk.CapDesk.desktop"
    r = subprocess.run([exe, str(entry)], capture_output=True, text=True)
    assert r.returncode == 0 and "error" not in r.stdout.lower(), r.stdout + r.stderr
    text = entry.read_text()
    assert "Exec=capdesk gui %f" in text and "Icon=capdesk" in text and "image/jpeg" in text


def test_appstream_metadata_is_valid():
    exe = _need("appstreamcli")
    r = subprocess.run([exe, "validate", "--no-net", str(INSTALLER / "linux" / "org.capdesk.CapDesk.metainfo.xml")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_gui_names_the_installed_desktop_entry():
    # Wayland compositors match the window to its menu entry (icon, name) by this id.
    assert 'setDesktopFileName("org.capdesk.CapDesk")' in (ROOT / "capdesk" / "gui" / "app.py").read_text()


def test_icons_the_package_installs_exist_at_their_sizes():
    from PIL import Image

    for size in (16, 32, 48, 64, 128):
        with Image.open(ROOT / "resources" / "icons" / f"capdesk-{size}.png") as im:
            assert im.size == (size, size)
    with Image.open(ROOT / "resources" / "icons" / "capdesk.png") as im:
        assert im.size == (256, 256)


def test_dedupe_hard_links_identical_large_files_only(tmp_path):
    dedupe = _load(INSTALLER / "linux" / "dedupe.py")
    big = os.urandom(dedupe.MIN_BYTES + 10)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "encoder.onnx").write_bytes(big)
    (tmp_path / "b" / "encoder.onnx").write_bytes(big)
    (tmp_path / "b" / "other.onnx").write_bytes(big[:-1] + bytes([big[-1] ^ 1]))  # same size, one bit off
    (tmp_path / "a" / "small.txt").write_text("same")
    (tmp_path / "b" / "small.txt").write_text("same")

    saved = dedupe.dedupe(tmp_path)

    assert saved == len(big)
    assert os.path.samefile(tmp_path / "a" / "encoder.onnx", tmp_path / "b" / "encoder.onnx")
    assert not os.path.samefile(tmp_path / "a" / "encoder.onnx", tmp_path / "b" / "other.onnx")
    assert not os.path.samefile(tmp_path / "a" / "small.txt", tmp_path / "b" / "small.txt")
    assert (tmp_path / "b" / "encoder.onnx").read_bytes() == big
    assert not list(tmp_path.rglob("*.link"))
    assert dedupe.dedupe(tmp_path) == 0  # a second run finds nothing more to do


def test_elf_files_finds_programs_and_libraries_not_scripts_or_links(tmp_path):
    elf_files = _load(INSTALLER / "linux" / "elf_files.py").elf_files
    shutil.copy(sys.executable, tmp_path / "prog")
    shutil.copy(ROOT / "installer" / "build_linux.sh", tmp_path / "script.sh")
    (tmp_path / "lib").mkdir()
    shutil.copy(sys.executable, tmp_path / "lib" / "libx.so.1")
    (tmp_path / "link").symlink_to(tmp_path / "prog")
    (tmp_path / "empty").write_bytes(b"")
    found = {p.relative_to(tmp_path.resolve()).as_posix() for p in elf_files(tmp_path)}
    assert found == {"prog", "lib/libx.so.1"}


def test_build_environment_takes_runtime_requirements_without_torch():
    tomllib = pytest.importorskip("tomllib", reason="building the installers needs Python 3.11+")
    prepare = _load(INSTALLER / "prepare_env.py")
    reqs = prepare.runtime_requirements()
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    # Text reading is installed apart (OpenCV's headless build, or nothing with --no-ocr).
    assert len(reqs) == len([d for d in declared if not d.startswith("rapidocr")]) == len(declared) - 1
    assert any(r.startswith("PySide6-Essentials") for r in reqs)
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+\s*([<>=!~].*)?(;.*)?", r) and "Essentials-Essentials" not in r
               for r in reqs), reqs  # each a requirement pip takes
    assert not any(r.startswith("rapidocr") for r in reqs)
    assert not any(r.lower().startswith(("pyside6>", "pyside6=", "torch")) for r in reqs)
    assert prepare.PYINSTALLER.startswith("pyinstaller==")


def test_frozen_entry_point_gives_children_the_system_library_path(monkeypatch):
    main = _load(INSTALLER / "capdesk_main.py")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/capdesk/_internal")
    monkeypatch.setenv("LD_LIBRARY_PATH_ORIG", "/usr/lib/custom")
    main._restore_library_path()
    assert os.environ["LD_LIBRARY_PATH"] == "/usr/lib/custom" and "LD_LIBRARY_PATH_ORIG" not in os.environ

    monkeypatch.setattr(sys, "_MEIPASS", "/opt/capdesk/_internal", raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/capdesk/_internal:/usr/lib/custom")
    main._restore_library_path()
    assert os.environ["LD_LIBRARY_PATH"] == "/usr/lib/custom"

    monkeypatch.setenv("LD_LIBRARY_PATH", "/opt/capdesk/_internal")
    main._restore_library_path()
    assert "LD_LIBRARY_PATH" not in os.environ


@pytest.mark.parametrize(("exe", "platform", "as_app"), [
    (r"C:\Program Files\CapDesk\capdesk-gui.exe", "win32", True),
    (r"C:\Program Files\CapDesk\capdesk.exe", "win32", False),
    ("/Applications/CapDesk.app/Contents/MacOS/capdesk", "darwin", True),
    ("/opt/capdesk/capdesk", "linux", False),
])
def test_started_from_a_menu_opens_the_window(monkeypatch, exe, platform, as_app):
    main = _load(INSTALLER / "capdesk_main.py")
    monkeypatch.setattr(sys, "executable", exe)
    monkeypatch.setattr(sys, "platform", platform)
    assert main._started_as_app() is as_app


def test_control_template_fills_to_a_package_dpkg_reads(tmp_path):
    _need("dpkg-deb")
    pkg = tmp_path / "pkg"
    (pkg / "DEBIAN").mkdir(parents=True)
    (pkg / "opt" / "capdesk").mkdir(parents=True)
    (pkg / "opt" / "capdesk" / "README").write_text("x")
    control = (INSTALLER / "linux" / "control.in").read_text()
    for key, value in {"@VERSION@": "1.2.3", "@ARCH@": "amd64", "@INSTALLED_SIZE@": "4",
                       "@SHLIBS@": "libc6 (>= 2.36)"}.items():
        control = control.replace(key, value)
    assert "@" not in control.replace("maintainers@", "")
    (pkg / "DEBIAN" / "control").write_text(control)
    deb = tmp_path / "t.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(pkg), str(deb)], check=True,
                   capture_output=True)
    fields = subprocess.run(["dpkg-deb", "-f", str(deb), "Package", "Version", "Depends"],
                            capture_output=True, text=True, check=True).stdout
    assert "Package: capdesk" in fields and "Version: 1.2.3" in fields
    assert "libespeak-ng1" in fields and "alsa-utils" in fields


def test_installed_app_says_how_to_train_instead(monkeypatch):
    from capdesk.training_hint import training_missing

    monkeypatch.setattr(sys, "frozen", True, raising=False)
    msg = training_missing(ImportError("No module named 'torch'"))
    assert "cannot train" in msg and "pip install 'capdesk[train]'" in msg and "Import folder" in msg
    monkeypatch.setattr(sys, "frozen", False)
    assert "No module named 'torch'" in training_missing(ImportError("No module named 'torch'"))


def test_tarball_user_install_and_uninstall(tmp_path):
    """install-user.sh from the portable tarball: command and menu entry for one user, no root."""
    app = tmp_path / "capdesk-1.0"
    app.mkdir()
    shutil.copy(INSTALLER / "linux" / "install-user.sh", app)
    shutil.copy(INSTALLER / "linux" / "org.capdesk.CapDesk.desktop", app)
    shutil.copy(ROOT / "resources" / "icons" / "capdesk.png", app)
    (app / "capdesk").write_text("#!/bin/sh\necho frozen-capdesk \"$@\"\n")
    (app / "capdesk").chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    r = subprocess.run(["sh", str(app / "install-user.sh")], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    command = home / ".local" / "bin" / "capdesk"
    entry = home / ".local" / "share" / "applications" / "org.capdesk.CapDesk.desktop"
    ran = subprocess.run([str(command), "--version"], capture_output=True, text=True)
    assert ran.stdout == "frozen-capdesk --version\n"
    assert f"Exec={app}/capdesk gui %f" in entry.read_text()
    assert (home / ".local" / "share" / "icons" / "hicolor" / "256x256" / "apps" / "capdesk.png").is_file()
    assert "not on your PATH" in r.stdout
    if shutil.which("desktop-file-validate"):
        v = subprocess.run(["desktop-file-validate", str(entry)], capture_output=True, text=True)
        assert v.returncode == 0, v.stdout

    r = subprocess.run(["sh", str(app / "install-user.sh"), "--uninstall"], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert not command.exists() and not command.is_symlink() and not entry.exists()
    assert (app / "capdesk").exists()  # the unpacked app itself is the person's to delete
