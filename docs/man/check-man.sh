#!/bin/sh
# Format one man page with every troff warning enabled and fail if anything
# is reported: groff -man -ww -z, and man --warnings -l at 80 columns (which
# also runs preconv and the line breaking a reader sees). Exits 77 (skipped)
# when neither groff nor man is installed.
page=$1
[ -r "$page" ] || { echo "cannot read $page" >&2; exit 1; }
checked=0
out=$(mktemp "${TMPDIR:-/tmp}/osd-man.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
status=0

if command -v groff >/dev/null 2>&1; then
	checked=1
	if ! groff -man -ww -z "$page" >"$out" 2>&1 || [ -s "$out" ]; then
		echo "groff -man -ww -z $page:" >&2
		cat "$out" >&2
		status=1
	fi
fi
if command -v man >/dev/null 2>&1; then
	checked=1
	if ! MANWIDTH=80 MANPAGER=cat PAGER=cat man --warnings -l "$page" 2>"$out" >/dev/null ||
	   [ -s "$out" ]; then
		echo "man --warnings -l $page:" >&2
		cat "$out" >&2
		status=1
	fi
fi
[ "$checked" = 1 ] || { echo "neither groff nor man found: skipped"; exit 77; }
[ "$status" = 0 ] && echo "$page: formats without warnings"
exit "$status"
