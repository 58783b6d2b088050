#!/bin/sh
# osd-targetd against Debian's libiscsi tools (libiscsi-bin): iscsi-ls must
# list the target and both LUNs as OSD devices, iscsi-inq must report
# peripheral device type 0x11 (OSD), a bad login must fail, and SIGTERM must
# stop the daemon cleanly. Only 127.0.0.1 and a port the kernel picks.
# Usage: test_iscsi_tools.sh /path/to/osd-targetd     (exit 77: tools missing)
set -u

DAEMON=$1
IQN=iqn.2026-12.org.osd:tools-test
for tool in iscsi-ls iscsi-inq timeout; do
	command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool not installed"; exit 77; }
done

DIR=$(mktemp -d "${TMPDIR:-/tmp}/osd-iscsi-tools.XXXXXX") || exit 1
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*"
	echo "--- daemon log:"
	cat "$DIR/log"
	exit 1
}

# Usage errors exit 2.
"$DAEMON" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no DIR should exit 2"
"$DAEMON" --bogus "$DIR/x" >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad option should exit 2"
"$DAEMON" --chap-user u "$DIR/x" >/dev/null 2>&1; [ $? -eq 2 ] || fail "chap-user alone should exit 2"
"$DAEMON" --version | grep -q '^osd-targetd ' || fail "--version"
"$DAEMON" --help | grep -q -- '--port-file' || fail "--help"
"$DAEMON" "$DIR/missing" 2>/dev/null; [ $? -eq 1 ] || fail "missing store without --create should exit 1"

printf 'tools-test-secret\n' > "$DIR/secret" && chmod 600 "$DIR/secret"
"$DAEMON" --listen 127.0.0.1:0 --port-file "$DIR/port" --iqn "$IQN" --create \
	"$DIR/lun0" "$DIR/lun1" 2>"$DIR/log" &
PID=$!
i=0
while [ ! -s "$DIR/port" ]; do
	kill -0 "$PID" 2>/dev/null || fail "daemon died"
	i=$((i + 1))
	[ $i -gt 200 ] && fail "no port file after 20 s"
	sleep 0.1
done
PORT=$(cat "$DIR/port")
URL=iscsi://127.0.0.1:$PORT

timeout 20 iscsi-ls -s "$URL/" >"$DIR/ls" 2>&1 || fail "iscsi-ls: $(cat "$DIR/ls")"
grep -q "Target:$IQN Portal:127.0.0.1:$PORT,1" "$DIR/ls" || fail "iscsi-ls target: $(cat "$DIR/ls")"
grep -q "Lun:0 *Type:OSD" "$DIR/ls" || fail "iscsi-ls LUN 0: $(cat "$DIR/ls")"
grep -q "Lun:1 *Type:OSD" "$DIR/ls" || fail "iscsi-ls LUN 1: $(cat "$DIR/ls")"

for lun in 0 1; do
	timeout 20 iscsi-inq "$URL/$IQN/$lun" >"$DIR/inq" 2>&1 || fail "iscsi-inq LUN $lun: $(cat "$DIR/inq")"
	grep -q "Peripheral Device Type:OSD" "$DIR/inq" || fail "iscsi-inq type: $(cat "$DIR/inq")"
	grep -q "Peripheral Qualifier:CONNECTED" "$DIR/inq" || fail "iscsi-inq qualifier"
done
# A VPD page (unit serial number) through the same path.
timeout 20 iscsi-inq -e 1 -c 0x80 "$URL/$IQN/0" >/dev/null 2>&1 || fail "iscsi-inq VPD 80h"
# Digests negotiated by libiscsi.
timeout 20 iscsi-inq "$URL/$IQN/0?header_digest=crc32c" 2>&1 | grep -q "Device Type:OSD" \
	|| fail "iscsi-inq with header digests"

# A target that does not exist is refused, and the daemon keeps serving.
timeout 20 iscsi-inq "$URL/iqn.2026-12.org.osd:nosuch/0" >/dev/null 2>&1 && fail "unknown IQN accepted"
timeout 20 iscsi-inq "$URL/$IQN/0" >/dev/null 2>&1 || fail "not serving after a failed login"

kill -TERM "$PID"
wait "$PID"
rc=$?
PID=
[ $rc -eq 0 ] || fail "exit status $rc after SIGTERM"
grep -q "shutting down" "$DIR/log" || fail "no clean shutdown"

# CHAP: the right secret logs in, a wrong one does not.
"$DAEMON" --listen 127.0.0.1:0 --port-file "$DIR/port2" --iqn "$IQN" \
	--chap-user alice --chap-secret-file "$DIR/secret" "$DIR/lun0" 2>"$DIR/log" &
PID=$!
i=0
while [ ! -s "$DIR/port2" ]; do
	kill -0 "$PID" 2>/dev/null || fail "daemon died"
	i=$((i + 1))
	[ $i -gt 200 ] && fail "no port file after 20 s"
	sleep 0.1
done
PORT=$(cat "$DIR/port2")
timeout 20 iscsi-inq "iscsi://alice%tools-test-secret@127.0.0.1:$PORT/$IQN/0" 2>&1 \
	| grep -q "Device Type:OSD" || fail "CHAP login"
timeout 20 iscsi-inq "iscsi://alice%wrong-secret-xx@127.0.0.1:$PORT/$IQN/0" >/dev/null 2>&1 \
	&& fail "wrong CHAP secret accepted"
kill -INT "$PID"
wait "$PID"
rc=$?
PID=
[ $rc -eq 0 ] || fail "exit status $rc after SIGINT"
echo "PASS"
