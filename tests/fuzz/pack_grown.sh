#!/usr/bin/env bash
# pack_grown.sh DIR ARCHIVE: the regular files directly in DIR as a grown corpus archive (tests/fuzz/grown/, written
# by scripts/fuzz.sh --update-grown; test scripts.grown_corpora). The same files give the same bytes whoever packs
# them: names sorted bytewise, no directory entry, owner, group, mode and time fixed, xz single-threaded at its
# default level. Names are passed NUL-separated and verbatim (a name such as "--remove-files" is a name, not an
# option). Exit status 0, or non-zero with ARCHIVE untouched and no partial file left.
set -euo pipefail
[ $# -eq 2 ] && [ -d "$1" ] || { echo "usage: pack_grown.sh DIR ARCHIVE" >&2; exit 2; }
partial="$2.partial"
trap 'rm -f "$partial"' EXIT
(cd "$1" && find . -maxdepth 1 -type f -printf '%P\0' | LC_ALL=C sort -z) |
  tar --null --verbatim-files-from --no-recursion --owner=0 --group=0 --numeric-owner --mode=0644 --mtime=@0 \
    --format=gnu -C "$1" -cf - -T - |
  xz -6 -T1 -c >"$partial"
mv "$partial" "$2"
