#!/usr/bin/env bash
# Build the Linux app from a clean checkout in one command:
#
#   bash installer/build_linux.sh            -> dist/capdesk_VERSION_ARCH.deb
#                                               dist/capdesk-VERSION-linux-ARCH.tar.gz
#
# Steps: a build virtualenv (build/installer-venv, installer/prepare_env.py) with the app's runtime
# packages and PyInstaller, never torch; PyInstaller (installer/capdesk.spec) makes a one-folder app; identical files are
# hard-linked (the bundled models share one encoder); dpkg-deb packs /opt/capdesk, the `capdesk`
# command, the desktop entry and icons.
#
# Options:
#   --no-ocr        leave text reading out (saves ~160 MB: OpenCV); the app then reads no text
#   --models "A B"  model bundles from models/ to put inside (default: "everyday aerial")
#   --clean         start from a new virtualenv
# Needs: Debian or Ubuntu, python3 (3.11+) with venv, network access to PyPI (or a local index);
# the Debian packages it reads are installed when run as root (else it names them).
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
APP_ID=org.capdesk.CapDesk  # desktop entry and AppStream id
# Debian packages the build reads: dpkg-shlibdeps (dpkg-dev) and the system libraries that Qt's
# plugins link against but PyInstaller leaves to the system (Wayland), so that they can be named
# as the package's dependencies.
build_debs=(dpkg-dev binutils file libwayland-client0 libwayland-cursor0 libwayland-egl1 libxcb-cursor0
            libxkbcommon-x11-0 libegl1 libgl1)
missing=()
for p in "${build_debs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    bash scripts/install-system-packages.sh "${missing[@]}" >/dev/null
  else
    echo "build_linux.sh: install these first: sudo apt-get install ${missing[*]}" >&2; exit 2
  fi
fi
command -v "$PY" >/dev/null || { echo "build_linux.sh: $PY is needed" >&2; exit 2; }
VERSION=$(sed -n 's/^__version__ = "\(.*\)"/\1/p' capdesk/__init__.py)
ARCH=$(dpkg --print-architecture)
[ -n "$VERSION" ] || { echo "build_linux.sh: no __version__ in capdesk/__init__.py" >&2; exit 2; }

echo "== build virtualenv ($VENV)"
[ "$CLEAN" = 1 ] && rm -rf "$VENV"
if [ "$OCR" = 1 ]; then "$PY" installer/prepare_env.py "$VENV"; else "$PY" installer/prepare_env.py "$VENV" --no-ocr; fi
VPY=$ROOT/$VENV/bin/python

echo "== PyInstaller"
rm -rf build/pyinstaller
CAPDESK_BUNDLE_MODELS="$MODELS" CAPDESK_BUNDLE_OCR="$OCR" CAPDESK_VERSION="$VERSION" \
  "$VPY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --distpath build/pyinstaller/dist --workpath build/pyinstaller/work installer/capdesk.spec
APP=build/pyinstaller/dist/capdesk
# Debug sections (libpython from a source-built Python, some wheels) are ~35 MB nobody runs;
# --strip-debug keeps the symbol tables that loading needs.
"$VPY" installer/linux/elf_files.py "$APP" | xargs -r -d '\n' file -N \
  | sed -n 's/: ELF.*with debug_info.*//p' | xargs -r -d '\n' strip --strip-debug
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
install -m 644 installer/linux/$APP_ID.desktop "$PKG/usr/share/applications/$APP_ID.desktop"
install -m 644 installer/linux/$APP_ID.metainfo.xml "$PKG/usr/share/metainfo/$APP_ID.metainfo.xml"
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
"$VPY" installer/linux/elf_files.py "$PKG/opt/capdesk" > "$SHL/elves"
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
install -m 644 installer/linux/$APP_ID.desktop resources/icons/capdesk.png "$TARDIR/"
install -m 755 installer/linux/install-user.sh "$TARDIR/install-user.sh"
tar -C build/tar -czf "$TAR" "capdesk-$VERSION"

end=$(date +%s)
echo "== done in $((end - start)) s"
printf '%s\t%s\n' "$(du -h "$DEB" | cut -f1)" "$DEB" "$(du -h "$TAR" | cut -f1)" "$TAR"
echo "installed size: $((installed_kb / 1024)) MiB under /opt/capdesk and /usr/share"
