#!/bin/bash
# (From the project's shared scripts, kept here so a clean clone has it.)
# A single-node Ceph cluster (1 monitor, 1 memstore OSD, cephx off) with radosgw on 127.0.0.1:PORT.
# usage: start-ceph-rgw.sh [DIR] [PORT] [MONPORT]   (Debian packages: ceph-mon ceph-osd radosgw uuid-runtime;
# starts in ~11 s; MONPORT, the monitor's port, defaults to 6789: pick another to run two clusters at once)
# S3 user: access key otakey, secret otasecret. Signature V4 is enforced. Stop (about 2 s a daemon):
#   for n in client.rgw osd.0 mon.a; do kill $(cat DIR/run/$n.pid); done; then remove DIR.
# The OSD exits without removing its pid file, so check a pid is still a ceph daemon before a later kill.
# If a step fails, the daemons already started are stopped and the script exits non-zero.
set -e
D=${1:-/tmp/ceph-rgw}; P=${2:-7480}; M=${3:-6789}
for p in $P $M; do if (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then echo "127.0.0.1:$p is in use" >&2; exit 1; fi; done
rm -rf $D; mkdir -p $D/{mon,osd,run,log}; cd $D
FSID=$(uuidgen)
cat > ceph.conf <<C
[global]
fsid = $FSID
mon host = [v1:127.0.0.1:$M]
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
osd objectstore = memstore
memstore device bytes = 2147483648
osd crush chooseleaf type = 0
# no mon commands at OSD start (the script adds it to the CRUSH map): with auth none they can race the
# monmap and fail with 'wrong fsid', which made about half of the starts exit 250
osd class update on start = false
osd crush update on start = false
run dir = $D/run
pid file = $D/run/\$name.pid
log file = $D/log/\$name.log
admin socket = $D/run/\$name.asok
ms bind ipv6 = false
[mon.a]
mon data = $D/mon/a
[osd.0]
osd data = $D/osd/0
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$P
C
C="-c $D/ceph.conf"
trap 'for f in $D/run/*.pid; do kill $(cat $f) 2>/dev/null || true; done' ERR
monmaptool --create --addv a [v1:127.0.0.1:$M] --fsid $FSID monmap >/dev/null
ceph-mon $C --mkfs -i a --monmap monmap; ceph-mon $C -i a
U=$(uuidgen); ID=$(ceph $C osd create $U); mkdir -p osd/$ID
ceph-osd $C -i $ID --mkfs --osd-uuid $U 2>/dev/null; ceph-osd $C -i $ID 2>/dev/null
ceph $C osd crush add osd.$ID 1.0 host=localhost root=default >/dev/null 2>&1
radosgw $C -n client.rgw
for i in $(seq 1 60); do curl -sf -o /dev/null http://127.0.0.1:$P/ && break; sleep 1; done
# (another server on PORT would answer too: the radosgw started here must still be running)
kill -0 $(cat $D/run/client.rgw.pid 2>/dev/null) 2>/dev/null && curl -sf -o /dev/null http://127.0.0.1:$P/ ||
  { echo "radosgw is not running or not answering on 127.0.0.1:$P: see $D/log/client.rgw.log" >&2; false; }
radosgw-admin $C user create --uid=ota --display-name=ota --access-key=otakey --secret=otasecret >/dev/null
echo "rgw up on 127.0.0.1:$P"
