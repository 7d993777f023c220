// One link, two users: the accelerator's all-reduce (frames on the aggregation port) and the
// fallback ring (frames on the fallback port) over a single Transport, for a backend that has one
// port per process (the in-process links of the tests; dpdk). Each view receives the frames of
// its own UDP port; a frame for the other view met while waiting is queued for it (at most
// kQueueCap, then dropped: both protocols repair loss). Both views are used from one thread.
#pragma once

#include <deque>

#include "transport.h"

namespace panama::host {

class LinkSplit {
 public:
  static constexpr size_t kQueueCap = 1 << 16;
  LinkSplit(Transport& t, uint16_t agg_port, uint16_t fallback_port)
      : accel_(*this, 0, agg_port), fallback_(*this, 1, fallback_port), t_(t) {}
  Transport& accel() { return accel_; }
  Transport& fallback() { return fallback_; }

 private:
  class View : public Transport {
   public:
    View(LinkSplit& s, int k, uint16_t port) : s_(s), k_(k), port_(port) {}
    void send(const wire::Bytes& f) override { s_.t_.send(f); }
    void flush() override { s_.t_.flush(); }
    std::string datapath() const override { return s_.t_.datapath(); }
    bool recv(wire::Bytes& f, Clock::time_point deadline) override { return s_.recv(k_, f, deadline); }
    uint16_t port() const { return port_; }

   private:
    LinkSplit& s_;
    int k_;
    uint16_t port_;
  };
  static uint16_t dport(const wire::Bytes& f) {
    return f.size() >= wire::off::udp_dport + 2 ? wire::get16(f.data() + wire::off::udp_dport) : 0;
  }
  bool recv(int k, wire::Bytes& f, Clock::time_point deadline) {
    auto& mine = q_[k];
    if (!mine.empty()) {
      f = std::move(mine.front());
      mine.pop_front();
      return true;
    }
    View& me = k == 0 ? accel_ : fallback_;
    View& other = k == 0 ? fallback_ : accel_;
    while (t_.recv(f, deadline)) {
      const uint16_t p = dport(f);
      if (p == me.port()) return true;
      if (p == other.port() && q_[1 - k].size() < kQueueCap) q_[1 - k].push_back(std::move(f));
    }
    return false;
  }
  View accel_, fallback_;
  Transport& t_;
  std::deque<wire::Bytes> q_[2];
};

}  // namespace panama::host
