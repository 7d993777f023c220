#include "dpdk_transport.h"

#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <sys/syscall.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#if PANAMA_DPDK_XDP_PROG
#include <fcntl.h>
#include <linux/if_link.h>
#include <netinet/in.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdp_prog.h"  // the xdp backend's steering program, embedded in panama_xdp
#endif

namespace panama::host {

bool dpdk_available() { return true; }

namespace {
constexpr uint16_t kRing = 1024;   // descriptors per queue
constexpr unsigned kMbufs = 4095;  // mempool size (2^n - 1)
constexpr uint16_t kBurst = 32;
bool g_eal_done = false;  // rte_eal_init runs once per process

// rte_eal_cleanup, then the EAL's runtime directory (/var/run/dpdk/PREFIX: empty with --no-shconf,
// but left behind; one per worker process would pile up).
void eal_cleanup() {
  const std::string dir = rte_eal_get_runtime_dir();
  rte_eal_cleanup();
  if (!dir.empty()) (void)rmdir(dir.c_str());
}

// Whether the net_af_xdp PMD can work here: the driver among DPDK's plugins and an AF_XDP socket
// the kernel gives this process. *why: what is missing.
bool af_xdp_usable(std::string* why) {
  const std::string dir = RTE_EAL_PMD_PATH;
  if (access((dir + "/librte_net_af_xdp.so").c_str(), R_OK) != 0) {
    *why = "no net_af_xdp driver in " + dir + " (librte-net-af-xdp23)";
    return false;
  }
  const int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *why = std::string("AF_XDP socket refused: ") + std::strerror(errno);
    return false;
  }
  close(fd);
  // The PMD loads an XDP program: a two-instruction one (return XDP_PASS) must load.
  const bpf_insn prog[2] = {{0xb7, 0, 0, 0, 2}, {0x95, 0, 0, 0, 0}};  // r0 = 2; exit
  const char license[] = "GPL";
  bpf_attr a{};
  a.prog_type = BPF_PROG_TYPE_XDP;
  a.insn_cnt = 2;
  a.insns = reinterpret_cast<uint64_t>(prog);
  a.license = reinterpret_cast<uint64_t>(license);
  const long pfd = syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof a);
  if (pfd < 0) {
    *why = std::string("loading an XDP program refused: ") + std::strerror(errno);
    return false;
  }
  close(static_cast<int>(pfd));
  return true;
}

[[noreturn]] void fail(const std::string& what, int err) {
  throw TransportError("dpdk: " + what + ": " + rte_strerror(err < 0 ? -err : err));
}

#if PANAMA_DPDK_XDP_PROG
constexpr const char* kProgName = "panama_steer";  // the program in bpf/xdp_steer.bpf.c

int libbpf_quiet(enum libbpf_print_level, const char*, va_list) { return 0; }

[[noreturn]] void fail_errno(const std::string& what, int err) {
  throw TransportError("dpdk: " + what + ": " + std::strerror(err < 0 ? -err : err));
}

struct Fd {  // closes its descriptor
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

using xdp::Attached;
using xdp::attached_program;

// The program object for the PMD's `xdp_prog=`, which loads it from a file: written to a private
// directory (mkdtemp under $TMPDIR, else /tmp: mode 0700) as a file created exclusively, not
// through a link, mode 0600, so that no other user can swap the object the PMD loads with this
// process's privileges. Both are removed as soon as the PMD has loaded it, and on every error.
struct ProgFile {
  std::string dir, path;
  void create() {
    const char* t = std::getenv("TMPDIR");
    // A path the EAL's devargs carry as they are: absolute, without ',', '=' or blanks.
    const std::string base = t && *t == '/' && !std::strpbrk(t, ",= \t") ? t : "/tmp";
    std::string tmpl = base + "/panama-dpdk-XXXXXX";
    if (!mkdtemp(&tmpl[0])) fail_errno("a private directory for the XDP program object in " + base, errno);
    dir = tmpl;
    path = dir + "/xdp_steer.bpf.o";
    const Fd f{open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)};
    if (f.fd < 0) fail_errno("writing " + path, errno);
    for (size_t done = 0; done < panama_xdp_steer_obj_len;) {
      const ssize_t k = ::write(f.fd, panama_xdp_steer_obj + done, panama_xdp_steer_obj_len - done);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) fail_errno("writing " + path, k < 0 ? errno : EIO);
      done += static_cast<size_t>(k);
    }
  }
  void drop() {
    if (!path.empty()) (void)unlink(path.c_str());
    if (!dir.empty()) (void)rmdir(dir.c_str());
    path.clear();
    dir.clear();
  }
  ~ProgFile() { drop(); }
};

