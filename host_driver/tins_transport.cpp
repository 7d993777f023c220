#include "tins_transport.h"

#include <pcap/pcap.h>
#include <poll.h>

#include <deque>
#include <unistd.h>

#include <tins/tins.h>

namespace panama::host {

struct TinsTransport::Impl {
  Tins::NetworkInterface iface;
  Tins::PacketSender sender;
  std::unique_ptr<Tins::Sniffer> sniffer;
  int sel_fd = -1;
  std::deque<wire::Bytes> pending;  // captured results not yet handed out
  explicit Impl(const std::string& name) : iface(name), sender(iface, 1, 0) {}
};

TinsTransport::TinsTransport(const RawParams& p) : RawTransport(p) {
  if (p.iface.empty()) throw TransportError("tins: no interface");
  if ((p.group_ip >> 28) != 0xE)
    throw TransportError("tins: group address " + wire::ipv4_to_string(p.group_ip) + " is not multicast");
  if (p.agg_ip == 0) throw TransportError("tins: no aggregator address");
  local_mac_ = iface_mac(p.iface);
  wire::Ipv4 mask = 0;
  if (!iface_ipv4(p.iface, local_ip_, mask))
    throw TransportError("tins: interface '" + p.iface + "' has no IPv4 address");
  try {
    d_.reset(new Impl(p.iface));
  } catch (const std::exception& e) {
    throw TransportError("tins: interface '" + p.iface + "': " + e.what());
  }
  // The aggregator's MAC: given, else what the kernel would use (its neighbour entry for the next
  // hop), else an ARP exchange through libtins.
  if (!p.agg_mac.empty()) {
    agg_mac_ = wire::parse_mac(p.agg_mac);
  } else {
    const wire::Ipv4 hop = next_hop(p.iface, p.agg_ip);
    if (!kernel_neighbour(p.iface, hop, agg_mac_)) {
      try {
        const auto hw = Tins::Utils::resolve_hwaddr(d_->iface, Tins::IPv4Address(htonl(hop)), d_->sender);
        std::copy(hw.begin(), hw.end(), agg_mac_.begin());
      } catch (const std::exception&) {
        throw TransportError("tins: cannot resolve the MAC of " + wire::ipv4_to_string(hop) + " on " + p.iface +
                             " (no neighbour entry, no ARP reply): give --agg-mac");
      }
    }
  }
  try {
    Tins::SnifferConfiguration cfg;
    cfg.set_snap_len(65535);
    cfg.set_promisc_mode(true);  // group MACs pass whatever the NIC's multicast filter says
    cfg.set_immediate_mode(true);
    cfg.set_buffer_size(8 << 20);
    cfg.set_filter("udp and dst port " + std::to_string(p.port) + " and dst host " + wire::ipv4_to_string(p.group_ip));
    d_->sniffer.reset(new Tins::Sniffer(p.iface, cfg));
  } catch (const std::exception& e) {
    throw TransportError("tins: sniffing on " + p.iface + ": " + e.what() + " (needs CAP_NET_RAW)");
  }
  pcap_t* h = d_->sniffer->get_pcap_handle();
  char err[PCAP_ERRBUF_SIZE];
  if (pcap_setnonblock(h, 1, err) != 0) throw TransportError(std::string("tins: pcap_setnonblock: ") + err);
  d_->sel_fd = pcap_get_selectable_fd(h);
  if (d_->sel_fd < 0) throw TransportError("tins: no selectable descriptor for the sniffer");
}

TinsTransport::~TinsTransport() = default;

void TinsTransport::send(const wire::Bytes& f) {
  if (f.size() < wire::kHeaderBytes) throw TransportError("tins: frame shorter than the headers");
  // libtins parses the frame into EthernetII / IP / UDP / RawPDU and serialises it again on
  // sending: the same bytes except the UDP checksum, which libtins fills in (the accelerator
  // ignores it).
  Tins::EthernetII eth(f.data(), static_cast<uint32_t>(f.size()));
  for (int tries = 0;; ++tries) {
    try {
      d_->sender.send(eth, d_->iface);
      return;
    } catch (const Tins::socket_write_error& e) {
      if (tries >= 1000) throw TransportError(std::string("tins: send on ") + p_.iface + ": " + e.what());
      usleep(100);  // ENOBUFS: the interface's queue is full
    }
  }
}

bool TinsTransport::recv(wire::Bytes& frame, Clock::time_point deadline) {
  // Sniffer::next_packet() runs pcap_loop, which never returns on an idle non-blocking handle:
  // the sniffer's pcap handle is read with pcap_dispatch instead (raw bytes, as captured).
  struct Ctx {
    const RawParams* p;
    std::deque<wire::Bytes>* q;
  } ctx{&p_, &d_->pending};
  auto on_frame = [](u_char* user, const pcap_pkthdr* h, const u_char* bytes) {
    auto* c = reinterpret_cast<Ctx*>(user);
    if (h->caplen != h->len) return;  // truncated: not a whole frame
    if (!is_result_frame(bytes, h->caplen, c->p->group_ip, c->p->port)) return;
    c->q->emplace_back(bytes, bytes + h->caplen);
  };
  for (;;) {
    if (!d_->pending.empty()) {
      frame = std::move(d_->pending.front());
      d_->pending.pop_front();
      return true;
    }
    const int n = pcap_dispatch(d_->sniffer->get_pcap_handle(), 64, on_frame, reinterpret_cast<u_char*>(&ctx));
    if (n < 0)
      throw TransportError(std::string("tins: capture on ") + p_.iface + ": " +
                           pcap_geterr(d_->sniffer->get_pcap_handle()));
    if (n > 0) continue;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    pollfd q{d_->sel_fd, POLLIN, 0};
    (void)poll(&q, 1, static_cast<int>(std::min<long long>(ms, 100)));
  }
}

}  // namespace panama::host
