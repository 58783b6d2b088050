#!/bin/sh
# Compiles every public header on its own, as C99 with -pedantic and as C++,
# so that no header depends on another being included first or on our build.
set -eu
# GENERATED_DIR holds the headers the build generates (osd/version.h).
include=${1:?usage: check-headers.sh INCLUDE_DIR CC CXX [GENERATED_DIR]}
cc=${2:?}
cxx=${3:-}
gen=${4:-$include}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
for h in $( (cd "$include" && find . -name '*.h'; cd "$gen" && find . -name '*.h') |
	sed 's|^\./||' | sort -u); do
	printf '#include <%s>\n#include <%s>\nint main(void) { return 0; }\n' "$h" "$h" >"$work/t.c"
	"$cc" -std=c99 -pedantic -Wall -Wextra -Werror -fsyntax-only -I"$include" -I"$gen" "$work/t.c" ||
		{ echo "FAILED (C99): $h"; exit 1; }
	if [ -n "$cxx" ]; then
		"$cxx" -std=c++11 -pedantic -Wall -Wextra -Werror -fsyntax-only -x c++ -I"$include" -I"$gen" "$work/t.c" ||
			{ echo "FAILED (C++): $h"; exit 1; }
	fi
	n=$((n + 1))
done
echo "headers: $n public headers compile alone as C99 and C++"