// The next hop's MAC from the kernel's neighbour table; without an entry, a datagram to the next
// hop makes the kernel resolve it, waited for up to 1 s. (With the project's program, ARP replies
// reach the kernel, not the PMD.)
bool kernel_resolve(const std::string& iface, wire::Ipv4 hop, wire::Mac& mac) {
  for (int i = 0; i < 20; ++i) {
    if (kernel_neighbour(iface, hop, mac)) return true;
    if (i % 5 == 0) {
      const Fd s{socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)};
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(9);  // discard
      a.sin_addr.s_addr = htonl(hop);
      if (s.fd >= 0) {
        (void)setsockopt(s.fd, SOL_SOCKET, SO_BINDTODEVICE, iface.c_str(), static_cast<socklen_t>(iface.size()));
        (void)sendto(s.fd, "", 0, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&a), sizeof a);
      }
    }
    usleep(50000);
  }
  return kernel_neighbour(iface, hop, mac);
}

// After the PMD attached the program (at the RX queue's set-up, with XDP_FLAGS_UPDATE_IF_NOEXIST:
// it never replaces another one): the program on the interface must be the project's. Its
// steer_cfg (found through the program's map ids) is set as the xdp backend sets it for one socket
// on queue 0: the port, steering by the receiving queue, not a stand-in's port. Then the PMD's
// netlink attachment is exchanged for a bpf_link (detached only while it is still this program:
// XDP_FLAGS_REPLACE), which the kernel removes when the process ends, by a SIGKILL too. Returns
// the link's descriptor, or -1 where the kernel has no XDP links (attached as the PMD had it).
int adopt_program(unsigned ifindex, const RawParams& p) {
  const Attached a = attached_program(ifindex);
  if (a.id == 0) throw TransportError("dpdk: the net_af_xdp PMD attached no XDP program to " + p.iface);
  if (a.name != kProgName)
    throw TransportError("dpdk: " + p.iface + " has the XDP program " + a.str() + ", not the project's '" + kProgName +
                         "'; it is not replaced");
  const Fd prog{bpf_prog_get_fd_by_id(a.id)};
  if (prog.fd < 0) fail_errno("opening the XDP program " + a.str(), errno);
  bpf_prog_info info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(prog.fd, &info, &len) != 0) fail_errno("reading the XDP program " + a.str(), errno);
  std::vector<uint32_t> ids(info.nr_map_ids);
  info = bpf_prog_info{};
  info.nr_map_ids = static_cast<uint32_t>(ids.size());
  info.map_ids = reinterpret_cast<uint64_t>(ids.data());
  len = sizeof info;
  if (bpf_obj_get_info_by_fd(prog.fd, &info, &len) != 0) fail_errno("reading the XDP program's maps", errno);
  Fd cfg;
  for (uint32_t i = 0; i < info.nr_map_ids && i < ids.size() && cfg.fd < 0; ++i) {
    Fd m{bpf_map_get_fd_by_id(ids[i])};
    bpf_map_info mi{};
    uint32_t ml = sizeof mi;
    if (m.fd >= 0 && bpf_obj_get_info_by_fd(m.fd, &mi, &ml) == 0 && std::strcmp(mi.name, "steer_cfg") == 0)
      std::swap(cfg.fd, m.fd);
  }
  if (cfg.fd < 0) throw TransportError("dpdk: the XDP program " + a.str() + " on " + p.iface + " has no steer_cfg map");
  if (int e = xdp::set_steer_cfg(cfg.fd, p.port, false, false)) fail_errno("setting the XDP program's port", -e);

  if (a.mode != XDP_ATTACHED_DRV && a.mode != XDP_ATTACHED_SKB) return -1;
  const uint32_t mode = a.mode == XDP_ATTACHED_DRV ? XDP_FLAGS_DRV_MODE : XDP_FLAGS_SKB_MODE;
  LIBBPF_OPTS(bpf_xdp_attach_opts, old, .old_prog_fd = prog.fd);
  if (int e = bpf_xdp_detach(static_cast<int>(ifindex), mode, &old))
    fail_errno("taking over the XDP program " + a.str() + " on " + p.iface, e);
  LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = mode);
  const int link = bpf_link_create(prog.fd, static_cast<int>(ifindex), BPF_XDP, &lo);
  if (link >= 0) return link;
  if (bpf_xdp_attach(static_cast<int>(ifindex), prog.fd, mode | XDP_FLAGS_UPDATE_IF_NOEXIST, nullptr) == 0) return -1;
  const Attached now = attached_program(ifindex);
  if (now.id != 0)
    throw TransportError("dpdk: " + p.iface + " got the XDP program " + now.str() +
                         " attached meanwhile; it is not replaced");
  fail_errno("attaching the XDP program to " + p.iface, link);
}
#else
struct ProgFile {};
#endif
}  // namespace

