#!/usr/bin/env bash
# Build the Linux app from a clean checkout in one command:
#
#   bash installer/build_linux.sh            -> dist/capdesk_VERSION_ARCH.deb
#                                               dist/capdesk-VERSION-linux-ARCH.tar.gz
#
# Steps: a build virtualenv (build/installer-venv) with the app's runtime packages and PyInstaller,
# never torch; PyInstaller (installer/capdesk.spec) makes a one-folder app; identical files are
# hard-linked (the bundled models share one encoder); dpkg-deb packs /opt/capdesk, the `capdesk`
# command, the desktop entry and icons.
#
# Options:
#   --no-ocr        leave text reading out (saves ~160 MB: OpenCV); the app then reads no text
#   --models "A B"  model bundles from models/ to put inside (default: "everyday aerial")
#   --clean         start from a new virtualenv
# Needs: python3 (3.10+) with venv, dpkg-deb and dpkg-shlibdeps (dpkg-dev), file, and network access to PyPI (or a local index).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OCR=1
MODELS="everyday aerial"
CLEAN=0
while [ $# -gt 0 ]; do
  case "$1" in
    --no-ocr) OCR=0 ;;
    --models) MODELS="$2"; shift ;;
    --clean) CLEAN=1 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "build_linux.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done

start=$(date +%s)
PY=${PYTHON:-python3}
VENV=build/installer-venv
PYINSTALLER_VERSION=6.22.3
for tool in "$PY" dpkg-deb dpkg-shlibdeps file; do
  command -v "$tool" >/dev/null || { echo "build_linux.sh: $tool is needed" >&2; exit 2; }
done
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' capdesk/__init__.py)
ARCH=$(dpkg --print-architecture)
[ -n "$VERSION" ] || { echo "build_linux.sh: no __version__ in capdesk/__init__.py" >&2; exit 2; }

echo "== build virtualenv ($VENV)"
[ "$CLEAN" = 1 ] && rm -rf "$VENV"
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
VPY=$ROOT/$VENV/bin/python
"$VPY" -m pip install -q --upgrade pip
# The app itself from this checkout (not editable: PyInstaller reads the installed files),
# without extras: training (torch) is not part of the installed app.
"$VPY" -m pip install -q "pyinstaller==$PYINSTALLER_VERSION" .
if [ "$OCR" = 1 ]; then
  # rapidocr asks for opencv-python, which drags Qt 5 and GUI libraries along; the headless
  # build has what text reading uses.
  "$VPY" -m pip install -q opencv-python-headless pyclipper "Shapely!=2.0.4" PyYAML six
  "$VPY" -m pip install -q --no-deps "rapidocr-onnxruntime>=1.3"
  "$VPY" -m pip uninstall -q -y opencv-python 2>/dev/null || true
else
  "$VPY" -m pip uninstall -q -y rapidocr-onnxruntime opencv-python opencv-python-headless 2>/dev/null || true
fi
if "$VPY" -c "import torch" 2>/dev/null; then
  echo "build_linux.sh: torch is in the build environment; the app must not carry it" >&2; exit 1
fi

echo "== PyInstaller"
rm -rf build/pyinstaller
CAPDESK_BUNDLE_MODELS="$MODELS" CAPDESK_BUNDLE_OCR="$OCR" CAPDESK_VERSION="$VERSION" \
  "$VPY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath build/pyinstaller/dist --workpath build/pyinstaller/work installer/capdesk.spec
APP=build/pyinstaller/dist/capdesk
"$VPY" installer/linux/dedupe.py "$APP"
# The frozen app must start and find its models before it is packaged.
env -i HOME="$ROOT/build" PATH=/usr/bin:/bin "$APP/capdesk" --version
env -i HOME="$ROOT/build" PATH=/usr/bin:/bin "$APP/capdesk" models verify >/dev/null

