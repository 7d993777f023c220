#!/usr/bin/env bash
# The model and the host link only the configuration and register-map data (library
# panama_config), not the Verilog emitters (panama_emit): no symbol named emit_* in any FILE.
# POSITIVE (panama-gen) must hold emit_* symbols, or the check could not see them.
# usage: no_emitter_link.sh POSITIVE FILE...   (a FILE may be an executable or a static library)
set -uo pipefail
command -v nm >/dev/null || { echo "no_emitter_link: SKIP (no nm)"; exit 77; }
[ $# -ge 2 ] || { echo "usage: no_emitter_link.sh POSITIVE FILE..." >&2; exit 2; }
# An emitter's name: emit_ at the start of an identifier, in C++ names as nm -C prints them.
pattern='(^|[^A-Za-z0-9_])emit_[A-Za-z0-9_]*'
emitters() { nm -C "$1" 2>/dev/null | grep -Eo "$pattern" | sed 's/^[^e]*//' | sort -u; }
positive=$1; shift
found=$(emitters "$positive" | wc -l)
if [ "$found" -eq 0 ]; then
  echo "no_emitter_link: FAIL: no emit_ symbol in $positive: the check cannot see emitters"
  exit 1
fi
echo "positive control: $found emitter names in $(basename "$positive")"
status=0
for f in "$@"; do
  [ -e "$f" ] || { echo "no_emitter_link: FAIL: $f does not exist"; status=1; continue; }
  names=$(emitters "$f")
  if [ -n "$names" ]; then
    echo "no_emitter_link: FAIL: $(basename "$f") links emitters: $(echo "$names" | head -5 | tr '\n' ' ')"
    status=1
  else
    echo "ok: $(basename "$f")"
  fi
done
[ $status -eq 0 ] && echo "no_emitter_link: PASS ($# files)"
exit $status
