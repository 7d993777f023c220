// Backend `xdp`: AF_XDP (docs/host.md "Backends"). An XDP program (bpf/xdp_steer.bpf.c, built with
// clang -target bpf and embedded) steers the job's UDP traffic to the aggregation port into an
// AF_XDP socket on the interface's queue and passes everything else to the kernel. Frames go out
// and come in through a UMEM of fixed frames that are reused: the all-reduce builds each frame in
// a UMEM frame (tx_begin) and reads each result where it landed (recv_view); the rx, tx, fill and
// completion rings move in batches, and the kernel is woken only when the rings ask for it
// (need_wakeup). Zero-copy when the driver offers it, copy mode otherwise (veth), native XDP
// first, generic (skb) XDP otherwise; mode() names what was taken.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "raw_common.h"

namespace panama::host {

class XdpTransport : public RawTransport {
 public:
  // Attaches the program to p.iface (replacing one left by an earlier run) and opens a socket
  // on `queue`. Throws TransportError with one line naming what the kernel refused.
  XdpTransport(const RawParams& p, int queue = 0);
  // worker --threads: `sockets` sockets on queue 0 sharing one UMEM (XDP_SHARED_UMEM: one fill
  // and one completion ring, taken under a lock once per batch of up to 64 frames); the program
  // steers a result with TID t to socket tid_socket[t] (TIDs not listed: socket 0).
  static std::vector<std::unique_ptr<XdpTransport>> open_shared(const RawParams& p, int sockets,
                                                                const std::vector<int>& tid_socket);
  // A switch stand-in's port (switch --backend xdp, xdp_fabric.h): the program steers every frame
  // of p.iface to the sockets (aggregation frames to p.port by their TID through tid_socket as
  // above when `sockets` > 1, every other frame to socket 0); no addresses are looked up.
  static std::vector<std::unique_ptr<XdpTransport>> open_switch_port(const RawParams& p, int sockets,
                                                                     const std::vector<int>& tid_socket);
  ~XdpTransport() override;  // the last socket of an interface detaches the program
  void send(const wire::Bytes& frame) override;
  bool recv(wire::Bytes& frame, Clock::time_point deadline) override;
  uint8_t* tx_begin(size_t len) override;
  void tx_end(size_t len) override;
  bool recv_view(const uint8_t*& frame, size_t& len, Clock::time_point deadline) override;
  void flush() override;
  // "zero-copy, native XDP", "copy, native XDP" or "copy, generic XDP".
  const std::string& mode() const { return mode_; }
  std::string datapath() const override;
  // XDP_STATISTICS of the socket and the transmit kicks repeated (ring not yet taken).
  std::vector<std::pair<std::string, uint64_t>> link_counters() const override;
  int fd() const;                            // the socket, to poll for received frames
  static constexpr size_t kMaxFrame = 4096;  // bytes per frame (one UMEM frame)

  struct Shared;  // the program, the UMEM and its fill/completion rings (xdp_transport.cpp)

 private:
  XdpTransport(const RawParams& p, std::shared_ptr<Shared> sh, int index);
  void find_addresses(const RawParams& p);  // this interface's and the next hop's (a worker's)
  struct Impl;
  static std::string busy_poll(Impl& d);  // PANAMA_XDP_BUSY_POLL; what the mode says of it
  std::unique_ptr<Impl> d_;
  std::string mode_;
};

}  // namespace panama::host
