#!/usr/bin/env bash
# Smoke test of the Linux package, as CI runs it (root needed):
#
#   bash installer/smoke_test_linux.sh [--no-build] [--keep-root] [--machine]
#
# 1. builds dist/capdesk_*.deb with installer/build_linux.sh (--no-build: use the one there);
# 2. checks the package: size (against a budget), contents (models, desktop entry, no torch);
# 3. makes a fresh, minimal Debian root with debootstrap (no Python in it) and, inside it,
#    installs the .deb with apt (dependencies from Debian), runs `capdesk --version`,
#    `capdesk caption` on the samples (the captions must equal those of the project's own
#    Python environment when it is installed here), `capdesk caption --wav` (real speech),
#    and `capdesk gui` on an Xvfb display until its window is mapped;
# 4. purges the package and checks that nothing of it is left in that root.
# --machine (or a root that cannot be made: no mirror, no mount) tests on this machine itself.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=1
KEEP=0
TARGET=root
for a in "$@"; do
  case "$a" in
    --no-build) BUILD=0 ;;
    --keep-root) KEEP=1 ;;
    --machine) TARGET=machine ;;
    *) echo "smoke_test_linux.sh: unknown option $a" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "smoke_test_linux.sh: run as root (debootstrap, chroot, dpkg)" >&2; exit 2; }
