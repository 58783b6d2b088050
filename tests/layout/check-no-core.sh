#!/bin/sh
# The layout backend is a backend like any other: it knows nothing of the
# filesystem stored on it. Fails if a source of libosdfs/layout includes a
# header of libosdfs/core, by its core/ path or by a core header's name.
# First proves that the check catches such an include in a scratch file.
# Usage: check-no-core.sh SOURCE_DIR
src=${1:?usage: check-no-core.sh SOURCE_DIR}
core="$src/libosdfs/core"
names=$(cd "$core" && ls -- *.h | sed 's/\./\\./g' | paste -sd'|' -)
[ -n "$names" ] || { echo "no headers in $core" >&2; exit 1; }
pattern="^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]([^\">]*/)?(core/[^\">]*|$names)[\">]"

# Prints the offending includes of the files given; 0 if there are none.
offenders() {
	! grep -EnH "$pattern" "$@"
}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf '#include <errno.h>\n#include "core/format.h"\n' > "$tmp/a.c"
printf '#include "layout/layout_int.h"\n # include <fs.h>\n' > "$tmp/b.h"
printf '#include "lebytes.h"\n#include <osdfs/layout.h>\n' > "$tmp/c.c"
if offenders "$tmp/a.c" >/dev/null || offenders "$tmp/b.h" >/dev/null ||
   ! offenders "$tmp/c.c" >/dev/null; then
	echo "check-no-core.sh: the include check itself is broken" >&2
	exit 1
fi

if ! offenders "$src"/libosdfs/layout/*.c "$src"/libosdfs/layout/*.h; then
	echo "libosdfs/layout must not include libosdfs/core headers (see docs/layout.md)" >&2
	exit 1
fi
echo "libosdfs/layout includes no core header"
