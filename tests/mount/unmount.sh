# Sourced by the FUSE test scripts: unmount that tolerates a mount held for
# a moment by a process outside the test. Other tests run in parallel under
# CTest, and stress-ng's "io" stressor (mount_workloads) opens every mount
# point in /proc/self/mountinfo to syncfs() it, so EBUSY for a few
# milliseconds is expected; EBUSY that lasts is a failure and names holders.

# mount_holders DIR: the processes with a cwd, root or open file under DIR
mount_holders() {
	local dir=$1 link target pid
	for link in /proc/[0-9]*/cwd /proc/[0-9]*/root /proc/[0-9]*/fd/*; do
		target=$(readlink "$link" 2>/dev/null) || continue
		case $target in
		"$dir" | "$dir"/*)
			pid=${link#/proc/}
			pid=${pid%%/*}
			echo "$pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)) ${link#/proc/"$pid"/} -> $target"
			;;
		esac
	done | sort -u
}

# unmount_busy_retry CMD...: run the unmount command CMD; while it fails
# saying the mount is busy, retry for up to 10 s. Prints CMD's last error
# and the holders when it gives up; returns CMD's status.
unmount_busy_retry() {
	local err rc tries=0 mnt=${!#}
	while :; do
		err=$("$@" 2>&1)
		rc=$?
		[ "$rc" = 0 ] && return 0
		case $err in *[Bb]usy*) ;; *) echo "$err" >&2; return "$rc" ;; esac
		tries=$((tries + 1))
		if [ "$tries" -ge 200 ]; then
			echo "$err" >&2
			echo "still busy after 10 s; holders of $mnt:" >&2
			mount_holders "$mnt" >&2
			return "$rc"
		fi
		sleep 0.05
	done
}