DEB_BUDGET_MB=${DEB_BUDGET_MB:-250}          # the .deb a person downloads
INSTALLED_BUDGET_MB=${INSTALLED_BUDGET_MB:-600}
SUITE=${SUITE:-bookworm}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
fail() { echo "SMOKE FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

bash scripts/install-system-packages.sh debootstrap xvfb xdotool x11-utils file dpkg-dev >/dev/null

if [ "$BUILD" = 1 ]; then
  step "build"
  t0=$(date +%s)
  bash installer/build_linux.sh
  echo "build time: $(( $(date +%s) - t0 )) s"
fi
DEB=$(ls -t dist/capdesk_*.deb 2>/dev/null | head -1)
[ -n "$DEB" ] || fail "no dist/capdesk_*.deb (build it with installer/build_linux.sh)"

step "package: $DEB"
deb_mb=$(( $(stat -c %s "$DEB") / 1048576 ))
inst_mb=$(( $(dpkg-deb -f "$DEB" Installed-Size) / 1024 ))
echo "size: .deb ${deb_mb} MiB (budget ${DEB_BUDGET_MB}), installed ${inst_mb} MiB (budget ${INSTALLED_BUDGET_MB})"
[ "$deb_mb" -le "$DEB_BUDGET_MB" ] || fail ".deb is ${deb_mb} MiB, over the ${DEB_BUDGET_MB} MiB budget"
[ "$inst_mb" -le "$INSTALLED_BUDGET_MB" ] || fail "installed size ${inst_mb} MiB is over the ${INSTALLED_BUDGET_MB} MiB budget"
listing=$(dpkg-deb -c "$DEB" | awk '{print $6}')
for want in ./opt/capdesk/capdesk ./usr/bin/capdesk ./usr/share/applications/org.capdesk.CapDesk.desktop \
            ./usr/share/icons/hicolor/256x256/apps/capdesk.png ./opt/capdesk/_internal/models/everyday/manifest.json \
            ./opt/capdesk/_internal/models/everyday/encoder.onnx; do
  grep -qx "$want" <<<"$listing" || fail "$want is not in the package"
done
if grep -qiE '/(torch|training)/|libtorch' <<<"$listing"; then fail "the package carries torch or the training code"; fi
dpkg-deb -f "$DEB" Depends

CH=$ROOT/build/smoke-root
XVFB_PID=""
INSTALLED=0
cleanup() {
  [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
  if [ "$TARGET" = machine ] && [ "$INSTALLED" = 1 ]; then  # a failed run leaves this machine as it was
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq capdesk >/dev/null 2>&1 || true
  fi
  for m in tmp/.X11-unix dev/pts dev sys proc; do umount -l "$CH/$m" 2>/dev/null || true; done
  if [ "$KEEP" = 0 ]; then rm -rf "$CH"; fi
}
trap cleanup EXIT
cleanup
make_root() {
  local cache=$ROOT/build/debootstrap-$SUITE.tgz  # a second run starts from the downloaded packages
  if [ ! -f "$cache" ]; then
    debootstrap --variant=minbase --make-tarball="$cache.part" "$SUITE" "$ROOT/build/debootstrap-work" "$MIRROR" >/dev/null \
      && mv "$cache.part" "$cache"
    rm -rf "$ROOT/build/debootstrap-work"
  fi
  [ -f "$cache" ] && debootstrap --variant=minbase --unpack-tarball="$cache" "$SUITE" "$CH" "$MIRROR" >/dev/null \
    && mount -t proc proc "$CH/proc" && mount --bind /sys "$CH/sys" && mount --bind /dev "$CH/dev" \
    && mount --bind /dev/pts "$CH/dev/pts" && cp /etc/resolv.conf "$CH/etc/resolv.conf"
}
if [ "$TARGET" = root ]; then
  step "fresh Debian root ($SUITE, minbase)"
  if ! make_root; then
    # The issue allows either; say loudly which one this run tested.
    echo "!! could not make a fresh Debian root (debootstrap or mount failed): testing on this machine instead" >&2
    cleanup
    TARGET=machine
  fi
fi
if [ "$TARGET" = root ]; then
  RUN=(chroot "$CH")
  OUT=$CH  # where files inside the target are seen from here
else
  step "this machine"
  RUN=()
  OUT=""
  dpkg -s capdesk >/dev/null 2>&1 && fail "a capdesk package is already installed here"
fi
# A bare environment and no /usr/local: `capdesk` must be the package's /usr/bin/capdesk, not a
# pip-installed one.
in_root() { "${RUN[@]}" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp/smoke/home LANG=C.UTF-8 "$@"; }
if [ "$TARGET" = root ]; then
  in_root sh -c 'command -v python3 || command -v python' && fail "the fresh root has a Python"
fi
rm -rf "$OUT/tmp/smoke" && mkdir -p "$OUT/tmp/smoke/home" "$OUT/tmp/smoke/samples"
# Everything in the target before the app comes, to tell afterwards what it left behind.
snapshot() { (cd "$OUT/" && find . -xdev -path ./proc -prune -o -path ./sys -prune -o -path ./dev -prune \
  -o -path ./tmp -prune -o -path ./home -prune -o -path ./root -prune -o -path ./var/lib/apt -prune \
  -o -path ./var/cache -prune -o -path ./var/log -prune -o -path ./var/lib/dpkg -prune -o -path ".$ROOT" -prune \
  -o -print | sort); }
snapshot > "$ROOT/build/smoke-before.txt"

step "apt install ./$(basename "$DEB")"
cp "$DEB" "$OUT/tmp/smoke/capdesk.deb"
cp resources/samples/* "$OUT/tmp/smoke/samples/"
in_root apt-get update -qq
t0=$(date +%s)
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/smoke/capdesk.deb >/dev/null
echo "apt install (with dependencies) took $(( $(date +%s) - t0 )) s"
INSTALLED=1
if [ "$TARGET" = root ]; then
  in_root sh -c 'command -v python3 || command -v python' && fail "installing the app brought a Python along"
fi

step "capdesk --version"
where=$(in_root sh -c 'readlink -f "$(command -v capdesk)"')
[ "$where" = /opt/capdesk/capdesk ] || fail "capdesk on the PATH is $where, not /opt/capdesk/capdesk"
ver=$(in_root capdesk --version)
echo "$ver"
[ "$ver" = "capdesk $(sed -n 's/^__version__ = "\(.*\)"/\1/p' capdesk/__init__.py)" ] || fail "--version said '$ver'"

step "capdesk caption"
in_root capdesk caption --json /tmp/smoke/samples/astronaut.png /tmp/smoke/samples/page.png /tmp/smoke/samples/chelsea.png \
  > "$ROOT/build/smoke-captions.jsonl" || fail "capdesk caption failed"
cat "$ROOT/build/smoke-captions.jsonl"
python_ok=0
if python3 -c "import capdesk.cli" 2>/dev/null; then python_ok=1; fi
python3 - "$ROOT/build/smoke-captions.jsonl" "$python_ok" <<'EOF'
import json, subprocess, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert len(rows) == 3, rows
by = {r["path"].rsplit("/", 1)[1]: r for r in rows}
astro = by["astronaut.png"]
assert astro["error"] is None and astro["model"] and astro["provider"] == "cpu", astro
assert len(astro["words"]) >= 3 and astro["description"], astro
page = by["page.png"]
assert page["text"] and len(page["text"]) > 20, f"no text read from page.png: {page}"
if sys.argv[2] == "1":  # the same captions as the project's own Python environment
    expect = subprocess.run([sys.executable, "-m", "capdesk.cli", "caption", "--json",
                             "resources/samples/astronaut.png", "resources/samples/page.png",
                             "resources/samples/chelsea.png"], capture_output=True, text=True, check=True)
    for line in expect.stdout.splitlines():
        e = json.loads(line)
        got = by[e["path"].rsplit("/", 1)[1]]
        for key in ("caption", "words", "description", "text", "in_domain", "model"):
            assert got[key] == e[key], f"{e['path']}: {key}: installed app {got[key]!r} != source {e[key]!r}"
    print("installed app's captions equal the source tree's")
print("captions ok:", astro["description"])
EOF

step "capdesk train (not part of the installed app: it must say so)"
if in_root capdesk train fit --help > /dev/null 2> "$ROOT/build/smoke-train.err"; then fail "capdesk train ran"; fi
grep -q "pip install 'capdesk\[train\]'" "$ROOT/build/smoke-train.err" || { cat "$ROOT/build/smoke-train.err"; fail "capdesk train gave no way forward"; }
cat "$ROOT/build/smoke-train.err"

step "capdesk caption --wav (speech)"
in_root capdesk caption --wav /tmp/smoke/speech.wav /tmp/smoke/samples/astronaut.png >/dev/null || fail "speech to WAV failed"
python3 - "$OUT/tmp/smoke/speech.wav" <<'EOF'
import sys, wave
with wave.open(sys.argv[1]) as w:
    seconds = w.getnframes() / w.getframerate()
    frames = w.readframes(w.getnframes())
assert seconds > 0.5, f"only {seconds:.2f} s of audio"
assert any(frames[i] not in (0, 255) for i in range(0, len(frames), 97)), "the audio is silent"
print(f"speech: {seconds:.1f} s of audio")
EOF

step "capdesk gui under Xvfb"
DISP=:$(( 90 + RANDOM % 100 ))
Xvfb "$DISP" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
XVFB_PID=$!
for _ in $(seq 100); do [ -S "/tmp/.X11-unix/X${DISP#:}" ] && break; sleep 0.1; done
[ -S "/tmp/.X11-unix/X${DISP#:}" ] || fail "Xvfb did not start"
if [ "$TARGET" = root ]; then mkdir -p "$CH/tmp/.X11-unix" && mount --bind /tmp/.X11-unix "$CH/tmp/.X11-unix"; fi
"${RUN[@]}" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/tmp/smoke/home LANG=C.UTF-8 DISPLAY="$DISP" \
  capdesk gui /tmp/smoke/samples > "$ROOT/build/smoke-gui.log" 2>&1 &
GUI_PID=$!
# xdotool waits (--sync) until a visible window named CapDesk exists; timeout bounds the wait.
if ! WID=$(DISPLAY=$DISP timeout 120 xdotool search --sync --onlyvisible --name '^CapDesk'); then
  cat "$ROOT/build/smoke-gui.log" >&2; fail "no CapDesk window appeared"
fi
kill -0 "$GUI_PID" 2>/dev/null || fail "the GUI exited"
DISPLAY=$DISP xwininfo -id "$(head -1 <<<"$WID")" | grep -E 'xwininfo|Width|Height|Map State'
# capdesk screen: the packaged app captures the window's pixels and describes them (X11, python-xlib).
"${RUN[@]}" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/tmp/smoke/home LANG=C.UTF-8 DISPLAY="$DISP" \
  capdesk screen --region 0,0,320,240 --json > "$ROOT/build/smoke-screen.json" 2> "$ROOT/build/smoke-screen.log" \
  || { cat "$ROOT/build/smoke-screen.log" >&2; fail "capdesk screen failed"; }
python3 -c 'import json, sys; d = json.loads(open(sys.argv[1]).readline()); assert d["error"] is None and d["captured"]["rect"]["width"] == 320, d' \
  "$ROOT/build/smoke-screen.json" || fail "capdesk screen gave no description"
echo "screen: $(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["captured"])' "$ROOT/build/smoke-screen.json")"
kill "$GUI_PID"; wait "$GUI_PID" 2>/dev/null || true
if [ "$TARGET" = root ]; then umount -l "$CH/tmp/.X11-unix"; fi

step "purge"
files=$(in_root dpkg -L capdesk | wc -l)
in_root env DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq capdesk >/dev/null
INSTALLED=0
in_root dpkg -s capdesk >/dev/null 2>&1 && fail "capdesk is still installed"
snapshot > "$ROOT/build/smoke-after.txt"
left=$(comm -13 "$ROOT/build/smoke-before.txt" "$ROOT/build/smoke-after.txt" \
       | grep -E '^\./(opt|usr/bin|usr/share/(applications|icons|metainfo|doc))/|capdesk' \
       | grep -v -E '^\./usr/share/(applications/mimeinfo\.cache|icons/hicolor/icon-theme\.cache)$' \
       | grep -v -E '^\./usr/share/icons/hicolor(/[0-9x]+(/apps)?)?$' || true)
# What the app's dependencies brought (icon sizes' folders, other packages' files) is theirs;
# anything named capdesk or under /opt is ours.
ours=$(grep -E 'capdesk|^\./opt/' <<<"$left" || true)
[ -z "$ours" ] || fail "left behind after purge: $ours"
for cache in usr/share/applications/mimeinfo.cache usr/share/icons/hicolor/icon-theme.cache; do
  if [ -f "$OUT/$cache" ] && grep -qi capdesk "$OUT/$cache"; then fail "$cache still names capdesk"; fi
done
echo "purged: ${files} packaged paths gone, nothing named capdesk left"
echo "SMOKE OK ($TARGET): .deb ${deb_mb} MiB, installed ${inst_mb} MiB"
