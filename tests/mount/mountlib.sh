# Sourced by the FUSE workload scripts (workloads.sh, concurrent.sh): one
# osdfs-mount in the background on $MNT, with its output in $LOG and the
# last tool's output in $OUT. The script sets MOUNT_BIN, WORK, MNT, LOG, OUT
# (and TGT, the default target), and PID= before calling these.
. "$(dirname "${BASH_SOURCE[0]}")/unmount.sh"

is_mounted() { awk -v m="$MNT" '$5 == m { found = 1 } END { exit !found }' /proc/self/mountinfo; }

# cleanup: trap on EXIT; lazy unmount, stop the daemon, remove $WORK.
cleanup() {
	cd /
	if is_mounted; then
		fusermount3 -u -z "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
	fi
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill -TERM "$PID" 2>/dev/null
		wait "$PID" 2>/dev/null
	fi
	rm -rf "$WORK"
}

fail() {
	echo "FAIL: $*"
	[ -s "$OUT" ] && { echo "--- tool output (last 60 lines):"; tail -60 "$OUT"; }
	[ -s "$LOG" ] && { echo "--- osdfs-mount output (last 60 lines):"; tail -60 "$LOG"; }
	exit 1
}

# start_mount OPTIONS [TARGET...]: osdfs-mount -f in the background ($TGT
# when no target is given), then wait (bounded) for the kernel to list the
# mount. Background jobs start with SIGINT ignored: restore it.
start_mount() {
	local opts=$1 rc
	shift
	[ $# -gt 0 ] || set -- "$TGT"
	env --default-signal=INT "$MOUNT_BIN" -f -o "$opts" "$@" "$MNT" >"$LOG" 2>&1 &
	PID=$!
	for _ in $(seq 1 600); do
		is_mounted && return 0
		if ! kill -0 "$PID" 2>/dev/null; then
			wait "$PID"
			rc=$?
			grep -q "Operation not permitted" "$LOG" && skip "FUSE mounts not permitted here"
			fail "osdfs-mount -o $opts exited with $rc before mounting"
		fi
		sleep 0.05
	done
	fail "no mount after 30 s"
}

# stop_mount: fusermount3 -u, then osdfs-mount must exit 0 within 60 s, with
# no sanitizer report in its output.
stop_mount() {
	local rc
	cd "$WORK" || fail "cd $WORK"
	unmount_busy_retry fusermount3 -u "$MNT" || fail "fusermount3 -u"
	for _ in $(seq 1 1200); do
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$PID" 2>/dev/null && fail "osdfs-mount still running 60 s after unmount"
	wait "$PID"
	rc=$?
	PID=
	[ "$rc" = 0 ] || fail "osdfs-mount exited $rc after unmount"
	is_mounted && fail "still mounted after fusermount3 -u"
	grep -q "ThreadSanitizer\|AddressSanitizer\|runtime error" "$LOG" && fail "sanitizer report"
	return 0
}
