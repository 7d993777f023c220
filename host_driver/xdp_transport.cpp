#include "xdp_transport.h"

#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <netinet/in.h>
#include <net/if.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include <cerrno>
#include <cstring>
#include <vector>

// The compiled XDP program (bpf/xdp_steer.bpf.c), embedded at build time (bpf/embed.cmake).
extern const unsigned char panama_xdp_steer_obj[];
extern const size_t panama_xdp_steer_obj_len;

namespace panama::host {

namespace {

constexpr uint32_t kFrames = 4096;  // UMEM frames: half rx (fill ring), half tx
constexpr uint32_t kFrameSize = XSK_UMEM__DEFAULT_FRAME_SIZE;
constexpr uint32_t kRing = 2048;
constexpr uint32_t kBatch = 64;  // descriptors per peek / per kernel wake-up on tx

[[noreturn]] void fail(const std::string& what, int err) {
  throw TransportError("xdp: " + what + ": " + std::strerror(err < 0 ? -err : err));
}

int libbpf_quiet(enum libbpf_print_level, const char*, va_list) { return 0; }

}  // namespace

struct XdpTransport::Impl {
  std::string iface;
  unsigned ifindex = 0;
  uint32_t attach_flags = 0;
  bpf_object* obj = nullptr;
  bool attached = false;
  void* area = nullptr;
  xsk_umem* umem = nullptr;
  xsk_socket* xsk = nullptr;
  xsk_ring_prod fq{}, tx{};
  xsk_ring_cons cq{}, rx{};
  int fd = -1;
  std::vector<uint64_t> free_tx;              // tx frames not in flight (a stack, fixed capacity)
  uint64_t cur_tx = 0;                        // the frame tx_begin handed out
  uint32_t tx_pending = 0;                    // reserved in the tx ring, not yet submitted
  uint32_t rx_idx = 0, rx_n = 0, rx_pos = 0;  // the peeked rx batch and how far it was handed out
  wire::Bytes scratch;

  ~Impl() {
    if (xsk) xsk_socket__delete(xsk);
    if (umem) xsk_umem__delete(umem);
    if (area) munmap(area, static_cast<size_t>(kFrames) * kFrameSize);
    if (attached) bpf_xdp_detach(static_cast<int>(ifindex), attach_flags, nullptr);
    if (obj) bpf_object__close(obj);
  }

  uint8_t* frame(uint64_t addr) { return static_cast<uint8_t*>(xsk_umem__get_data(area, addr)); }

  void reclaim() {  // completed tx frames back to the free stack
    uint32_t idx = 0;
    const uint32_t n = xsk_ring_cons__peek(&cq, kRing, &idx);
    for (uint32_t i = 0; i < n; ++i) free_tx.push_back(*xsk_ring_cons__comp_addr(&cq, idx + i));
    if (n) xsk_ring_cons__release(&cq, n);
  }

  void kick() {  // submits what is reserved; wakes the kernel if the tx ring asks for it
    if (tx_pending) {
      xsk_ring_prod__submit(&tx, tx_pending);
      tx_pending = 0;
    }
    if (xsk_ring_prod__needs_wakeup(&tx)) {
      if (sendto(fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0 && errno != EAGAIN && errno != EBUSY &&
          errno != ENOBUFS && errno != ENETDOWN)
        fail("waking the transmit ring", errno);
    }
  }

  void release_rx() {  // the handed-out batch back to the fill ring
    if (rx_n == 0 || rx_pos < rx_n) return;
    uint32_t fidx = 0;
    if (xsk_ring_prod__reserve(&fq, rx_n, &fidx) != rx_n) throw TransportError("xdp: fill ring full");
    for (uint32_t i = 0; i < rx_n; ++i)
      *xsk_ring_prod__fill_addr(&fq, fidx + i) = xsk_umem__extract_addr(xsk_ring_cons__rx_desc(&rx, rx_idx + i)->addr);
    xsk_ring_prod__submit(&fq, rx_n);
    xsk_ring_cons__release(&rx, rx_n);
    rx_n = rx_pos = 0;
  }
};

XdpTransport::XdpTransport(const RawParams& p, int queue) : RawTransport(p), d_(new Impl) {
  if (p.iface.empty() || p.iface.size() >= IFNAMSIZ) throw TransportError("xdp: bad interface name '" + p.iface + "'");
  if ((p.group_ip >> 28) != 0xE)
    throw TransportError("xdp: group address " + wire::ipv4_to_string(p.group_ip) + " is not multicast");
  if (p.agg_ip == 0) throw TransportError("xdp: no aggregator address");
  if (queue < 0 || queue >= 64) throw TransportError("xdp: queue must be 0..63");
  Impl& d = *d_;
  d.iface = p.iface;
  d.ifindex = if_nametoindex(p.iface.c_str());
  if (d.ifindex == 0) throw TransportError("xdp: no interface '" + p.iface + "'");
  local_mac_ = iface_mac(p.iface);
  wire::Ipv4 mask = 0;
  if (!iface_ipv4(p.iface, local_ip_, mask))
    throw TransportError("xdp: interface '" + p.iface + "' has no IPv4 address");
  if (!p.agg_mac.empty()) {
    agg_mac_ = wire::parse_mac(p.agg_mac);
  } else {
    const wire::Ipv4 hop = next_hop(p.iface, p.agg_ip);
    // No entry yet: a datagram to the next hop makes the kernel resolve it (the program passes
    // ARP to the kernel), waited for up to 1 s.
    for (int i = 0; i < 20 && !kernel_neighbour(p.iface, hop, agg_mac_); ++i) {
      if (i % 5 == 0) {
        const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(9);  // discard
        a.sin_addr.s_addr = htonl(hop);
        if (s >= 0) {
          (void)setsockopt(s, SOL_SOCKET, SO_BINDTODEVICE, p.iface.c_str(), static_cast<socklen_t>(p.iface.size()));
          (void)sendto(s, "", 0, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&a), sizeof a);
          close(s);
        }
      }
      usleep(50000);
    }
    if (agg_mac_ == wire::Mac{})
      throw TransportError("xdp: cannot resolve the MAC of " + wire::ipv4_to_string(hop) + " on " + p.iface +
                           " (no neighbour entry, no ARP reply): give --agg-mac");
  }

