#!/usr/bin/env bash
# The house rules (docs/architecture.md), checked on the tracked files of the source tree:
#   house_check.sh SOURCE_DIR includes   no include from host_driver/ into standin/, testbench/ or
#                                        systemc_model/; none from a product folder into testbench/
#   house_check.sh SOURCE_DIR size       no hand-written file over 1,000 lines (generated RTL,
#                                        recorded inputs and corpora excluded)
#   house_check.sh SOURCE_DIR shared     nothing refers to the shared folder beside the checkout:
#                                        the contract is docs/spec/
#   house_check.sh SOURCE_DIR format     exactly one number-format enum in the C++ sources
set -uo pipefail
src=$1 what=$2
cd "$src" || exit 1
files() { git ls-files "$@" 2>/dev/null; }
[ -n "$(files CMakeLists.txt)" ] || { echo "SKIP: $src is not a git checkout"; exit 77; }
fail=0
headers_of() { for d in "$@"; do files "$d/*.h" "$d/**/*.h" | xargs -r -n1 basename; done | sort -u; }
includes_from() {  # DIR HEADER-LIST: lines of DIR's sources that include one of the headers
  local dir=$1 list=$2
  [ -s "$list" ] || return 0
  files "$dir/*.cpp" "$dir/*.h" "$dir/**/*.cpp" "$dir/**/*.h" | grep -v '/tests/' |
    xargs -r grep -HnE "#include \"($(paste -sd'|' "$list"))\"" || true
}
case $what in
  includes)
    tmp=$(mktemp)
    trap 'rm -f "$tmp"' EXIT
    headers_of standin systemc_model testbench >"$tmp"
    # Header names the worker library has of its own would be false hits.
    comm -23 "$tmp" <(headers_of host_driver) >"$tmp.own" && mv "$tmp.own" "$tmp"
    bad=$(includes_from host_driver "$tmp")
    [ -z "$bad" ] || { echo "FAIL: host_driver/ includes from standin/, systemc_model/ or testbench/:"; echo "$bad"; fail=1; }
    headers_of testbench | comm -23 - <(headers_of gen wire numerics systemc_model host_driver standin torch_ext sim) >"$tmp"
    for d in gen wire numerics systemc_model host_driver standin torch_ext sim; do
      bad=$(includes_from "$d" "$tmp")
      [ -z "$bad" ] || { echo "FAIL: $d/ includes from testbench/:"; echo "$bad"; fail=1; }
    done
    ;;
  size)
    while read -r n f; do
      [ "$f" = total ] && continue
      [ "$n" -gt 1000 ] && { echo "FAIL: $f has $n lines (at most 1,000)"; fail=1; }
    done < <(files | grep -vE '^(rtl_out|tests/conformance|tests/fuzz/(corpus|regress))/|\.(pcap|png|bin|cdf)$' |
             xargs -r wc -l)
    ;;
  shared)
    bad=$(files | xargs -r grep -In '\.\./shared' || true)
    [ -z "$bad" ] || { echo "FAIL: files refer to the shared folder beside the checkout (the contract is docs/spec/):"; echo "$bad"; fail=1; }
    ;;
  format)
    hits=$(files '*.cpp' '*.h' | xargs -r grep -nE 'enum (class )?(Format|Fmt|Elem|ElemFormat|NumFormat)\b' || true)
    n=$(printf '%s' "$hits" | grep -c . || true)
    [ "$n" -eq 1 ] || { echo "FAIL: $n format enums (want exactly one):"; echo "$hits"; fail=1; }
    ;;
  *) echo "house_check.sh: unknown check '$what'" >&2; exit 2 ;;
esac
[ $fail -eq 0 ] && echo "PASS: $what"
exit $fail
