// Backend `dpdk`: raw Ethernet frames through DPDK (docs/host.md "Backends"). One ethdev port
// (the first one the EAL probes), one RX and one TX queue, a packet mempool; send() copies the
// frame into an mbuf and calls rte_eth_tx_burst until the queue takes it (bounded), recv() polls
// rte_eth_rx_burst until the deadline, keeps the job's results and, when idle, waits in poll() on
// a BPF-filtered AF_PACKET wake-up socket (af_packet PMD) or sleeps in short steps, so that
// several workers share few cores.
//
// EAL arguments: RawParams::eal when given (split at blanks, passed as they are), else derived
// from the interface for a machine without hugepages or a DPDK-bound NIC:
//   --lcores=0@(CPUS) --no-huge -m 64 --no-pci --no-shconf --no-telemetry
//   --file-prefix=panama-PID --log-level=4 --vdev=net_af_packet0,iface=IF
// (the af_packet PMD: frames go through the kernel's AF_PACKET socket of IF), or, where AF_XDP
// works, --vdev=net_af_xdp0,iface=IF,start_queue=0,queue_count=1,xdp_prog=PATH: the PMD loads the
// project's steering program (bpf/xdp_steer.bpf.c), which takes only aggregation traffic from
// the kernel. The EAL initialises once per process: one DpdkTransport per process.
#pragma once

#include <memory>

#include "raw_common.h"

namespace panama::host {

// Whether this build has the backend (libdpdk found at configure time).
bool dpdk_available();

class DpdkTransport : public RawTransport {
 public:
  explicit DpdkTransport(const RawParams& p);  // throws TransportError with one line
  ~DpdkTransport() override;
  void send(const wire::Bytes& frame) override;
  bool recv(wire::Bytes& frame, Clock::time_point deadline) override;
  // The result stays in its mbuf until the next call (no copy, no allocation per frame).
  bool recv_view(const uint8_t*& frame, size_t& len, Clock::time_point deadline) override;
  // Frames are built in an mbuf (tx_begin) and handed to the PMD in bursts of up to kBurst: when
  // the burst is full, at flush() and at recv().
  uint8_t* tx_begin(size_t len) override;
  void tx_end(size_t len) override;
  void flush() override;
  // The EAL arguments derived from an interface (without argv[0]).
  // With af_xdp, xdp_prog (when given) is the XDP program object the PMD loads (`xdp_prog=`).
  static std::vector<std::string> default_eal_args(const std::string& iface, bool af_xdp = false,
                                                   const std::string& xdp_prog = "");
  std::string datapath() const override { return pmd_.empty() ? "DPDK, EAL arguments from --eal" : pmd_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> d_;
  std::string pmd_;
};

}  // namespace panama::host
