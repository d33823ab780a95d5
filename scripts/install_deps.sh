#!/usr/bin/env bash
# Install the Debian packages pegasos needs to build and test (only the missing
# ones). Runs apt-get as root, or through sudo otherwise.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config ccache
          libeigen3-dev nlohmann-json3-dev libtbb-dev catch2 libcli11-dev libfast-float-dev zlib1g-dev libxxhash-dev)
# `pegasos run` draws its plots with gnuplot: gnuplot-nox unless a gnuplot is there.
command -v gnuplot >/dev/null || packages+=(gnuplot-nox)
packages+=("$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