std::vector<std::string> DpdkTransport::default_eal_args(const std::string& iface, bool af_xdp,
                                                         const std::string& xdp_prog) {
  // Every CPU this process may run on, for lcore 0 (the only one): the OS schedules it; several
  // workers can share the cores.
  cpu_set_t set;
  CPU_ZERO(&set);
  std::string cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
  if (cpus.empty()) cpus = "0";
  return {"--lcores=0@(" + cpus + ")",
          "--no-huge",
          "-m",
          "64",
          "--no-pci",
          "--no-shconf",
          "--no-telemetry",
          "--file-prefix=panama-" + std::to_string(getpid()),
          "--log-level=4",
          af_xdp ? "--vdev=net_af_xdp0,iface=" + iface + ",start_queue=0,queue_count=1" +
                       (xdp_prog.empty() ? "" : ",xdp_prog=" + xdp_prog)
                 : "--vdev=net_af_packet0,iface=" + iface};
}

struct DpdkTransport::Impl {
  uint16_t port = 0;
  rte_mempool* pool = nullptr;
  bool started = false;
  // Received results not yet handed out, kept in their mbufs (no copy, no allocation per frame):
  // ready[ready_head..] in arrival order; `held` is the one recv_view handed out, freed at the
  // next call. A result in several segments is read into `seg` when handed out.
  std::vector<rte_mbuf*> ready;
  size_t ready_head = 0;
  rte_mbuf* held = nullptr;
  wire::Bytes seg;
  rte_mbuf* rx[kBurst];
  rte_mbuf* tx[kBurst];  // built frames not yet handed to the PMD (one burst)
  uint16_t ntx = 0;
  rte_mbuf* cur = nullptr;  // the frame tx_begin handed out
  int link_fd = -1;         // the bpf_link of the project's XDP program (net_af_xdp), see adopt_program

  // Before the port is closed: the PMD's close detaches whatever program is on the interface over
  // netlink, which an XDP link refuses; with the link closed first there is nothing left to detach.
  void close_link() {
    if (link_fd >= 0) close(link_fd);
    link_fd = -1;
  }

  // Hands the built frames to the PMD in one burst (bounded: 1 s without progress fails).
  void flush_tx(const std::string& iface) {
    uint16_t done = 0;
    auto until = Clock::now() + std::chrono::seconds(1);
    while (done < ntx) {
      const uint16_t k = rte_eth_tx_burst(port, 0, tx + done, static_cast<uint16_t>(ntx - done));
      if (k > 0) {
        done = static_cast<uint16_t>(done + k);
        until = Clock::now() + std::chrono::seconds(1);
        continue;
      }
      if (Clock::now() > until) {
        for (uint16_t i = done; i < ntx; ++i) rte_pktmbuf_free(tx[i]);
        ntx = 0;
        throw TransportError("dpdk: TX queue of " + iface + " stuck for 1 s");
      }
      usleep(10);
    }
    ntx = 0;
  }
  int wake_fd = -1;  // kernel packet socket that only signals arriving results (see open_wake)
  ~Impl() {
    if (wake_fd >= 0) close(wake_fd);
  }

