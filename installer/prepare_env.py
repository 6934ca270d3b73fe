"""Make the build environment of the installed app, the same way on Linux, macOS and Windows.

    python installer/prepare_env.py VENV [--no-ocr]

A virtualenv with the app's runtime requirements (from pyproject.toml, no extras), the app itself
from this checkout, and PyInstaller. Never torch: training is a pip extra, not part of the app.
Qt comes as PySide6-Essentials, the part of pyside6 the app loads (the rest, WebEngine included,
is ~600 MB the app never uses). Text reading (rapidocr) comes with OpenCV's headless build:
rapidocr asks for opencv-python, which drags Qt 5 and GUI libraries along.
Prints the virtualenv's python, for the build scripts.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import venv
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
PYINSTALLER = "pyinstaller==6.22.3"
OCR_PACKAGES = ["opencv-python-headless", "pyclipper", "Shapely!=2.0.4", "PyYAML", "six"]
OCR_NO_DEPS = "rapidocr-onnxruntime>=1.3"


def runtime_requirements() -> list[str]:
    """The package's dependencies, less text reading (added below with OpenCV's headless build, or
    left out): installing rapidocr with its own dependencies would bring opencv-python, whose
    removal afterwards deletes the cv2 files the headless build shares with it."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    # (pyproject names PySide6-Essentials itself now; an older "pyside6" is still narrowed to it)
    return [re.sub(r"^pyside6(?=\s*[<>=!~;]|$)", "PySide6-Essentials", d, flags=re.I) for d in deps
            if not re.match(r"^rapidocr", d, flags=re.I)]


def venv_python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def pip(py: Path, *args: str) -> None:
    subprocess.run([str(py), "-m", "pip", *args], check=True)


def prepare(folder: Path, ocr: bool = True) -> Path:
    py = venv_python(folder)
    if not py.exists():
        venv.create(folder, with_pip=True)
    pip(py, "install", "-q", "--upgrade", "pip")
    pip(py, "install", "-q", PYINSTALLER, *runtime_requirements())
    # Not editable: PyInstaller reads the installed package.
    pip(py, "install", "-q", "--no-deps", "--force-reinstall", str(ROOT))
    if ocr:
        pip(py, "install", "-q", *OCR_PACKAGES)
        pip(py, "install", "-q", "--no-deps", OCR_NO_DEPS)
        pip(py, "uninstall", "-q", "-y", "opencv-python")
    else:
        pip(py, "uninstall", "-q", "-y", "rapidocr-onnxruntime", "opencv-python", "opencv-python-headless")
    probe = subprocess.run([str(py), "-c", "import torch"], capture_output=True)
    if probe.returncode == 0:
        raise SystemExit(f"prepare_env: torch is installed in {folder}; the app must not carry it")
    return py


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("venv", type=Path)
    ap.add_argument("--no-ocr", action="store_true", help="leave text reading (OpenCV, ~160 MB) out")
    ns = ap.parse_args()
    print(prepare(ns.venv.resolve(), ocr=not ns.no_ocr))


if __name__ == "__main__":
    main()
