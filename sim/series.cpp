// The throughput time series of one server's uplink per traffic class (--series-ms, the fairness
// preset; docs/sim.md "Presets"): the payload bytes the server's IPv4 layer sends per bin, the
// aggregation's UDP and TCP to a ring's port as training, other TCP as background (as the
// offered-load accounting counts them), and Jain's fairness index of the two classes over the
// period in which both are present (from the job's arrival to --duration).
#include "sim.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dcsim {

void Sim::series_setup() {
  if (o_.series_ms <= 0) return;
  if (o_.series_host < 0 || o_.series_host >= tree_.hosts()) throw std::runtime_error("--series-host out of range");
  hosts_.Get(o_.series_host)
      ->GetObject<Ipv4L3Protocol>()
      ->TraceConnectWithoutContext("Tx", MakeCallback(&Sim::series_tx, this));
}

void Sim::series_tx(Ptr<const Packet> p, Ptr<Ipv4>, uint32_t) {
  const auto bin = static_cast<size_t>(Simulator::Now().GetSeconds() / (o_.series_ms * 1e-3));
  Ipv4Header ih;
  p->PeekHeader(ih);
  const uint32_t len = ih.GetPayloadSize();
  double bytes = 0;
  int cls = 0;  // 0 background, 1 training
  if (ih.GetProtocol() == UdpL4Protocol::PROT_NUMBER) {
    if (len <= 8 + kHdrBytes) return;
    bytes = len - 8 - kHdrBytes;
    cls = 1;
  } else if (ih.GetProtocol() == TcpL4Protocol::PROT_NUMBER) {
    Ptr<Packet> c = p->Copy();
    c->RemoveHeader(ih);
    TcpHeader th;
    c->PeekHeader(th);
    const uint32_t hdr = th.GetLength() * 4u;
    if (len <= hdr) return;
    bytes = len - hdr;
    const int port = th.GetDestinationPort();
    cls = port >= kRingPortBase && port < kRingPortBase + kRingPorts;
  } else {
    return;
  }
  for (auto& s : series_)
    if (s.size() <= bin) s.resize(bin + 1, 0);
  series_[cls][bin] += bytes;
}

json Sim::series_json() const {
  const double bin = o_.series_ms * 1e-3;
  json t = json::array(), bg = json::array(), tr = json::array();
  for (size_t i = 0; i < series_[0].size(); ++i) {
    t.push_back(i * bin);
    bg.push_back(series_[0][i] * 8 / bin / 1e9);
    tr.push_back(series_[1][i] * 8 / bin / 1e9);
  }
  // Jain's index of the two classes' mean throughputs over the whole bins of [first job's
  // arrival, --duration).
  const double from = jobs_.empty() ? o_.warmup : jobs_.front().arrival;
  const auto b0 = static_cast<size_t>(std::ceil(from / bin - 1e-9)), b1 = static_cast<size_t>(o_.duration / bin + 1e-9);
  double x[2] = {0, 0};
  size_t n = 0;
  for (size_t i = b0; i < b1 && i < series_[0].size(); ++i, ++n)
    for (int c = 0; c < 2; ++c) x[c] += series_[c][i] * 8 / bin / 1e9;
  json fair = nullptr;
  if (n > 0) {
    x[0] /= n;
    x[1] /= n;
    const double sq = x[0] * x[0] + x[1] * x[1];
    fair = {{"from_s", b0 * bin},
            {"to_s", (b0 + n) * bin},
            {"background_gbps", x[0]},
            {"training_gbps", x[1]},
            {"jain", sq > 0 ? json((x[0] + x[1]) * (x[0] + x[1]) / (2 * sq)) : json(nullptr)}};
  }
  return {{"host", o_.series_host}, {"bin_s", bin},        {"t_s", t},
          {"background_gbps", bg},  {"training_gbps", tr}, {"fairness", fair}};
}

}  // namespace dcsim