  // With the af_packet PMD the frames pass the kernel anyway, and the PMD has no RX interrupt.
  // A second AF_PACKET socket on the interface, whose classic BPF keeps 1 byte of each result
  // frame (IPv4, UDP, ipv4.dst = group, destination port; no IP options) and drops the rest,
  // lets an idle worker block in poll() until a result arrives instead of sleeping blindly.
  // Best effort: without it the worker sleeps in steps.
  void open_wake(const RawParams& p) {
    const unsigned idx = if_nametoindex(p.iface.c_str());
    if (idx == 0) return;
    const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_IP));
    if (fd < 0) return;
    sock_filter code[] = {
        {0x28, 0, 0, wire::off::eth_type},   // ldh eth.type
        {0x15, 0, 7, wire::kEtherTypeIpv4},  // jne IPv4 -> drop
        {0x30, 0, 0, wire::off::ip},         // ldb version/IHL
        {0x15, 0, 5, wire::kIpv4VerIhl},     // jne 0x45 (no options) -> drop
        {0x30, 0, 0, wire::off::ip_proto},   // ldb protocol
        {0x15, 0, 3, wire::kIpProtoUdp},     // jne UDP -> drop
        {0x20, 0, 0, wire::off::ip_dst},     // ld ipv4.dst
        {0x15, 0, 1, p.group_ip},            // jne group -> drop
        {0x06, 0, 0, 1},                     // ret 1: keep one byte (a wake-up, not a copy)
        {0x06, 0, 0, 0},                     // drop: ret 0
    };
    // The port: checked by poll_once; the group alone is selective enough for a wake-up.
    sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]), code};
    sockaddr_ll a{};
    a.sll_family = AF_PACKET;
    a.sll_protocol = htons(ETH_P_IP);
    a.sll_ifindex = static_cast<int>(idx);
    int buf = 256 << 10;
    if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) != 0 ||
        bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(fd);
      return;
    }
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    wake_fd = fd;
  }
  void drain_wake() {
    char b[64];
    while (::recv(wake_fd, b, sizeof b, MSG_DONTWAIT | MSG_TRUNC) >= 0) {
    }
  }

  // Polls RX once; results go to `ready` (their mbufs kept), an ARP answer from `arp_target` to
  // *arp_mac; everything else is freed at once.
  int poll_once(const RawParams& p, wire::Ipv4 arp_target = 0, wire::Mac* arp_mac = nullptr, bool* arp_ok = nullptr) {
    const uint16_t n = rte_eth_rx_burst(port, 0, rx, kBurst);
    for (uint16_t i = 0; i < n; ++i) {
      rte_mbuf* m = rx[i];
      const uint32_t len = rte_pktmbuf_pkt_len(m);
      if (seg.size() < len) seg.resize(len);
      const auto* d = static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, len, seg.data()));
      if (d && is_result_frame(d, len, p.group_ip, p.port)) {
        if (ready_head == ready.size()) {
          ready.clear();
          ready_head = 0;
        }
        ready.push_back(m);  // capacity reserved at start: no allocation while it suffices
        continue;
      }
      if (d && arp_mac && arp_answer(d, len, arp_target, *arp_mac)) *arp_ok = true;
      rte_pktmbuf_free(m);
    }
    return n;
  }
  // The next ready result as a view (its mbuf held until the next call), or false.
  bool take(const uint8_t*& frame, size_t& len) {
    if (held) {
      rte_pktmbuf_free(held);
      held = nullptr;
    }
    if (ready_head == ready.size()) return false;
    held = ready[ready_head++];
    len = rte_pktmbuf_pkt_len(held);
    if (held->nb_segs == 1) {
      frame = rte_pktmbuf_mtod(held, const uint8_t*);
    } else {
      if (seg.size() < len) seg.resize(len);
      frame = static_cast<const uint8_t*>(rte_pktmbuf_read(held, 0, static_cast<uint32_t>(len), seg.data()));
    }
    return true;
  }
  void free_ready() {
    if (held) rte_pktmbuf_free(held);
    held = nullptr;
    for (size_t i = ready_head; i < ready.size(); ++i) rte_pktmbuf_free(ready[i]);
    ready.clear();
    ready_head = 0;
  }
  void send(const uint8_t* f, size_t len, const std::string& iface) {
    rte_mbuf* m = nullptr;
    for (int tries = 0; !(m = rte_pktmbuf_alloc(pool)); ++tries) {
      if (tries > 10000) throw TransportError("dpdk: mempool exhausted");
      usleep(10);
    }
    char* d = rte_pktmbuf_append(m, static_cast<uint16_t>(len));
    if (!d) {
      rte_pktmbuf_free(m);
      throw TransportError("dpdk: frame of " + std::to_string(len) + " bytes does not fit an mbuf");
    }
    std::memcpy(d, f, len);
    const auto until = Clock::now() + std::chrono::seconds(1);
    while (rte_eth_tx_burst(port, 0, &m, 1) == 0) {
      if (Clock::now() > until) {
        rte_pktmbuf_free(m);
        throw TransportError("dpdk: TX queue of " + iface + " stuck for 1 s");
      }
      usleep(10);
    }
  }
};

