// The project's XDP steering program (bpf/xdp_steer.bpf.c) as both AF_XDP backends see it: the
// xdp backend loads it from the embedded object, the dpdk backend's net_af_xdp PMD from a file of
// it. What they share: asking which program an interface has, and setting the program's
// steer_cfg map. Part of panama_xdp (built with libxdp/libbpf only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

// The compiled program, embedded at build time (bpf/embed.cmake).
extern const unsigned char panama_xdp_steer_obj[];
extern const size_t panama_xdp_steer_obj_len;

namespace panama::host::xdp {

// The XDP program on an interface, in any mode; id 0 when none (or no such interface).
struct Attached {
  uint32_t id = 0;
  uint8_t mode = 0;  // XDP_ATTACHED_*
  std::string name;
  // "'NAME' (id N)", as error messages name it.
  std::string str() const { return "'" + name + "' (id " + std::to_string(id) + ")"; }
};
Attached attached_program(unsigned ifindex);

// steer_cfg's three keys: 0 the aggregation UDP port (host order here), 1 steering several
// sockets of queue 0 by TID, 2 every frame steered (a switch stand-in's port). 0 or -errno.
int set_steer_cfg(int map_fd, uint16_t port, bool by_tid, bool every);

}  // namespace panama::host::xdp