  // The program: opened from the embedded object, loaded, the port set, attached natively where
  // the driver can, generically (skb mode) otherwise.
  libbpf_set_print(libbpf_quiet);
  d.obj = bpf_object__open_mem(panama_xdp_steer_obj, panama_xdp_steer_obj_len, nullptr);
  if (!d.obj) fail("opening the XDP program", errno);
  if (int e = bpf_object__load(d.obj))
    fail("loading the XDP program (needs CAP_BPF and CAP_NET_ADMIN, a kernel with AF_XDP)", e);
  bpf_program* prog = bpf_object__find_program_by_name(d.obj, "panama_steer");
  bpf_map* xmap = bpf_object__find_map_by_name(d.obj, "xsks_map");
  bpf_map* cmap = bpf_object__find_map_by_name(d.obj, "steer_cfg");
  if (!prog || !xmap || !cmap) throw TransportError("xdp: the embedded XDP program lacks its maps");
  const uint32_t key = 0, port_be = htons(p.port);
  if (int e = bpf_map_update_elem(bpf_map__fd(cmap), &key, &port_be, 0)) fail("setting the port", e);
  const int pfd = bpf_program__fd(prog);
  int e = bpf_xdp_attach(static_cast<int>(d.ifindex), pfd, XDP_FLAGS_DRV_MODE, nullptr);
  bool native = e == 0;
  if (!native) {
    bpf_xdp_detach(static_cast<int>(d.ifindex), XDP_FLAGS_SKB_MODE, nullptr);
    e = bpf_xdp_attach(static_cast<int>(d.ifindex), pfd, XDP_FLAGS_SKB_MODE, nullptr);
    if (e) fail("attaching the XDP program to " + p.iface, e);
  }
  d.attach_flags = native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
  d.attached = true;

  // The UMEM and the socket: zero-copy first, copy mode when the driver refuses it.
  const size_t bytes = static_cast<size_t>(kFrames) * kFrameSize;
  d.area = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (d.area == MAP_FAILED) {
    d.area = nullptr;
    fail("mapping the UMEM", errno);
  }
  xsk_umem_config uc{};
  uc.fill_size = kRing;
  uc.comp_size = kRing;
  uc.frame_size = kFrameSize;
  uc.frame_headroom = 0;
  uc.flags = 0;
  if (int r = xsk_umem__create(&d.umem, d.area, bytes, &d.fq, &d.cq, &uc)) fail("creating the UMEM", r);
  xsk_socket_config sc{};
  sc.rx_size = kRing;
  sc.tx_size = kRing;
  sc.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
  sc.xdp_flags = d.attach_flags;
  bool zc = false;
  int r = -EOPNOTSUPP;
  if (native) {
    sc.bind_flags = XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP;
    r = xsk_socket__create(&d.xsk, p.iface.c_str(), static_cast<uint32_t>(queue), d.umem, &d.rx, &d.tx, &sc);
    zc = r == 0;
  }
  if (!zc) {
    sc.bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP;
    r = xsk_socket__create(&d.xsk, p.iface.c_str(), static_cast<uint32_t>(queue), d.umem, &d.rx, &d.tx, &sc);
    if (r) fail("binding an AF_XDP socket to " + p.iface + " queue " + std::to_string(queue), r);
  }
  if (int u = xsk_socket__update_xskmap(d.xsk, bpf_map__fd(xmap))) fail("registering the socket", u);
  d.fd = xsk_socket__fd(d.xsk);
  mode_ = std::string(zc ? "zero-copy" : "copy") + (native ? ", native XDP" : ", generic XDP");

