#!/bin/sh
# install-deps.sh: installs everything Stagger needs to build, test and run,
# from Debian 12's own packages. Safe to run again. Needs root (or sudo).
set -eu

PACKAGES="
  build-essential autoconf automake pkg-config
  thrift-compiler libthrift-c-glib-dev
  libglib2.0-dev libglib2.0-dev-bin
  libsqlite3-dev
  libpq-dev postgresql
  libmicrohttpd-dev
  libjson-glib-dev
  libsoup-3.0-dev glib-networking
  libzookeeper-mt-dev zookeeper python3-kazoo
  libcrypt-dev openssl
  check
  python3 python3-thrift
  groff-base mandoc
  clang clang-format
  chromium fonts-dejavu-core
  podman runc conmon catatonit slirp4netns uidmap busybox-static
  iproute2
  docker-registry skopeo
  wrk
  debhelper lintian mmdebstrap curl
"
# The browser test drives Chromium with playwright-core from npm. A machine
# that already has node and npm (from elsewhere) keeps them.
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  PACKAGES="$PACKAGES nodejs npm"
fi

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "install-deps.sh: run as root (or install sudo)" >&2
  exit 1
fi

# Nothing to do when every package is already installed.
missing=""
for p in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing="$missing $p"
  fi
done
if [ -z "$missing" ] && [ "${STAGGER_FORCE_APT:-}" = "" ]; then
  echo "install-deps.sh: all dependencies are installed"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# shellcheck disable=SC2086
$SUDO apt-get install -y --no-install-recommends $PACKAGES