// The EAL's arguments: --eal's words, or the default for the interface with the PMD (docs/host.md
// "Backends"): net_af_xdp where the kernel gives this process AF_XDP sockets and DPDK has the
// driver, else net_af_packet, named in *pmd with the reason; PANAMA_DPDK_PMD=af_xdp|af_packet
// chooses. net_af_xdp loads the project's program from *prog (written here; *steer set), and an
// interface with another XDP program is refused before the PMD starts: the PMD would not replace
// it, but its close detaches whatever program is on the interface.
static std::vector<std::string> eal_args(const RawParams& p, std::string& pmd, ProgFile* prog, bool* steer) {
  std::vector<std::string> args{"panama-host"};
  if (!p.eal.empty()) {
    std::istringstream ss(p.eal);
    for (std::string a; ss >> a;) args.push_back(a);
    return args;
  }
  const char* want = std::getenv("PANAMA_DPDK_PMD");
  const std::string w = want ? want : "auto";
  if (w != "auto" && w != "af_xdp" && w != "af_packet")
    throw TransportError("dpdk: PANAMA_DPDK_PMD must be auto, af_xdp or af_packet (not '" + w + "')");
  std::string why;
  bool xdp = w == "af_xdp" || (w == "auto" && af_xdp_usable(&why));
  if (w == "af_packet") why = "PANAMA_DPDK_PMD=af_packet";
  // net_af_xdp reads queue 0 (queue_count=1) and its program redirects by the receiving queue: a
  // result that RSS puts on another queue would reach the kernel and the call time out. Several
  // queues: af_packet (which reads them all), or with PANAMA_DPDK_PMD=af_xdp a refusal naming the
  // ways out; PANAMA_XDP_STEERED=1 declares the aggregation port steered to queue 0.
  const int queues = rx_queues(p.iface);
  const char* steered = std::getenv("PANAMA_XDP_STEERED");
  if (xdp && queues > 1 && !(steered && std::string(steered) == "1")) {
    why = p.iface + " has " + std::to_string(queues) + " receive queues, net_af_xdp reads queue 0";
    if (w == "af_xdp")
      throw TransportError("dpdk: " + why + ": set one (ethtool -L " + p.iface + " combined 1), or steer UDP port " +
                           std::to_string(p.port) + " to queue 0 (ethtool -N " + p.iface + " flow-type udp4 dst-port " +
                           std::to_string(p.port) +
                           " action 0) and set PANAMA_XDP_STEERED=1, or use PANAMA_DPDK_PMD=af_packet");
    xdp = false;
  }
  std::string path;
#if PANAMA_DPDK_XDP_PROG
  if (xdp) {
    libbpf_set_print(libbpf_quiet);  // the PMD's libbpf too: its own log says what fails
    const Attached a = attached_program(if_nametoindex(p.iface.c_str()));
    if (a.id != 0)
      throw TransportError("dpdk: " + p.iface + " already has the XDP program " + a.str() +
                           " attached; it is not replaced: detach it (ip link set dev " + p.iface +
                           " xdp off) if it is not needed, or use PANAMA_DPDK_PMD=af_packet");
    prog->create();
    path = prog->path;
    *steer = true;
  }
#else
  (void)prog;
  (void)steer;
#endif
  pmd = xdp ? "DPDK net_af_xdp PMD" +
                  std::string(path.empty() ? " (its default XDP program)" : ", XDP program panama_steer")
            : "DPDK net_af_packet PMD (fallback: " + why + ")";
  for (auto& a : DpdkTransport::default_eal_args(p.iface, xdp, path)) args.push_back(a);
  return args;
}