  // Frames 0 .. kFrames/2 - 1 wait in the fill ring, the rest are for sending.
  uint32_t idx = 0;
  if (xsk_ring_prod__reserve(&d.fq, kFrames / 2, &idx) != kFrames / 2) throw TransportError("xdp: fill ring too small");
  for (uint32_t i = 0; i < kFrames / 2; ++i) *xsk_ring_prod__fill_addr(&d.fq, idx + i) = uint64_t{i} * kFrameSize;
  xsk_ring_prod__submit(&d.fq, kFrames / 2);
  d.free_tx.reserve(kFrames / 2);
  for (uint32_t i = kFrames / 2; i < kFrames; ++i) d.free_tx.push_back(uint64_t{i} * kFrameSize);
}

XdpTransport::~XdpTransport() {
  try {
    flush();
  } catch (const TransportError&) {
    // Nothing to report to at destruction; the peers see the frames as lost.
  }
}

uint8_t* XdpTransport::tx_begin(size_t len) {
  Impl& d = *d_;
  if (len > kFrameSize) throw TransportError("xdp: frame of " + std::to_string(len) + " bytes exceeds a UMEM frame");
  if (d.free_tx.empty()) d.reclaim();
  for (int tries = 0; d.free_tx.empty(); ++tries) {  // every tx frame in flight: wake the kernel, wait
    d.kick();
    if (tries > 100000) throw TransportError("xdp: no transmit completion on " + d.iface + " for a long time");
    if (tries > 16) usleep(10);
    d.reclaim();
  }
  d.cur_tx = d.free_tx.back();
  d.free_tx.pop_back();
  return d.frame(d.cur_tx);
}

void XdpTransport::tx_end(size_t len) {
  Impl& d = *d_;
  uint32_t idx = 0;
  while (xsk_ring_prod__reserve(&d.tx, 1, &idx) != 1) {  // the ring is full of submitted frames
    d.kick();
    d.reclaim();
    usleep(10);
  }
  xdp_desc* desc = xsk_ring_prod__tx_desc(&d.tx, idx);
  desc->addr = d.cur_tx;
  desc->len = static_cast<uint32_t>(len);
  if (++d.tx_pending >= kBatch) d.kick();
}

void XdpTransport::send(const wire::Bytes& f) {
  if (f.size() < wire::kHeaderBytes) throw TransportError("xdp: frame shorter than the headers");
  std::memcpy(tx_begin(f.size()), f.data(), f.size());
  tx_end(f.size());
}

void XdpTransport::flush() {
  d_->kick();
  d_->reclaim();
}

bool XdpTransport::recv_view(const uint8_t*& frame, size_t& len, Clock::time_point deadline) {
  Impl& d = *d_;
  for (;;) {
    if (d.rx_pos < d.rx_n) {
      const xdp_desc* desc = xsk_ring_cons__rx_desc(&d.rx, d.rx_idx + d.rx_pos++);
      frame = d.frame(desc->addr);
      len = desc->len;
      return true;
    }
    // The batch is used up: its frames go back to the fill ring, and what was built meanwhile
    // leaves before the next peek (one wake-up for the frames answering a whole batch).
    d.release_rx();
    if (d.tx_pending) flush();
    d.rx_n = xsk_ring_cons__peek(&d.rx, kBatch, &d.rx_idx);
    if (d.rx_n) continue;
    d.reclaim();
    const auto now = Clock::now();
    if (now >= deadline) return false;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    pollfd q{d.fd, POLLIN, 0};
    if (poll(&q, 1, static_cast<int>(std::min<long long>(ms, 100))) < 0 && errno != EINTR) fail("poll", errno);
  }
}

bool XdpTransport::recv(wire::Bytes& frame, Clock::time_point deadline) {
  const uint8_t* p = nullptr;
  size_t len = 0;
  if (!recv_view(p, len, deadline)) return false;
  frame.assign(p, p + len);
  return true;
}

}  // namespace panama::host
