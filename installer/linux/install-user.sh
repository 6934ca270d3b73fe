#!/usr/bin/env sh
# Install this unpacked CapDesk for the current user only (no root): a `capdesk` command in
# ~/.local/bin and a menu entry. Remove it with: sh install-user.sh --uninstall
#   --shortcut KEY   also bind KEY (GNOME's notation, e.g. '<Super>d') to `capdesk screen --focus --speak`,
#                    which says what the picture with the keyboard focus shows (GNOME, through gsettings;
#                    other desktops: see the README). --uninstall removes the binding too.
#   --service        also start `capdesk service` with each desktop session (an autostart entry), so that the
#                    key is answered within half a second by a CapDesk that has its model loaded (about 300 MB
#                    while idle). Where GNOME's shortcut settings are missing, the service grabs the --shortcut
#                    key itself, on any X11 desktop. --uninstall removes the entry too.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${XDG_BIN_HOME:-$HOME/.local/bin}
apps=${XDG_DATA_HOME:-$HOME/.local/share}/applications
icons=${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/256x256/apps
autostart=${XDG_CONFIG_HOME:-$HOME/.config}/autostart
# GNOME's custom shortcuts: a list of paths, each naming a relocatable keybinding (name, command, binding).
keys=org.gnome.settings-daemon.plugins.media-keys
kpath=/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/capdesk-screen/
uninstall=0
shortcut=""
service=0
while [ $# -gt 0 ]; do
  case "$1" in
    --uninstall) uninstall=1 ;;
    --service) service=1 ;;
    --shortcut) [ $# -ge 2 ] || { echo "install-user.sh: --shortcut needs a key, e.g. '<Super>d'" >&2; exit 2; }
                shortcut=$2; shift ;;
    *) echo "install-user.sh: unknown option $1 (known: --uninstall, --shortcut KEY, --service)" >&2; exit 2 ;;
  esac
  shift
done

has_gnome_keys() {
  command -v gsettings >/dev/null 2>&1 && gsettings list-schemas 2>/dev/null | grep -qx "$keys"
}

remove_shortcut() {
  has_gnome_keys || return 0
  list=$(gsettings get "$keys" custom-keybindings)
  case "$list" in *"'$kpath'"*) ;; *) return 0 ;; esac
  # Drop our path from the list, with the comma beside it; the others' shortcuts stay as they were.
  list=$(printf '%s' "$list" | sed -e "s|'$kpath', ||" -e "s|, '$kpath'||" -e "s|'$kpath'||")
  gsettings set "$keys" custom-keybindings "$list"
  for k in name command binding; do gsettings reset "$keys.custom-keybinding:$kpath" "$k"; done
  echo "The shortcut for 'capdesk screen --focus --speak' is removed."
}

if [ "$uninstall" = 1 ]; then
  remove_shortcut
  if [ -e "$autostart/org.capdesk.CapDesk.Service.desktop" ]; then
    rm -f "$autostart/org.capdesk.CapDesk.Service.desktop"
    "$here/capdesk" service --stop >/dev/null 2>&1 || true
    echo "CapDesk's service no longer starts with your session."
  fi
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
if [ -n "$shortcut" ]; then
  if has_gnome_keys; then
    one="$keys.custom-keybinding:$kpath"
    gsettings set "$one" name "CapDesk: describe the focused picture"
    # Quoted for the shell-like parsing GNOME runs the command with, so that a folder with spaces works.
    gsettings set "$one" command "\"'$here/capdesk' screen --focus --speak\""
    gsettings set "$one" binding "$shortcut"
    list=$(gsettings get "$keys" custom-keybindings)
    case "$list" in
      *"'$kpath'"*) ;;
      "@as []"|"[]") gsettings set "$keys" custom-keybindings "['$kpath']" ;;
      *) gsettings set "$keys" custom-keybindings "${list%]}, '$kpath']" ;;
    esac
    echo "Press $shortcut to hear what the picture with the keyboard focus shows."
  elif [ "$service" = 1 ]; then
    echo "No GNOME shortcut settings here: CapDesk's service grabs $shortcut itself (X11)."
  else
    echo "Note: no GNOME shortcut settings here (gsettings and $keys); bind" \
         "'$here/capdesk screen --focus --speak' to a key in your desktop's keyboard settings (see the README)," \
         "or add --service: CapDesk's service then grabs the key itself (X11)."
  fi
fi
if [ "$service" = 1 ]; then
  # Without GNOME's shortcut settings the service grabs the key itself; with them, GNOME's binding runs
  # `capdesk screen`, which the service answers. Otherwise it follows the key kept in CapDesk's Settings.
  key=""
  if [ -n "$shortcut" ] && ! has_gnome_keys; then key=" --key \"$shortcut\""; fi
  mkdir -p "$autostart"
  cat > "$autostart/org.capdesk.CapDesk.Service.desktop" <<EOF
[Desktop Entry]
Type=Application
Name=CapDesk service
Comment=Keeps CapDesk loaded so that the screen description key answers at once
Exec="$here/capdesk" service$key
Icon=capdesk
Terminal=false
NoDisplay=true
X-GNOME-Autostart-enabled=true
EOF
  echo "CapDesk's service starts with your next session; to start it now: '$here/capdesk' service &"
fi