namespace {

// The next hop towards the aggregator and its MAC (into mac): --agg-mac, else the kernel's
// neighbour entry, else (with the project's XDP program, which leaves ARP replies to the kernel)
// resolved by the kernel. have_mac false: to be resolved through the port once it runs.
struct NextHop {
  wire::Ipv4 ip = 0;
  bool have_mac = false, had_neighbour = false, permanent = false;
};

NextHop next_hop_mac(const RawParams& p, bool steer, wire::Mac& mac) {
  NextHop h;
  h.ip = next_hop(p.iface, p.agg_ip);
  if (!p.agg_mac.empty()) {
    mac = wire::parse_mac(p.agg_mac);
    h.have_mac = true;
  } else if (kernel_neighbour(p.iface, h.ip, mac, &h.permanent)) {
    h.have_mac = h.had_neighbour = true;
  }
#if PANAMA_DPDK_XDP_PROG
  if (!h.have_mac && steer) {
    if (!kernel_resolve(p.iface, h.ip, mac))
      throw TransportError("dpdk: cannot resolve the MAC of " + wire::ipv4_to_string(h.ip) + " on " + p.iface +
                           " (no neighbour entry, no ARP reply): give --agg-mac");
    h.have_mac = h.had_neighbour = true;
  }
#else
  (void)steer;
#endif
  return h;
}

}  // namespace

