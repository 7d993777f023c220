// Helper of tests/host_xdp_safety.py: another program's XDP attachment, as a tool that is not
// panama-host would make it (netlink, generic mode; it stays after this process exits).
//   xdp_foreign attach IF   loads a two-instruction XDP_PASS program named foreign_pass, attaches
//                           it to IF and prints its id
//   xdp_foreign query IF    prints "ID NAME" of the XDP program on IF, or "0 -" when none
//   xdp_foreign detach IF   detaches whatever XDP program is on IF (generic mode)
// Exit 0, 1 on a failure (one line), 2 on a usage error.
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

int query(unsigned ifindex, std::string& name) {
  LIBBPF_OPTS(bpf_xdp_query_opts, q);
  if (bpf_xdp_query(static_cast<int>(ifindex), 0, &q) != 0 || q.prog_id == 0) return 0;
  name = "?";
  const int fd = bpf_prog_get_fd_by_id(q.prog_id);
  if (fd >= 0) {
    bpf_prog_info info{};
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) name = info.name;
    close(fd);
  }
  return static_cast<int>(q.prog_id);
}

}  // namespace

int main(int argc, char** argv) {
  const char* usage = "usage: xdp_foreign attach|query|detach IFACE\n";
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::fputs(usage, stdout);
    return 0;
  }
  if (argc != 3) {
    std::fputs(usage, stderr);
    return 2;
  }
  const std::string verb = argv[1];
  const unsigned ifindex = if_nametoindex(argv[2]);
  if (ifindex == 0) {
    std::fprintf(stderr, "xdp_foreign: no interface '%s'\n", argv[2]);
    return 1;
  }
  if (verb == "query") {
    std::string name = "-";
    const int id = query(ifindex, name);
    std::printf("%d %s\n", id, name.c_str());
    return 0;
  }
  if (verb == "detach") {
    const int e = bpf_xdp_detach(static_cast<int>(ifindex), XDP_FLAGS_SKB_MODE, nullptr);
    if (e) std::fprintf(stderr, "xdp_foreign: detach: %s\n", std::strerror(-e));
    return e ? 1 : 0;
  }
  if (verb != "attach") {
    std::fputs(usage, stderr);
    return 2;
  }
  bpf_insn prog[2] = {};
  prog[0].code = BPF_ALU64 | BPF_MOV | BPF_K;  // r0 = XDP_PASS
  prog[0].dst_reg = BPF_REG_0;
  prog[0].imm = XDP_PASS;
  prog[1].code = BPF_JMP | BPF_EXIT;
  const int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "foreign_pass", "GPL", prog, 2, nullptr);
  if (fd < 0) {
    std::fprintf(stderr, "xdp_foreign: loading: %s\n", std::strerror(errno));
    return 1;
  }
  if (int e = bpf_xdp_attach(static_cast<int>(ifindex), fd, XDP_FLAGS_SKB_MODE, nullptr)) {
    std::fprintf(stderr, "xdp_foreign: attaching: %s\n", std::strerror(-e));
    return 1;
  }
  std::string name;
  std::printf("%d\n", query(ifindex, name));
  return 0;
}
