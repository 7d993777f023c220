#include "xdp_prog.h"

#include <arpa/inet.h>
#include <linux/if_link.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <cerrno>

namespace panama::host::xdp {

Attached attached_program(unsigned ifindex) {
  Attached a;
  LIBBPF_OPTS(bpf_xdp_query_opts, q);
  if (ifindex == 0 || bpf_xdp_query(static_cast<int>(ifindex), 0, &q) != 0) return a;
  // Programs in several modes at once (XDP_ATTACHED_MULTI) have no single prog_id.
  a.id = q.prog_id ? q.prog_id : q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id ? q.skb_prog_id : q.hw_prog_id;
  a.mode = q.attach_mode;
  if (a.id == 0) return a;
  a.name = "?";
  const int fd = bpf_prog_get_fd_by_id(a.id);
  if (fd >= 0) {
    bpf_prog_info info{};
    uint32_t len = sizeof info;
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) a.name = info.name;
    close(fd);
  }
  return a;
}

int set_steer_cfg(int map_fd, uint16_t port, bool by_tid, bool every) {
  const uint32_t keys[3] = {0, 1, 2};
  const uint32_t values[3] = {htons(port), by_tid ? 1u : 0u, every ? 1u : 0u};
  for (int i = 0; i < 3; ++i)
    if (bpf_map_update_elem(map_fd, &keys[i], &values[i], 0) != 0) return errno ? -errno : -EIO;
  return 0;
}

}  // namespace panama::host::xdp
