// The DCTCP-style UDP flow of the fairness experiment (flow.h).
#include "flow.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <vector>

#include "sock.h"

namespace panama::host {
namespace {

constexpr uint32_t kDataMagic = 0x50464c57;  // "PFLW"
constexpr uint32_t kAckMagic = 0x50464c41;   // "PFLA"
constexpr size_t kAckBytes = 13;             // magic, seq, ce

[[noreturn]] void fail(const char* what) {
  throw std::runtime_error(std::string("flow: ") + what + ": " + std::strerror(errno));
}

sockaddr_in addr_of(const std::string& ip, uint16_t port, const char* what) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (ip.empty()) {
    a.sin_addr.s_addr = htonl(INADDR_ANY);
  } else if (inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1) {
    throw std::runtime_error(std::string("flow: ") + what + ": '" + ip + "' is not an IPv4 address");
  }
  return a;
}

void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}
void put64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (56 - 8 * i));
}
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = v << 8 | p[i];
  return v;
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | p[i];
  return v;
}

Fd udp_socket() {
  Fd fd(socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0));
  if (fd.get() < 0) fail("socket");
  return fd;
}

double secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

FlowStats run_flow_sender(const FlowParams& p, const std::atomic<bool>& stop) {
  if (p.payload < 32 || p.payload > 65000) throw std::runtime_error("flow: --payload must be 32..65000 bytes");
  if (p.seconds <= 0) throw std::runtime_error("flow: --seconds must be > 0");
  Fd fd = udp_socket();
  if (!p.bind_ip.empty()) {
    const sockaddr_in b = addr_of(p.bind_ip, 0, "--bind");
    if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&b), sizeof b) != 0) fail("bind");
  }
  const sockaddr_in to = addr_of(p.peer_ip, p.port, "--to");
  if (connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0) fail("connect");
  const int tos = 0x02;  // ECT(0)
  if (setsockopt(fd.get(), IPPROTO_IP, IP_TOS, &tos, sizeof tos) != 0) fail("IP_TOS");
  std::ofstream prog;
  if (!p.progress.empty()) {
    prog.open(p.progress);
    if (!prog) throw std::runtime_error("flow: cannot write " + p.progress);
    prog << "time_s,interval_s,goodput_mbps,cwnd,alpha,lost\n";
  }

  Dctcp cc(p.window);
  FlowStats st;
  std::map<uint64_t, Clock::time_point> inflight;  // seq -> send time
  uint64_t next_seq = 0, highest_acked = 0, recover = 0;
  bool any_acked = false;
  std::vector<uint8_t> pkt(static_cast<size_t>(p.payload), 0);
  uint8_t ack[64];
  const auto start = Clock::now(),
             end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p.seconds));
  const auto rto = std::chrono::milliseconds(p.rto_ms);
  auto last_prog = start;
  uint64_t bytes_at_prog = 0;
  st.max_cwnd = cc.cwnd();
  while (!stop.load(std::memory_order_relaxed)) {
    auto now = Clock::now();
    if (now >= end) break;
    // Fill the window.
    while (static_cast<int>(inflight.size()) < cc.allowed()) {
      put32(pkt.data(), kDataMagic);
      put64(pkt.data() + 4, next_seq);
      if (send(fd.get(), pkt.data(), pkt.size(), 0) < 0) {
        if (errno == EAGAIN || errno == ENOBUFS || errno == ECONNREFUSED) break;
        fail("send");
      }
      inflight.emplace(next_seq++, now);
      ++st.sent;
    }
    pollfd pf{fd.get(), POLLIN, 0};
    poll(&pf, 1, 5);
    now = Clock::now();
    // Acknowledgements.
    for (;;) {
      const ssize_t n = recv(fd.get(), ack, sizeof ack, 0);
      if (n < 0) {
        if (errno == EAGAIN || errno == ECONNREFUSED) break;
        fail("recv");
      }
      if (static_cast<size_t>(n) < kAckBytes || get32(ack) != kAckMagic) continue;
      const uint64_t seq = get64(ack + 4);
      const bool ce = ack[12] != 0;
      if (inflight.erase(seq) == 0) continue;  // already declared lost
      ++st.acked;
      st.bytes += static_cast<uint64_t>(p.payload);
      if (ce) ++st.ce;
      cc.on_result(ce);
      if (!any_acked || seq > highest_acked) highest_acked = seq;
      any_acked = true;
    }
    // Losses: three later datagrams acknowledged, or older than the timeout.
    for (auto it = inflight.begin(); it != inflight.end();) {
      const bool by_order = any_acked && it->first + 3 <= highest_acked;
      if (!by_order && now - it->second < rto) break;  // ordered by seq, hence by send time
      if (it->first >= recover) {
        cc.on_loss();
        recover = next_seq;
        ++st.losses_reacted;
      }
      ++st.lost;
      it = inflight.erase(it);
    }
    st.max_cwnd = std::max(st.max_cwnd, cc.cwnd());
    if (prog.is_open() && now - last_prog >= std::chrono::duration<double>(p.progress_interval)) {
      const double dt = secs(now - last_prog);
      prog << secs(now - start) << ',' << dt << ',' << (st.bytes - bytes_at_prog) * 8 / dt / 1e6 << ',' << cc.cwnd()
           << ',' << cc.alpha() << ',' << st.lost << '\n';
      prog.flush();
      last_prog = now;
      bytes_at_prog = st.bytes;
    }
  }
  st.seconds = secs(Clock::now() - start);
  st.goodput_mbps = st.seconds > 0 ? st.bytes * 8 / st.seconds / 1e6 : 0;
  st.final_cwnd = cc.cwnd();
  st.final_alpha = cc.alpha();
  return st;
}

