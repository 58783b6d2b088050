#!/bin/sh
# targetd_log: osd-targetd's log. --listen takes a host name and port 0
# (localhost:0), says where it listens; the stores' events (here: a store
# directory open to other users, repaired to 0700) are logged with their
# severity and the store they concern; -q drops notices and info (-qqq
# warnings too), errors always show; --syslog sends everything to syslog,
# nothing to stderr; SIGTERM stops it with status 0.
# Usage: targetd_log.sh /path/to/osd-targetd
set -u
DAEMON=$1
DIR=$(mktemp -d "${TMPDIR:-/tmp}/osd-targetd-log.XXXXXX") || exit 1
PID=
cleanup() {
	[ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null
	rm -rf "$DIR"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; echo "--- log:"; cat "$DIR/log" 2>/dev/null; exit 1; }

# start ARGS...: the daemon in the background, once it has written its port.
start() {
	rm -f "$DIR/port"
	"$DAEMON" --port-file "$DIR/port" "$@" 2>"$DIR/log" &
	PID=$!
	n=0
	while [ ! -s "$DIR/port" ]; do
		kill -0 "$PID" 2>/dev/null || fail "the daemon exited"
		n=$((n + 1))
		[ $n -gt 600 ] && fail "no port file after 30 s"
		sleep 0.05
	done
}
# stop: SIGTERM, which must end the daemon with status 0.
stop() {
	kill "$PID"
	wait "$PID"
	rc=$?
	PID=
	[ $rc -eq 0 ] || fail "exit status $rc after SIGTERM"
}

# A host name and port 0: resolved, a free port picked and logged.
start --listen localhost:0 --create "$DIR/lun0"
PORT=$(cat "$DIR/port")
[ "$PORT" -gt 0 ] || fail "port file holds '$PORT'"
grep -Eq "^osd-targetd: notice: listening on (127\.0\.0\.1|\[::1\]):$PORT\$" "$DIR/log" ||
	fail "no 'listening on' line for localhost:$PORT"
grep -q "^osd-targetd: info: LUN 0: $DIR/lun0\$" "$DIR/log" || fail "no info line for LUN 0"
stop
grep -q "^osd-targetd: notice: shutting down\$" "$DIR/log" || fail "no shutdown notice"

# A store event: the store directory open to other users is repaired, and
# the warning names the store.
chmod 0755 "$DIR/lun0"
start --listen 127.0.0.1:0 "$DIR/lun0"
grep -q "^osd-targetd: warning: $DIR/lun0: .*was mode 0755, open to other users" "$DIR/log" ||
	fail "no warning for the repaired store mode"
[ "$(stat -c %a "$DIR/lun0")" = 700 ] || fail "store mode not repaired"
stop

# -q: no info or notice; -qqq: no warning either; errors always.
chmod 0755 "$DIR/lun0"
start -q -q --listen 127.0.0.1:0 "$DIR/lun0"
grep -q "warning: $DIR/lun0: .*was mode 0755" "$DIR/log" || fail "-qq dropped a warning"
grep -q "info:\|notice:" "$DIR/log" && fail "-qq logged info or notices"
stop
chmod 0755 "$DIR/lun0"
start -qqq --listen 127.0.0.1:0 "$DIR/lun0"
[ -s "$DIR/log" ] && fail "-qqq logged more than errors"
stop
"$DAEMON" -qqq "$DIR/missing" 2>"$DIR/log" && fail "a missing store served"
grep -q "^osd-targetd: error: $DIR/missing: No such file or directory (use --create)\$" \
	"$DIR/log" || fail "-qqq hid an error"

# --syslog: nothing on stderr.
chmod 0755 "$DIR/lun0"
start --syslog --listen 127.0.0.1:0 "$DIR/lun0"
[ -s "$DIR/log" ] && fail "--syslog wrote to stderr"
stop

# A name that does not resolve is an error naming it.
"$DAEMON" --listen no-such-host.invalid:0 "$DIR/lun0" 2>"$DIR/log" && fail "bad host served"
grep -q "^osd-targetd: error: --listen no-such-host.invalid: " "$DIR/log" ||
	fail "unresolvable --listen not named"
echo "targetd_log: OK"
