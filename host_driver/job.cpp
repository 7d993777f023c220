#include "job.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include "protocol.h"

namespace panama::host {

int iface_mtu(const std::string& iface) {
  std::ifstream in("/sys/class/net/" + iface + "/mtu");
  int mtu = 0;
  if (!(in >> mtu) || mtu < 68) throw std::runtime_error("cannot read the MTU of interface '" + iface + "'");
  return mtu;
}

int default_max_elems(Format f) { return proto::kDefaultPayloadBytes / elem_bytes(f); }

void set_vector_shape(JobParams& p, Format f, int mtu, int max_elems) {
  p.format = f;
  p.elem_bytes = elem_bytes(f);
  p.count = JobParams::count_for(mtu, max_elems > 0 ? max_elems : default_max_elems(f), p.elem_bytes);
}

void default_window(JobParams& p) {
  if (p.window.max <= 0) p.window.max = std::max(1, 12 / std::max(1, p.trees));
  if (p.window.init <= 0) p.window.init = std::min(4.0, p.window.max);
}

}  // namespace panama::host