FlowStats run_flow_receiver(const FlowParams& p, const std::atomic<bool>& stop) {
  if (p.seconds <= 0) throw std::runtime_error("flow: --seconds must be > 0");
  Fd fd = udp_socket();
  const sockaddr_in b = addr_of(p.bind_ip, p.port, "--bind");
  if (bind(fd.get(), reinterpret_cast<const sockaddr*>(&b), sizeof b) != 0) fail("bind");
  const int one = 1;
  if (setsockopt(fd.get(), IPPROTO_IP, IP_RECVTOS, &one, sizeof one) != 0) fail("IP_RECVTOS");
  FlowStats st;
  std::vector<uint8_t> buf(65536);
  uint8_t ack[kAckBytes];
  const auto start = Clock::now(),
             end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(p.seconds));
  while (!stop.load(std::memory_order_relaxed) && Clock::now() < end) {
    pollfd pf{fd.get(), POLLIN, 0};
    poll(&pf, 1, 20);
    for (;;) {
      sockaddr_in from{};
      iovec iov{buf.data(), buf.size()};
      alignas(cmsghdr) char ctl[64];
      msghdr mh = recv_header(from, iov, ctl, sizeof ctl);
      const ssize_t n = recvmsg(fd.get(), &mh, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN) break;
        fail("recvmsg");
      }
      if (n < 12 || get32(buf.data()) != kDataMagic) continue;
      int tos = 0;
      for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) tos = *reinterpret_cast<uint8_t*>(CMSG_DATA(c));
      ++st.acked;
      st.bytes += static_cast<uint64_t>(n);
      bool ce = (tos & 3) == 3;
      if (p.mark_every > 0 && st.acked % static_cast<uint64_t>(p.mark_every) == 0) ce = true;
      if (ce) ++st.ce;
      put32(ack, kAckMagic);
      std::memcpy(ack + 4, buf.data() + 4, 8);
      ack[12] = ce ? 1 : 0;
      if (sendto(fd.get(), ack, sizeof ack, 0, reinterpret_cast<const sockaddr*>(&from), sizeof from) < 0 &&
          errno != EAGAIN && errno != ENOBUFS)
        fail("sendto");
    }
  }
  st.seconds = secs(Clock::now() - start);
  st.goodput_mbps = st.seconds > 0 ? st.bytes * 8 / st.seconds / 1e6 : 0;
  return st;
}

}  // namespace panama::host
