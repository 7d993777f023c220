// In-process links between host transports and the switch stand-in (tests, docs/host.md):
// port p of the LoopbackFabric is one link; LoopbackTransport is the host end of it.
// Optional loss on the switch -> host direction of chosen ports (fault tests).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "switch.h"
#include "transport.h"

namespace panama::host {

class LoopbackFabric : public Fabric {
 public:
  explicit LoopbackFabric(int ports)
      : links_(static_cast<size_t>(ports)),
        loss_(static_cast<size_t>(ports), 0.0),
        up_loss_(static_cast<size_t>(ports), 0.0) {}
  int ports() const override { return static_cast<int>(links_.size()); }
  bool try_recv(int port, wire::Bytes& f) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      auto& q = links_[static_cast<size_t>(port)].up;
      if (q.empty()) return false;
      f = std::move(q.front());
      q.pop_front();
    }
    // A slow stand-in (stress runs): the RTL engine takes about this long per frame.
    if (switch_delay_.count() > 0) std::this_thread::sleep_for(switch_delay_);
    return true;
  }
  void send(int port, const wire::Bytes& f) override { pass(port, f, &Link::down, loss_, host_cv_); }
  void wait(Clock::time_point until) override {
    std::unique_lock<std::mutex> l(mu_);
    switch_cv_.wait_until(l, until, [&] {
      for (auto& k : links_)
        if (!k.up.empty()) return true;
      return false;
    });
  }
  // Host side.
  void host_send(int port, const wire::Bytes& f) { pass(port, f, &Link::up, up_loss_, switch_cv_); }
  bool host_recv(int port, wire::Bytes& f, Clock::time_point deadline) {
    std::unique_lock<std::mutex> l(mu_);
    auto& q = links_[static_cast<size_t>(port)].down;
    if (!host_cv_.wait_until(l, deadline, [&] { return !q.empty(); })) return false;
    f = std::move(q.front());
    q.pop_front();
    return true;
  }
  // Drops each frame sent to the host on `port` with probability p (seeded).
  void set_loss(int port, double p, uint64_t seed) {
    std::lock_guard<std::mutex> l(mu_);
    loss_[static_cast<size_t>(port)] = p;
    rng_.seed(seed);
  }
  // Drops each frame the host on `port` sends with probability p.
  void set_up_loss(int port, double p) {
    std::lock_guard<std::mutex> l(mu_);
    up_loss_[static_cast<size_t>(port)] = p;
  }
  // Drops every frame to the host on `port` (-1: on every port) for which `f` returns true
  // (deterministic faults).
  void set_down_filter(int port, std::function<bool(const wire::Bytes&)> f) {
    std::lock_guard<std::mutex> l(mu_);
    filter_port_ = port;
    filter_ = std::move(f);
  }
  // The switch side spends this long on every frame it takes (emulates a slow engine).
  void set_switch_delay(std::chrono::microseconds d) { switch_delay_ = d; }
  uint64_t dropped() {
    std::lock_guard<std::mutex> l(mu_);
    return dropped_;
  }

 private:
  struct Link {
    std::deque<wire::Bytes> up, down;
  };
  using Queue = std::deque<wire::Bytes> Link::*;
  // Queues f in one direction of link `port` unless that direction's loss drops it, and wakes
  // the receiving side.
  void pass(int port, const wire::Bytes& f, Queue dir, const std::vector<double>& loss, std::condition_variable& cv) {
    {
      std::lock_guard<std::mutex> l(mu_);
      const double p = loss[static_cast<size_t>(port)];
      const bool filtered = dir == &Link::down && (filter_port_ < 0 || port == filter_port_) && filter_ && filter_(f);
      if (filtered || (p > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p)) {
        ++dropped_;
        return;
      }
      (links_[static_cast<size_t>(port)].*dir).push_back(f);
    }
    cv.notify_all();
  }
  std::mutex mu_;
  std::condition_variable switch_cv_, host_cv_;
  std::vector<Link> links_;
  std::vector<double> loss_, up_loss_;
  std::mt19937_64 rng_{1};
  uint64_t dropped_ = 0;
  std::chrono::microseconds switch_delay_{0};
  int filter_port_ = -1;
  std::function<bool(const wire::Bytes&)> filter_;
};

class LoopbackTransport : public Transport {
 public:
  LoopbackTransport(LoopbackFabric& fab, int port) : fab_(fab), port_(port) {}
  void send(const wire::Bytes& f) override { fab_.host_send(port_, f); }
  bool recv(wire::Bytes& f, Clock::time_point deadline) override { return fab_.host_recv(port_, f, deadline); }

 private:
  LoopbackFabric& fab_;
  int port_;
};

}  // namespace panama::host
