#!/usr/bin/env bash
# Install the Debian packages listed in scripts/system-packages.txt (X server, window manager,
# browser, ...) that some tests drive. Needs root (CI runs as root); skipped with a note otherwise.
# Tests that need one of them skip when it is missing, except under CI=true, where they fail.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t pkgs < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e 's/^[[:space:]]*//' -e '/^$/d' scripts/system-packages.txt)
[ "${#pkgs[@]}" -gt 0 ] || exit 0
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ "${#missing[@]}" -gt 0 ] || exit 0
if [ "$(id -u)" != 0 ]; then
  echo "system-packages: not root; tests needing ${missing[*]} will be skipped" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