DpdkTransport::DpdkTransport(const RawParams& p) : RawTransport(p) {
  if ((p.group_ip >> 28) != 0xE)
    throw TransportError("dpdk: group address " + wire::ipv4_to_string(p.group_ip) + " is not multicast");
  if (p.agg_ip == 0) throw TransportError("dpdk: no aggregator address");
  if (p.iface.empty()) throw TransportError("dpdk: no interface");
  wire::Ipv4 mask = 0;
  if (!iface_ipv4(p.iface, local_ip_, mask))
    throw TransportError("dpdk: interface '" + p.iface + "' has no IPv4 address (the source of contributions)");
  if (g_eal_done) throw TransportError("dpdk: the EAL is initialised once per process (one transport per process)");
  ProgFile prog;  // the project's XDP program object for net_af_xdp, removed once loaded
  bool steer = false;
  std::vector<std::string> args = eal_args(p, pmd_, &prog, &steer);
  // The next hop's MAC from the kernel, before the EAL touches the interface (see below).
  const NextHop nh = next_hop_mac(p, steer, agg_mac_);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  g_eal_done = true;
  if (rte_eal_init(static_cast<int>(args.size()), argv.data()) < 0) {
    std::string cmd;
    for (size_t i = 1; i < args.size(); ++i) cmd += " " + args[i];
    throw TransportError(
        "dpdk: rte_eal_init failed (" + std::string(rte_strerror(rte_errno)) + ") with EAL arguments:" + cmd +
        (cmd.find("net_af_xdp") != std::string::npos ? " (PANAMA_DPDK_PMD=af_packet avoids AF_XDP)" : ""));
  }
  d_.reset(new Impl);
  try {
    if (rte_eth_dev_count_avail() == 0)
      throw TransportError(pmd_.find("af_xdp") != std::string::npos
                               ? "dpdk: the net_af_xdp PMD did not start on " + p.iface +
                                     " (AF_XDP refused; PANAMA_DPDK_PMD=af_packet avoids it)"
                               : "dpdk: no ethdev port after EAL init (check --vdev / --eal)");
    uint16_t port = 0;
    RTE_ETH_FOREACH_DEV(port) { break; }
    d_->port = port;
    const int socket = rte_eth_dev_socket_id(port) < 0 ? 0 : rte_eth_dev_socket_id(port);
    d_->pool = rte_pktmbuf_pool_create(("panama_" + std::to_string(getpid())).c_str(), kMbufs, 128, 0,
                                       RTE_MBUF_DEFAULT_BUF_SIZE, socket);
    if (!d_->pool) fail("mempool of " + std::to_string(kMbufs) + " mbufs (raise -m)", rte_errno);
    d_->ready.reserve(kMbufs);
    rte_eth_conf conf{};
    int rc = rte_eth_dev_configure(port, 1, 1, &conf);
    if (rc < 0) fail("configuring port " + std::to_string(port), rc);
    uint16_t nrx = kRing, ntx = kRing;
    (void)rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
    const std::string pmd_hint = pmd_.find("af_xdp") != std::string::npos
                                     ? " (the net_af_xdp PMD did not start on " + p.iface +
                                           ": AF_XDP refused; PANAMA_DPDK_PMD=af_packet avoids it)"
                                     : "";
    if ((rc = rte_eth_rx_queue_setup(port, 0, nrx, static_cast<unsigned>(socket), nullptr, d_->pool)) < 0)
      fail("RX queue" + pmd_hint, rc);
#if PANAMA_DPDK_XDP_PROG
    if (steer) {  // the PMD has loaded and attached the program (xsk_configure)
      prog.drop();
      d_->link_fd = adopt_program(if_nametoindex(p.iface.c_str()), p);
    }
#endif
    if ((rc = rte_eth_tx_queue_setup(port, 0, ntx, static_cast<unsigned>(socket), nullptr)) < 0) fail("TX queue", rc);
    if ((rc = rte_eth_dev_start(port)) < 0) fail("starting port " + std::to_string(port) + pmd_hint, rc);
    d_->started = true;
    // Results are addressed to the group MAC: all multicast (AF_PACKET on a veth sees every
    // frame anyway; a NIC's filter would not pass the group). Switched off again at the end.
    (void)rte_eth_allmulticast_enable(port);
    rte_ether_addr a{};
    if ((rc = rte_eth_macaddr_get(port, &a)) < 0) fail("MAC address of port " + std::to_string(port), rc);
    std::memcpy(local_mac_.data(), a.addr_bytes, 6);
    const char* wake = std::getenv("PANAMA_DPDK_WAKE");
    // The wake-up socket sees frames only where the kernel does (af_packet, not af_xdp).
    if (p.eal.empty() && pmd_.find("af_packet") != std::string::npos && !(wake && std::string(wake) == "0"))
      d_->open_wake(p);
    // The aggregator's MAC when the kernel's table did not have it: ARP through the port itself
    // (1 s, a request every 200 ms).
    if (!nh.have_mac) {
      const wire::Bytes req = arp_request(local_mac_, local_ip_, nh.ip);
      bool ok = false;
      const auto until = Clock::now() + std::chrono::seconds(1);
      auto next_req = Clock::now();
      while (!ok && Clock::now() < until) {
        if (Clock::now() >= next_req) {
          d_->send(req.data(), req.size(), p.iface);
          next_req += std::chrono::milliseconds(200);
        }
        if (d_->poll_once(p, nh.ip, &agg_mac_, &ok) == 0) usleep(1000);
      }
      d_->free_ready();
      if (!ok)
        throw TransportError("dpdk: cannot resolve the MAC of " + wire::ipv4_to_string(nh.ip) + " on " + p.iface +
                             " (no neighbour entry, no ARP reply): give --agg-mac");
    } else if (nh.had_neighbour) {
      // The af_packet PMD sets the interface's MAC again when the port starts (ethdev's MAC
      // restore): the kernel then flushes the interface's neighbour cache, static entries
      // included. Put back the entry this worker used, so that the kernel (and the next worker
      // in this namespace) still has it.
      wire::Mac now{};
      if (!kernel_neighbour(p.iface, nh.ip, now)) set_kernel_neighbour(p.iface, nh.ip, agg_mac_, nh.permanent);
    }

  } catch (...) {
    d_->free_ready();
    d_->close_link();
#if PANAMA_DPDK_XDP_PROG
    // Another tool's program attached meanwhile (the PMD's attach then failed) stays: the PMD's
    // close, at rte_eth_dev_close or rte_eal_cleanup, would detach it. The process ends anyway.
    const Attached a = steer ? attached_program(if_nametoindex(p.iface.c_str())) : Attached{};
    if (a.id != 0 && a.name != kProgName)
      throw TransportError("dpdk: " + p.iface + " got the XDP program " + a.str() +
                           " attached meanwhile; it is not replaced");
#endif
    if (d_->started) {
      (void)rte_eth_dev_stop(d_->port);
      (void)rte_eth_dev_close(d_->port);
    }
    eal_cleanup();
    throw;
  }
}

