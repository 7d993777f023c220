// The DCTCP-style competing flow of the fairness experiment (host_driver/flow.h), over loopback
// in one process: a sender and a receiver thread.
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

#include "flow.h"

namespace panama::host {
namespace {

struct Pair {
  FlowStats snd, rcv;
};

Pair run_pair(FlowParams p, int mark_every) {
  p.peer_ip = "127.0.0.1";
  p.bind_ip = "127.0.0.1";
  p.port = static_cast<uint16_t>(20000 + getpid() % 20000);
  std::atomic<bool> stop_rcv{false}, never{false};
  FlowParams rp = p;
  rp.seconds = p.seconds + 5;
  rp.mark_every = mark_every;
  Pair r;
  std::thread rt([&] { r.rcv = run_flow_receiver(rp, stop_rcv); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the receiver is bound
  r.snd = run_flow_sender(p, never);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop_rcv.store(true);
  rt.join();
  return r;
}

TEST(HostFlow, UnmarkedFlowGrowsToItsMaximumWindowWithoutLoss) {
  FlowParams p;
  p.seconds = 1;
  p.window = {4, 1, 32, 1.0 / 16, true};
  const Pair r = run_pair(p, 0);
  EXPECT_GT(r.snd.acked, 1000u);
  EXPECT_EQ(r.snd.lost, 0u);
  EXPECT_EQ(r.snd.ce, 0u);
  EXPECT_EQ(r.snd.final_cwnd, 32);
  EXPECT_EQ(r.snd.final_alpha, 0);
  // Every acknowledged datagram was received; at most one window was still in flight at the end.
  EXPECT_GE(r.rcv.acked, r.snd.acked);
  EXPECT_LE(r.snd.sent - r.snd.acked, 32u);
  EXPECT_EQ(r.snd.bytes, r.snd.acked * 1400);
}

TEST(HostFlow, MarkedHalfTheTimeAlphaApproachesOneHalfAndTheWindowShrinks) {
  FlowParams p;
  p.seconds = 1;
  p.window = {16, 1, 64, 1.0 / 16, true};
  const Pair r = run_pair(p, 2);
  ASSERT_GT(r.snd.acked, 1000u);
  // The sender saw the receiver's echoed marks: half of what it got back.
  EXPECT_NEAR(static_cast<double>(r.snd.ce) / static_cast<double>(r.snd.acked), 0.5, 0.02);
  // alpha is an EWMA (g = 1/16) of the marked fraction per window: after hundreds of windows it
  // is near the fraction; the window never grows past its start.
  EXPECT_GT(r.snd.final_alpha, 0.3);
  EXPECT_LT(r.snd.final_alpha, 0.8);
  EXPECT_LT(r.snd.final_cwnd, 16);
  EXPECT_LE(r.snd.max_cwnd, 16);
}

TEST(HostFlow, NoCcKeepsTheInitialWindowWhateverTheMarks) {
  FlowParams p;
  p.seconds = 0.5;
  p.window = {8, 1, 64, 1.0 / 16, false};
  const Pair r = run_pair(p, 1);
  ASSERT_GT(r.snd.acked, 100u);
  EXPECT_EQ(r.snd.ce, r.snd.acked);
  EXPECT_EQ(r.snd.final_cwnd, 8);
  EXPECT_EQ(r.snd.max_cwnd, 8);
}

TEST(HostFlow, LossHalvesTheWindowOncePerRoundTrip) {
  WindowParams w{20, 2, 64, 1.0 / 16, true};
  Dctcp cc(w);
  cc.on_loss();
  EXPECT_EQ(cc.cwnd(), 10);
  cc.on_loss();
  cc.on_loss();
  cc.on_loss();
  EXPECT_EQ(cc.cwnd(), 2);  // not below min
  // After a loss the next window starts afresh: floor(cwnd) unmarked results grow it by one.
  cc.on_result(false);
  cc.on_result(false);
  EXPECT_EQ(cc.cwnd(), 3);
}

TEST(HostFlow, BadParametersGiveOneClearError) {
  FlowParams p;
  std::atomic<bool> stop{false};
  p.peer_ip = "not-an-ip";
  EXPECT_THROW(run_flow_sender(p, stop), std::runtime_error);
  p.peer_ip = "127.0.0.1";
  p.payload = 8;
  EXPECT_THROW(run_flow_sender(p, stop), std::runtime_error);
}

}  // namespace
}  // namespace panama::host
