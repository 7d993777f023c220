#!/usr/bin/env bash
# docs/rtl.md's "Protocol constants" table is the one panama-gen writes (protocol.md, generated
# from wire/protocol.h and wire/wire.h): the lines between the markers
#   <!-- protocol.md: begin -->  and  <!-- protocol.md: end -->
# must equal the table rows of a fresh protocol.md. Prints the difference and the fix otherwise.
# usage: protocol_doc.sh PANAMA_GEN SOURCE_DIR WORKDIR
set -euo pipefail
gen=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
"$gen" --ports 4 --gbps 10 --mhz 200 --out "$work/rtl" >/dev/null
grep '^|' "$work/rtl/protocol.md" >"$work/want.md"
sed -n '/<!-- protocol.md: begin -->/,/<!-- protocol.md: end -->/p' "$src/docs/rtl.md" | grep '^|' >"$work/have.md" || true
if ! diff -u "$work/have.md" "$work/want.md"; then
  echo "docs/rtl.md's protocol table is stale: replace it with the rows of $work/rtl/protocol.md"
  exit 1
fi
echo "protocol_doc: PASS ($(wc -l <"$work/want.md") rows)"