DpdkTransport::~DpdkTransport() {
  if (!d_) return;
  try {
    flush();
  } catch (const TransportError&) {
    // Nothing to report to at destruction; the peers see the frames as lost.
  }
  if (d_->cur) rte_pktmbuf_free(d_->cur);
  d_->free_ready();
  if (d_->started) {
    (void)rte_eth_allmulticast_disable(d_->port);
    (void)rte_eth_dev_stop(d_->port);
  }
  d_->close_link();
  if (d_->started) (void)rte_eth_dev_close(d_->port);
  eal_cleanup();
}

void DpdkTransport::send(const wire::Bytes& f) {
  if (f.size() < wire::kHeaderBytes) throw TransportError("dpdk: frame shorter than the headers");
  std::memcpy(tx_begin(f.size()), f.data(), f.size());
  tx_end(f.size());
}

uint8_t* DpdkTransport::tx_begin(size_t len) {
  Impl& d = *d_;
  if (!d.cur) {
    for (int tries = 0; !(d.cur = rte_pktmbuf_alloc(d.pool)); ++tries) {
      if (tries > 10000) throw TransportError("dpdk: mempool exhausted");
      if (d.ntx) d.flush_tx(p_.iface);
      usleep(10);
    }
  }
  if (len > rte_pktmbuf_tailroom(d.cur))
    throw TransportError("dpdk: frame of " + std::to_string(len) + " bytes does not fit an mbuf");
  return rte_pktmbuf_mtod(d.cur, uint8_t*);
}

void DpdkTransport::tx_end(size_t len) {
  Impl& d = *d_;
  rte_pktmbuf_append(d.cur, static_cast<uint16_t>(len));
  d.tx[d.ntx++] = d.cur;
  d.cur = nullptr;
  if (d.ntx == kBurst) d.flush_tx(p_.iface);
}

void DpdkTransport::flush() {
  if (d_ && d_->ntx) d_->flush_tx(p_.iface);
}

bool DpdkTransport::recv_view(const uint8_t*& frame, size_t& len, Clock::time_point deadline) {
  // Poll: spin briefly, then wait: in poll() on the wake-up socket (af_packet PMD, the default;
  // at most 1 ms at a time, so a wake-up that overtakes the PMD's ring costs at most that), else
  // sleep in growing steps (PANAMA_DPDK_MAX_SLEEP_US, default 100 us), never past the deadline,
  // so that an idle worker leaves the CPU to its peers and the switch on a shared machine.
  // PANAMA_DPDK_MAX_SLEEP_US=0 busy-polls, for a dedicated core (docs/host.md).
  static const long max_sleep_us = [] {
    const char* e = std::getenv("PANAMA_DPDK_MAX_SLEEP_US");
    return e ? std::max(0L, std::atol(e)) : 100L;
  }();
  unsigned idle = 0;
  long sleep_us = 1;
  flush();
  for (;;) {
    if (d_->take(frame, len)) return true;
    if (d_->wake_fd >= 0 && idle == 0) d_->drain_wake();  // before the RX poll: no lost wake-up
    if (d_->poll_once(p_) > 0) {
      idle = 0;
      sleep_us = 1;
      continue;
    }
    const auto now = Clock::now();
    if (now >= deadline) return false;
    ++idle;
    if (idle < 64 || max_sleep_us == 0) continue;
    if (d_->wake_fd >= 0) {
      const auto us = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now).count();
      pollfd q{d_->wake_fd, POLLIN, 0};
      (void)poll(&q, 1, static_cast<int>(std::min<long long>((us + 999) / 1000, 1)));
      idle = 0;  // drain, then poll the ring again
      continue;
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(deadline - now, std::chrono::microseconds(sleep_us)));
    sleep_us = std::min(sleep_us * 2, max_sleep_us);
  }
}

bool DpdkTransport::recv(wire::Bytes& frame, Clock::time_point deadline) {
  const uint8_t* f = nullptr;
  size_t len = 0;
  if (!recv_view(f, len, deadline)) return false;
  frame.assign(f, f + len);
  return true;
}

}  // namespace panama::host
