#!/usr/bin/env bash
# Build CapDesk.app and a .dmg on macOS (untested: no Mac here). From the project folder:
#
#   bash installer/macos/build_macos.sh [--no-ocr]
#
# Needs Python 3.11+ (python.org or Homebrew) and the Xcode command line tools (codesign,
# hdiutil). Leaves dist/CapDesk-VERSION-macos-ARCH.dmg; the app is signed ad hoc, so on first
# start a person right-clicks it and chooses Open (or a developer ID signs and notarises it).
# Speech uses the system's voices (NSSpeechSynthesizer through pyttsx3).
set -euo pipefail
cd "$(dirname "$0")/../.."
OCR=1
[ "${1:-}" = "--no-ocr" ] && OCR=0
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' capdesk/__init__.py)
ARCH=$(uname -m)
VENV=build/installer-venv
if [ "$OCR" = 1 ]; then python3 installer/prepare_env.py "$VENV"; else python3 installer/prepare_env.py "$VENV" --no-ocr; fi
CAPDESK_BUNDLE_OCR=$OCR CAPDESK_VERSION=$VERSION "$VENV/bin/python" -m PyInstaller --noconfirm --clean \
  --log-level WARN --distpath build/pyinstaller/dist --workpath build/pyinstaller/work installer/capdesk.spec
APP=build/pyinstaller/dist/CapDesk.app
"$APP/Contents/MacOS/capdesk" --version
"$APP/Contents/MacOS/capdesk" models verify >/dev/null
codesign --force --deep --sign - "$APP"
STAGE=build/dmg
rm -rf "$STAGE" && mkdir -p "$STAGE" dist
cp -R "$APP" "$STAGE/"
ln -s /Applications "$STAGE/Applications"
DMG=dist/CapDesk-$VERSION-macos-$ARCH.dmg
hdiutil create -volname "CapDesk $VERSION" -srcfolder "$STAGE" -ov -format UDZO "$DMG"
echo "built $DMG ($(du -h "$DMG" | cut -f1))"
echo "command line: ln -s /Applications/CapDesk.app/Contents/MacOS/capdesk /usr/local/bin/capdesk"
