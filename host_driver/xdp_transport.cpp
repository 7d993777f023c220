#include "xdp_transport.h"

#include "xdp_prog.h"

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

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace panama::host {

namespace {

constexpr uint32_t kFrames = 4096;  // UMEM frames: half rx (fill ring), half tx
constexpr uint32_t kFrameSize = XSK_UMEM__DEFAULT_FRAME_SIZE;
static_assert(kFrameSize == XdpTransport::kMaxFrame, "one frame per UMEM frame");
constexpr uint32_t kRing = 2048;
constexpr uint32_t kBatch = 64;  // descriptors per peek / per kernel wake-up on tx

[[noreturn]] void fail(const std::string& what, int err) {
  throw TransportError("xdp: " + what + ": " + std::strerror(err < 0 ? -err : err));
}

int libbpf_quiet(enum libbpf_print_level, const char*, va_list) { return 0; }

}  // namespace

// What every socket on the interface shares: the program and its maps, the UMEM with its fill
// and completion rings, and the pool of frames for sending. `lock` guards the rings and the
// pool; a socket takes it once per batch of up to kBatch frames, never per frame.
struct XdpTransport::Shared {
  std::string iface;
  unsigned ifindex = 0;
  uint32_t attach_flags = 0;
  bpf_object* obj = nullptr;
  int link_fd = -1;  // the program's bpf_link: closing it (or the process dying) detaches it
  bool native = false, zc = false;
  bool all = false;  // a switch stand-in's port: every frame steered
  int xsks_map_fd = -1;
  void* area = nullptr;
  xsk_umem* umem = nullptr;
  xsk_ring_prod fq{};
  xsk_ring_cons cq{};
  // The lock on a cache line of its own, away from the rings' indices that the sockets read
  // without it (no false sharing between the threads).
  alignas(64) std::atomic_flag lock = ATOMIC_FLAG_INIT;
  alignas(64) std::vector<uint64_t> pool;  // tx frames not in flight
  int sockets = 0;

  void take() {
    while (lock.test_and_set(std::memory_order_acquire)) {
    }
  }
  void give() { lock.clear(std::memory_order_release); }
  uint8_t* frame(uint64_t addr) { return static_cast<uint8_t*>(xsk_umem__get_data(area, addr)); }
  void reclaim() {  // under the lock: completed tx frames back to the pool
    uint32_t idx = 0;
    const uint32_t n = xsk_ring_cons__peek(&cq, kRing, &idx);
    for (uint32_t i = 0; i < n; ++i) pool.push_back(*xsk_ring_cons__comp_addr(&cq, idx + i));
    if (n) xsk_ring_cons__release(&cq, n);
  }
  ~Shared() {
    if (umem) xsk_umem__delete(umem);
    if (area) munmap(area, static_cast<size_t>(kFrames) * kFrameSize);
    if (link_fd >= 0) close(link_fd);
    if (obj) bpf_object__close(obj);
  }
};

struct XdpTransport::Impl {
  std::shared_ptr<Shared> sh;
  xsk_socket* xsk = nullptr;
  xsk_ring_prod tx{};
  xsk_ring_cons rx{};
  int fd = -1;
  int busy_us = 0;              // PANAMA_XDP_BUSY_POLL: spin this long on an empty rx ring before sleeping
  std::vector<uint64_t> cache;  // tx frames taken from the pool (at most kBatch)
  uint64_t cur_tx = 0;          // the frame tx_begin handed out
  uint32_t tx_pending = 0;      // reserved in the tx ring, not yet submitted
  uint64_t kicks_again = 0;     // wake-ups answered EAGAIN/EBUSY/ENOBUFS (the ring not yet taken)
  uint32_t rx_idx = 0, rx_n = 0, rx_pos = 0;  // the peeked rx batch and how far it was handed out
  std::vector<uint64_t> refill;               // received frames not yet back in the fill ring

  ~Impl() {
    if (xsk) xsk_socket__delete(xsk);
  }

  void kick() {  // submits what is reserved; wakes the kernel if the tx ring asks for it
    if (tx_pending) {
      xsk_ring_prod__submit(&tx, tx_pending);
      tx_pending = 0;
    }
    // Only while the tx ring holds descriptors the kernel has not taken: in copy mode the flag
    // stays set, and an empty ring would cost a system call per round for nothing.
    // Copy mode sends at most 32 frames per system call and answers EAGAIN while more wait: the
    // kick repeats until the ring is taken (bounded: a ring's worth of calls).
    for (uint32_t i = 0; i <= kRing / 32; ++i) {
      if (!xsk_ring_prod__needs_wakeup(&tx) || xsk_prod_nb_free(&tx, kRing) >= kRing) break;
      if (sendto(fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) >= 0) break;
      ++kicks_again;
      if (errno == EAGAIN) continue;
      if (errno == EBUSY || errno == ENOBUFS || errno == ENETDOWN) break;  // the next kick tries again
      fail("waking the transmit ring", errno);
    }
  }

  void refill_cache() {  // up to kBatch tx frames from the pool (completions reclaimed first)
    sh->take();
    sh->reclaim();
    while (cache.size() < kBatch && !sh->pool.empty()) {
      cache.push_back(sh->pool.back());
      sh->pool.pop_back();
    }
    sh->give();
  }

  // The handed-out batch back to the (shared) fill ring. The kernel publishes what it consumed
  // from the fill ring only at its flushes, so the ring can look full for a moment: what does not
  // fit waits in `refill` (its capacity reserved: no allocation) for the next call.
  void release_rx() {
    if (rx_n > 0 && rx_pos >= rx_n) {
      for (uint32_t i = 0; i < rx_n; ++i)
        refill.push_back(xsk_umem__extract_addr(xsk_ring_cons__rx_desc(&rx, rx_idx + i)->addr));
      xsk_ring_cons__release(&rx, rx_n);
      rx_n = rx_pos = 0;
    }
    if (refill.empty()) return;
    sh->take();
    const uint32_t want = static_cast<uint32_t>(refill.size());
    const uint32_t n = std::min(want, xsk_prod_nb_free(&sh->fq, want));
    uint32_t fidx = 0;
    if (n > 0 && xsk_ring_prod__reserve(&sh->fq, n, &fidx) == n) {
      for (uint32_t i = 0; i < n; ++i) *xsk_ring_prod__fill_addr(&sh->fq, fidx + i) = refill[want - 1 - i];
      xsk_ring_prod__submit(&sh->fq, n);
      refill.resize(want - n);
    }
    sh->give();
  }
};

namespace {

// Loads and attaches the program, maps the UMEM and fills its fill ring: the part of an
// interface's AF_XDP set-up that every socket shares. Throws TransportError with one line.
std::shared_ptr<XdpTransport::Shared> open_port(const RawParams& p, int sockets, const std::vector<int>& tid_socket,
                                                bool all) {
  if (p.iface.empty() || p.iface.size() >= IFNAMSIZ) throw TransportError("xdp: bad interface name '" + p.iface + "'");
  auto sh = std::make_shared<XdpTransport::Shared>();
  XdpTransport::Shared& d = *sh;
  d.iface = p.iface;
  d.sockets = sockets;
  d.all = all;
  d.ifindex = if_nametoindex(p.iface.c_str());
  if (d.ifindex == 0) throw TransportError("xdp: no interface '" + p.iface + "'");
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
  bpf_map* tmap = bpf_object__find_map_by_name(d.obj, "tid_sock");
  if (!prog || !xmap || !cmap || !tmap) throw TransportError("xdp: the embedded XDP program lacks its maps");
  d.xsks_map_fd = bpf_map__fd(xmap);
  if (int e = xdp::set_steer_cfg(bpf_map__fd(cmap), p.port, sockets > 1, all)) fail("setting the port and steering", e);
  for (size_t t = 0; t < tid_socket.size() && t < 256; ++t) {
    const uint32_t key = static_cast<uint32_t>(t), v = static_cast<uint32_t>(tid_socket[t]);
    if (int e = bpf_map_update_elem(bpf_map__fd(tmap), &key, &v, 0)) fail("setting the TID steering", e);
  }
  // Attached through a bpf_link: the kernel refuses it while any other XDP program is on the
  // interface (which is then named and kept, never replaced), and detaches it when the link's last
  // file descriptor closes, so nothing stays after the process ends, by a SIGKILL too.
  const xdp::Attached other = xdp::attached_program(d.ifindex);
  if (other.id != 0)
    throw TransportError("xdp: " + p.iface + " already has the XDP program " + other.str() +
                         " attached; it is not replaced: detach it (ip link set dev " + p.iface +
                         " xdp off) if it is not needed, or use another backend");
  const int pfd = bpf_program__fd(prog);
  LIBBPF_OPTS(bpf_link_create_opts, native_opts, .flags = XDP_FLAGS_DRV_MODE);
  d.link_fd = bpf_link_create(pfd, static_cast<int>(d.ifindex), BPF_XDP, &native_opts);
  d.native = d.link_fd >= 0;
  if (!d.native) {
    LIBBPF_OPTS(bpf_link_create_opts, skb_opts, .flags = XDP_FLAGS_SKB_MODE);
    d.link_fd = bpf_link_create(pfd, static_cast<int>(d.ifindex), BPF_XDP, &skb_opts);
    if (d.link_fd < 0) {
      const xdp::Attached now = xdp::attached_program(d.ifindex);
      if (now.id != 0)
        throw TransportError("xdp: " + p.iface + " got the XDP program " + now.str() +
                             " attached meanwhile; it is not replaced");
      fail("attaching the XDP program to " + p.iface + " (a bpf_link: kernel 5.9 or later)", d.link_fd);
    }
  }
  d.attach_flags = d.native ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;

  // Queue 0 only: the program redirects a frame to the socket of the queue it arrived on (or, with
  // several sockets, all bound to queue 0, by TID), so a frame that RSS puts on another queue
  // would go to the kernel and its all-reduce time out. Several queues are refused unless the
  // user steers the traffic to queue 0 and says so.
  const int queues = rx_queues(p.iface);
  const char* steered = std::getenv("PANAMA_XDP_STEERED");
  if (queues > 1 && !(steered && std::string(steered) == "1"))
    throw TransportError("xdp: " + p.iface + " has " + std::to_string(queues) +
                         " receive queues and this backend reads queue 0 only: set one (ethtool -L " + p.iface +
                         " combined 1)" +
                         (all ? std::string()
                              : ", or steer UDP port " + std::to_string(p.port) + " to queue 0 (ethtool -N " + p.iface +
                                    " flow-type udp4 dst-port " + std::to_string(p.port) + " action 0)") +
                         " and set PANAMA_XDP_STEERED=1");

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
  return sh;
}

}  // namespace

XdpTransport::XdpTransport(const RawParams& p, int queue) : XdpTransport(p, open_port(p, 1, {}, false), queue) {}

std::vector<std::unique_ptr<XdpTransport>> XdpTransport::open_shared(const RawParams& p, int sockets,
                                                                     const std::vector<int>& tid_socket) {
  if (sockets < 1 || sockets > 64) throw TransportError("xdp: 1..64 sockets per interface");
  auto sh = open_port(p, sockets, tid_socket, false);
  std::vector<std::unique_ptr<XdpTransport>> v;
  for (int k = 0; k < sockets; ++k) v.emplace_back(new XdpTransport(p, sh, k));
  return v;
}

std::vector<std::unique_ptr<XdpTransport>> XdpTransport::open_switch_port(const RawParams& p, int sockets,
                                                                          const std::vector<int>& tid_socket) {
  if (sockets < 1 || sockets > 64) throw TransportError("xdp: 1..64 sockets per interface");
  auto sh = open_port(p, sockets, tid_socket, true);
  std::vector<std::unique_ptr<XdpTransport>> v;
  for (int k = 0; k < sockets; ++k) v.emplace_back(new XdpTransport(p, sh, k));
  return v;
}

int XdpTransport::fd() const { return d_->fd; }

void XdpTransport::find_addresses(const RawParams& p) {
  if ((p.group_ip >> 28) != 0xE)
    throw TransportError("xdp: group address " + wire::ipv4_to_string(p.group_ip) + " is not multicast");
  if (p.agg_ip == 0) throw TransportError("xdp: no aggregator address");
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
}

// Socket `index` of the interface (xsks_map key `index`; queue 0 when several share it).
XdpTransport::XdpTransport(const RawParams& p, std::shared_ptr<Shared> shp, int index) : RawTransport(p), d_(new Impl) {
  if (index < 0 || index >= 64) throw TransportError("xdp: queue must be 0..63");
  Impl& d = *d_;
  d.sh = std::move(shp);
  Shared& sh = *d.sh;
  const uint32_t queue = sh.sockets > 1 ? 0u : static_cast<uint32_t>(index);
  if (!sh.all) find_addresses(p);
  // The socket: zero-copy first (native XDP only), copy mode when the driver refuses it; the
  // sockets after the first share the UMEM and its rings.
  xsk_socket_config sc{};
  sc.rx_size = kRing;
  sc.tx_size = kRing;
  sc.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
  sc.xdp_flags = sh.attach_flags;
  const bool first = sh.pool.empty() && index == 0;
  auto create = [&](uint16_t flags) {
    sc.bind_flags = flags;
    if (first) return xsk_socket__create(&d.xsk, p.iface.c_str(), queue, sh.umem, &d.rx, &d.tx, &sc);
    return xsk_socket__create_shared(&d.xsk, p.iface.c_str(), queue, sh.umem, &d.rx, &d.tx, &sh.fq, &sh.cq, &sc);
  };
  int r = -EOPNOTSUPP;
  if (first) {
    sh.zc = false;
    if (sh.native) {
      r = create(XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP);
      sh.zc = r == 0;
    }
    if (!sh.zc) r = create(XDP_COPY | XDP_USE_NEED_WAKEUP);
  } else {
    r = create(static_cast<uint16_t>((sh.zc ? XDP_ZEROCOPY : XDP_COPY) | XDP_USE_NEED_WAKEUP));
  }
  if (r) fail("binding an AF_XDP socket to " + p.iface + " queue " + std::to_string(queue), r);
  d.fd = xsk_socket__fd(d.xsk);
  // xsks_map: key = the receiving queue, or the socket's index when the TID steers.
  const uint32_t key = static_cast<uint32_t>(index), fdv = static_cast<uint32_t>(d.fd);
  if (int u = bpf_map_update_elem(sh.xsks_map_fd, &key, &fdv, 0)) fail("registering the socket", u);
  mode_ = std::string(sh.zc ? "zero-copy" : "copy") + (sh.native ? ", native XDP" : ", generic XDP");
  mode_ += busy_poll(d);

  if (first) {
    // Frames 0 .. kFrames/2 - 1 wait in the fill ring, the rest are for sending.
    uint32_t idx = 0;
    if (xsk_ring_prod__reserve(&sh.fq, kFrames / 2, &idx) != kFrames / 2)
      throw TransportError("xdp: fill ring too small");
    for (uint32_t i = 0; i < kFrames / 2; ++i) *xsk_ring_prod__fill_addr(&sh.fq, idx + i) = uint64_t{i} * kFrameSize;
    xsk_ring_prod__submit(&sh.fq, kFrames / 2);
    sh.pool.reserve(kFrames);
    for (uint32_t i = kFrames / 2; i < kFrames; ++i) sh.pool.push_back(uint64_t{i} * kFrameSize);
  }
  d.cache.reserve(kBatch);
  d.refill.reserve(kFrames);
}

XdpTransport::~XdpTransport() {
  try {
    flush();
  } catch (const TransportError&) {
    // Nothing to report to at destruction; the peers see the frames as lost.
  }
}

// PANAMA_XDP_BUSY_POLL=US (docs/host.md "Backends"): SO_PREFER_BUSY_POLL, SO_BUSY_POLL = US and
// SO_BUSY_POLL_BUDGET = kBatch on the socket; an empty rx ring is then polled from the receiving
// call (recvfrom, which runs the device's NAPI context here) for up to US microseconds before the
// call sleeps in poll(). Refused options leave the socket as it was, said in the mode.
std::string XdpTransport::busy_poll(Impl& d) {
  const char* e = std::getenv("PANAMA_XDP_BUSY_POLL");
  if (!e || !*e) return "";
  char* end = nullptr;
  const long us = std::strtol(e, &end, 10);
  if (*end != '\0' || us < 0 || us > 1000000)
    throw TransportError(std::string("xdp: PANAMA_XDP_BUSY_POLL must be 0..1000000 microseconds, not '") + e + "'");
  if (us == 0) return "";
  const int one = 1, v = static_cast<int>(us), budget = static_cast<int>(kBatch);
#ifndef SO_PREFER_BUSY_POLL
  constexpr int SO_PREFER_BUSY_POLL = 69, SO_BUSY_POLL_BUDGET = 70;
#endif
  if (setsockopt(d.fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &one, sizeof one) != 0 ||
      setsockopt(d.fd, SOL_SOCKET, SO_BUSY_POLL, &v, sizeof v) != 0 ||
      setsockopt(d.fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &budget, sizeof budget) != 0) {
    const int err = errno;
    // Back to the socket as it was: none of the three left half set.
    const int zero = 0;
    (void)setsockopt(d.fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &zero, sizeof zero);
    (void)setsockopt(d.fd, SOL_SOCKET, SO_BUSY_POLL, &zero, sizeof zero);
    return std::string(", busy-poll refused (") + std::strerror(err) + "): interrupts";
  }
  d.busy_us = v;
  return ", busy-poll " + std::to_string(v) + " us";
}

std::string XdpTransport::datapath() const {
  return "AF_XDP " + mode_ +
         (d_->sh->sockets > 1 ? ", " + std::to_string(d_->sh->sockets) + " sockets sharing queue 0's UMEM" : "");
}

uint8_t* XdpTransport::tx_begin(size_t len) {
  Impl& d = *d_;
  if (len > kFrameSize) throw TransportError("xdp: frame of " + std::to_string(len) + " bytes exceeds a UMEM frame");
  if (d.cache.empty()) d.refill_cache();
  for (int tries = 0; d.cache.empty(); ++tries) {  // every tx frame in flight: wake the kernel, wait
    d.kick();
    if (tries > 100000) throw TransportError("xdp: no transmit completion on " + d.sh->iface + " for a long time");
    if (tries > 16) usleep(10);
    d.refill_cache();
  }
  d.cur_tx = d.cache.back();
  d.cache.pop_back();
  return d.sh->frame(d.cur_tx);
}

void XdpTransport::tx_end(size_t len) {
  Impl& d = *d_;
  uint32_t idx = 0;
  while (xsk_ring_prod__reserve(&d.tx, 1, &idx) != 1) {  // the ring is full of submitted frames
    d.kick();
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

void XdpTransport::flush() { d_->kick(); }

std::vector<std::pair<std::string, uint64_t>> XdpTransport::link_counters() const {
  xdp_statistics st{};
  socklen_t len = sizeof st;
  std::vector<std::pair<std::string, uint64_t>> v;
  if (getsockopt(d_->fd, SOL_XDP, XDP_STATISTICS, &st, &len) == 0) {
    v = {{"rx_dropped", st.rx_dropped},
         {"rx_invalid_descs", st.rx_invalid_descs},
         {"tx_invalid_descs", st.tx_invalid_descs},
         {"rx_ring_full", st.rx_ring_full},
         {"rx_fill_ring_empty_descs", st.rx_fill_ring_empty_descs},
         {"tx_ring_empty_descs", st.tx_ring_empty_descs}};
  }
  v.emplace_back("tx_kicks_again", d_->kicks_again);
  return v;
}

bool XdpTransport::recv_view(const uint8_t*& frame, size_t& len, Clock::time_point deadline) {
  Impl& d = *d_;
  Clock::time_point spin_until = Clock::time_point::min();
  for (;;) {
    if (d.rx_pos < d.rx_n) {
      const xdp_desc* desc = xsk_ring_cons__rx_desc(&d.rx, d.rx_idx + d.rx_pos++);
      frame = d.sh->frame(desc->addr);
      len = desc->len;
      return true;
    }
    // The batch is used up: its frames go back to the fill ring, and what was built meanwhile
    // leaves before the next peek (one wake-up for the frames answering a whole batch).
    d.release_rx();
    if (d.tx_pending) flush();
    d.rx_n = xsk_ring_cons__peek(&d.rx, kBatch, &d.rx_idx);
    if (d.rx_n) continue;
    if (deadline == Clock::time_point::min()) return false;  // a look only (the stand-in's links)
    const auto now = Clock::now();
    if (now >= deadline) return false;
    if (d.busy_us > 0) {  // busy-poll: the device's NAPI run from here, then sleep
      if (spin_until == Clock::time_point::min()) spin_until = now + std::chrono::microseconds(d.busy_us);
      if (now < spin_until) {
        (void)recvfrom(d.fd, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
        continue;
      }
    }
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
