#!/usr/bin/env bash
# Debian packages the tests and the app use: Python's venv module (python3-venv: Debian and Ubuntu
# leave it out of python3, and the README's commands make a virtual environment), speech
# (espeak-ng), a virtual display (xvfb) and the X/EGL libraries Qt loads, exiftool (the reference
# reader of XMP sidecars), Java (METEOR), the validators of the desktop entry and AppStream
# metadata the installer ships, strace (the no-network test traces every socket call), GNOME's
# keyboard-shortcut schema (install-user.sh --shortcut is tested against it; one package, about 2 s),
# and a real browser on the accessibility bus for `capdesk screen --focus` (firefox-esr, at-spi2-core,
# and xdotool to press Tab in it; about 70 MB), speech-dispatcher with its espeak-ng module (the screen key
# speaks through it where it runs), gsettings (libglib2.0-bin) and gcc (a test builds a Qt plugin
# with a missing library). A package this system's apt does not offer (Ubuntu has
# no firefox-esr outside a PPA) is named and skipped, and the tests that need it skip saying so.
# With arguments, installs those packages instead (the installer's build and smoke test use it);
# --app among them stands for what the app itself needs (the README's Quick start): Python's venv module,
# the libGL and GLib that text reading (OpenCV) loads, the X/EGL libraries Qt's window loads, the espeak-ng
# voice and aplay (alsa-utils) to speak aloud. Another apt holding the lock is waited for (5 minutes).
# Only what is missing is installed, with sudo unless run as root. Where there is no dpkg and apt-get
# (not Debian or Ubuntu), it names the packages and leaves them to you.
set -euo pipefail
APP=(python3-venv libgl1 libglib2.0-0 libegl1 libxkbcommon0 libxkbcommon-x11-0 libdbus-1-3 libfontconfig1
     libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-shape0 libxcb-xinerama0 libxcb-randr0 libxcb-image0
     libxcb-render-util0 espeak-ng libespeak-ng1 alsa-utils)
pkgs=()
for a in "$@"; do
  if [ "$a" = "--app" ]; then pkgs+=("${APP[@]}"); else pkgs+=("$a"); fi
done
[ ${#pkgs[@]} -gt 0 ] || pkgs=(python3-venv espeak-ng libespeak-ng1 xvfb libegl1 libgl1 libglib2.0-0 libxkbcommon0
      libxkbcommon-x11-0 libdbus-1-3 libfontconfig1 fonts-dejavu-core libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1
      libxcb-shape0 libxcb-xinerama0 libxcb-randr0 libxcb-image0 libxcb-render-util0 libimage-exiftool-perl sox
      desktop-file-utils appstream strace epubcheck libreoffice-writer-nogui libreoffice-impress-nogui
      gnome-settings-daemon-common libglib2.0-bin firefox-esr at-spi2-core xdotool speech-dispatcher
      speech-dispatcher-espeak-ng gcc)
if ! command -v dpkg >/dev/null || ! command -v apt-get >/dev/null; then
  echo "install-system-packages.sh: not a Debian or Ubuntu system; install what these Debian packages give, if" \
       "needed, with your system's tools: ${pkgs[*]}" >&2
  exit 0
fi
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
offered=()
for p in "${missing[@]}"; do
  # Not `apt-cache policy | grep -q`: grep leaves at the first match, apt-cache then dies of SIGPIPE and,
  # under pipefail, a package apt does offer was taken for one it does not.
  policy=$(apt-cache policy "$p" 2>/dev/null || true)
  if [[ $policy == *"Candidate: "[!\(]* ]]; then offered+=("$p")
  else echo "install-system-packages.sh: apt does not offer $p here; skipped" >&2; fi
done
[ ${#offered[@]} -gt 0 ] || exit 0
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends "${offered[@]}"
