#!/bin/bash
# A CDN stand-in: nginx with proxy_cache (scripts/lib/cdn-nginx.conf) on 127.0.0.1:PORT in front
# of an origin, such as start-ceph-rgw.sh's radosgw.
# usage: start-cdn.sh DIR PORT ORIGIN_HOST:PORT   (Debian package: nginx)
# Its log is DIR/access.log, one line per request with the cache's verdict ($upstream_cache_status:
# HIT, MISS, EXPIRED, REVALIDATED, STALE, UPDATING). Stop: kill $(cat DIR/nginx.pid).
set -euo pipefail
D=$1; P=$2; O=$3
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "nginx is not installed (apt-get install nginx)" >&2; exit 1; }
if (exec 3<>/dev/tcp/127.0.0.1/$P) 2>/dev/null; then echo "127.0.0.1:$P is in use" >&2; exit 1; fi
rm -rf "$D"; mkdir -p "$D"/temp "$D"/cache
sed -e "s|@USER@|$(id -un)|g" -e "s|@DIR@|$D|g" -e "s|@ORIGIN@|$O|g" -e "s|@PORT@|127.0.0.1:$P|g" \
    "$(dirname "$0")/cdn-nginx.conf" > "$D/nginx.conf"
"$NGINX" -c "$D/nginx.conf" -p "$D" -e "$D/error.log"
for _ in $(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/$P) 2>/dev/null && break; sleep 0.1; done
(exec 3<>/dev/tcp/127.0.0.1/$P) 2>/dev/null || { echo "nginx did not start: see $D/error.log" >&2; exit 1; }
echo "cdn up on 127.0.0.1:$P"
