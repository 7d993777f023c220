// Ring all-reduce over TCP: each job's ring as one RingWorkerApp (ring_app.cpp) per server.
#include "sim.h"

#include <cmath>

namespace dcsim {

void Sim::setup_ring(Job& job) {
  const int N = static_cast<int>(job.workers.size());
  job.chunk = static_cast<uint64_t>(std::ceil(job.bytes / N));
  const uint16_t port = static_cast<uint16_t>(kRingPortBase + job.id % kRingPorts);
  for (int w = 0; w < N; ++w) {
    Worker& wk = job.workers[w];
    wk.ring = CreateObjectWithAttributes<RingWorkerApp>(
        "Peer", Ipv4AddressValue(host_addr_[job.workers[(w + 1) % N].host]), "Port", UintegerValue(port), "ChunkBytes",
        UintegerValue(job.chunk), "Steps", UintegerValue(2 * (N - 1)));
    const int j = job.id;
    wk.ring->SetDoneCallback([this, j] { worker_finished(j); });
    wk.ring->SetNode(hosts_.Get(wk.host));
    wk.ring->Start();
  }
}

}  // namespace dcsim
