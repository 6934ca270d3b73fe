"""Entry point of the installed build (PyInstaller): the same command line as a pip install."""

import os
import sys


def _restore_library_path() -> None:
    # The bootloader points LD_LIBRARY_PATH at the bundled libraries. Programs CapDesk starts
    # (aplay for speech, exiftool for embedding) must load the system's own, not ours.
    if "LD_LIBRARY_PATH_ORIG" in os.environ:
        os.environ["LD_LIBRARY_PATH"] = os.environ.pop("LD_LIBRARY_PATH_ORIG")
        return
    bundle = getattr(sys, "_MEIPASS", None)
    parts = os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)
    if bundle and bundle in parts:
        kept = [p for p in parts if p and p != bundle]
        if kept:
            os.environ["LD_LIBRARY_PATH"] = os.pathsep.join(kept)
        else:
            os.environ.pop("LD_LIBRARY_PATH", None)


def _started_as_app() -> bool:
    # Started from the Start menu (capdesk-gui.exe) or Finder (CapDesk.app): there are no arguments
    # to read, so the window is what the person asked for.
    exe = sys.executable.replace("\\", "/").rsplit("/", 1)[-1].lower()
    return exe.startswith("capdesk-gui") or (sys.platform == "darwin" and ".app/Contents/MacOS" in sys.executable)


if __name__ == "__main__":
    _restore_library_path()
    args = [a for a in sys.argv[1:] if not a.startswith("-psn_")]  # macOS adds a process serial number
    if _started_as_app() and not args:
        args = ["gui"]
    sys.argv[1:] = args
    from capdesk.cli import main

    sys.exit(main())
