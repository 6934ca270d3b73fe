#!/usr/bin/env sh
# Install this unpacked CapDesk for the current user only (no root): a `capdesk` command in
# ~/.local/bin and a menu entry. Remove it with: sh install-user.sh --uninstall
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${XDG_BIN_HOME:-$HOME/.local/bin}
apps=${XDG_DATA_HOME:-$HOME/.local/share}/applications
icons=${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/256x256/apps
if [ "${1:-}" = "--uninstall" ]; then
  rm -f "$bin/capdesk" "$apps/org.capdesk.CapDesk.desktop" "$icons/capdesk.png"
  echo "CapDesk's command and menu entry removed; delete $here to remove the app itself."
  exit 0
fi
mkdir -p "$bin" "$apps" "$icons"
ln -sf "$here/capdesk" "$bin/capdesk"
cp "$here/capdesk.png" "$icons/capdesk.png"
sed "s|^Exec=capdesk|Exec=$here/capdesk|" "$here/org.capdesk.CapDesk.desktop" > "$apps/org.capdesk.CapDesk.desktop"
echo "CapDesk installed for $(id -un): run 'capdesk gui' or find CapDesk in the applications menu."
case ":$PATH:" in *":$bin:"*) ;; *) echo "Note: $bin is not on your PATH." ;; esac
