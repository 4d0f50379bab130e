#!/bin/sh
# The Debian packages the tests run for real (no stand-ins), each with a file it installs. `npm test` runs this
# first (`pretest`): anything missing is installed with apt-get when running as root on a system with apt,
# otherwise the tests stop at once with the exact command to run. Add a package with one line below.
set -eu

PACKAGES='
redis-server    /usr/bin/redis-server
redis-tools     /usr/bin/redis-cli
redis-sentinel  /usr/bin/redis-sentinel
nginx           /usr/sbin/nginx
chromium        /usr/bin/chromium
openssl         /usr/bin/openssl
caddy           /usr/bin/caddy
libnginx-mod-http-js /usr/lib/nginx/modules/ngx_http_js_module.so
'

missing() {
  echo "$PACKAGES" | while read -r package file; do
    [ -z "$package" ] || [ -e "$file" ] || printf ' %s' "$package"
  done
}

need=$(missing)
[ -z "$need" ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "npm test: installing the Debian packages the tests need:$need"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  # shellcheck disable=SC2086 # one word per package
  apt-get -o DPkg::Lock::Timeout=600 install -y -qq $need >/dev/null
  need=$(missing)
  [ -z "$need" ] && exit 0
  echo "npm test: still missing after apt-get install:$need" >&2
  exit 1
fi

echo "npm test: the tests need these Debian packages:$need. Install them and run npm test again:" >&2
echo "  sudo apt-get install -y$need" >&2
exit 1