echo "== Debian package"
PKG=build/deb/capdesk_${VERSION}_${ARCH}
rm -rf build/deb && mkdir -p "$PKG/DEBIAN" "$PKG/opt" "$PKG/usr/bin" "$PKG/usr/share/applications" \
  "$PKG/usr/share/doc/capdesk" "$PKG/usr/share/metainfo"
cp -a "$APP" "$PKG/opt/capdesk"
ln -s ../../opt/capdesk/capdesk "$PKG/usr/bin/capdesk"
install -m 644 installer/linux/capdesk.desktop "$PKG/usr/share/applications/capdesk.desktop"
install -m 644 installer/linux/capdesk.metainfo.xml "$PKG/usr/share/metainfo/capdesk.metainfo.xml"
for size in 16 32 48 64 128; do
  install -D -m 644 "resources/icons/capdesk-$size.png" "$PKG/usr/share/icons/hicolor/${size}x${size}/apps/capdesk.png"
done
install -D -m 644 resources/icons/capdesk.png "$PKG/usr/share/icons/hicolor/256x256/apps/capdesk.png"
install -m 644 installer/linux/copyright "$PKG/usr/share/doc/capdesk/copyright"
# Everything readable, nothing group/world-writable, whatever the builder's umask was.
chmod -R u+rwX,go+rX,go-w "$PKG"
installed_kb=$(du -sk --exclude=DEBIAN "$PKG" | cut -f1)
# The system libraries the bundle links against, as Debian package dependencies: dpkg-shlibdeps
# reads every ELF file; libraries inside the bundle (-l) are private and need nothing.
SHL=build/shlibs
rm -rf "$SHL" && mkdir -p "$SHL/debian"
printf 'Source: capdesk\n\nPackage: capdesk\nArchitecture: any\n' > "$SHL/debian/control"
find "$PKG/opt/capdesk" -type f \( -name '*.so*' -o -perm -u+x \) -print0 \
  | xargs -0 file -N --mime-type | sed -n 's|^\(.*\): application/x-\(pie-executable\|sharedlib\|executable\)$|\1|p' \
  | sed "s|^|$ROOT/|" > "$SHL/elves"
libdirs=$(sed 's|/[^/]*$||' "$SHL/elves" | sort -u | sed 's|^|-l|')
# shellcheck disable=SC2086
SHLIBS=$(cd "$SHL" && xargs -a elves dpkg-shlibdeps -O --warnings=0 $libdirs 2>deps.err | sed -n 's/^shlibs:Depends=//p')
[ -n "$SHLIBS" ] || { cat "$SHL/deps.err" >&2; echo "build_linux.sh: dpkg-shlibdeps found nothing" >&2; exit 1; }
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@INSTALLED_SIZE@/$installed_kb/" -e "s/@SHLIBS@/$SHLIBS/" \
  installer/linux/control.in > "$PKG/DEBIAN/control"
mkdir -p dist
DEB=dist/capdesk_${VERSION}_${ARCH}.deb
dpkg-deb --root-owner-group -Zxz --build "$PKG" "$DEB" >/dev/null

echo "== portable tarball"
TAR=dist/capdesk-${VERSION}-linux-${ARCH}.tar.gz
TARDIR=build/tar/capdesk-$VERSION
rm -rf build/tar && mkdir -p "$TARDIR"
cp -a "$APP"/. "$TARDIR/"
install -m 644 installer/linux/capdesk.desktop resources/icons/capdesk.png "$TARDIR/"
install -m 755 installer/linux/install-user.sh "$TARDIR/install-user.sh"
tar -C build/tar -czf "$TAR" "capdesk-$VERSION"

end=$(date +%s)
echo "== done in $((end - start)) s"
printf '%s\t%s\n' "$(du -h "$DEB" | cut -f1)" "$DEB" "$(du -h "$TAR" | cut -f1)" "$TAR"
echo "installed size: $((installed_kb / 1024)) MiB under /opt/capdesk and /usr/share"
