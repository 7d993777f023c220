# Sourced by the host namespace tests (host_netns.sh, host_controller.sh, host_switch_ctl.sh).

# Sets SUF, a per-run suffix that every namespace and interface name carries (runs side by side
# never meet), and TMP, a fresh scratch folder named after the test.
host_scratch() {  # NAME
  SUF=$(printf '%04x%02x' $(($$ & 0xffff)) $((RANDOM & 0xff)))
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
}
