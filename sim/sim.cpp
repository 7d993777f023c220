// Running the simulation: ns-3 defaults, random streams, the stop condition and progress.
#include "sim.h"

#include <iostream>

namespace dcsim {

bool Sim::all_done() const {
  if (Simulator::Now().GetSeconds() < o_.duration && o_.iterations == 0) return false;
  if (flows_open_ > 0) return false;
  for (const auto& job : jobs_) {
    const bool more = o_.iterations > 0 ? static_cast<int>(job.iter_s.size()) < o_.iterations : true;
    if (job.computing || job.done_workers < static_cast<int>(job.workers.size()) || (o_.iterations > 0 && more))
      return false;
  }
  return true;
}

void Sim::finish_check() {
  if (!stopped_ && all_done()) {
    stopped_ = true;
    sim_end_ = Simulator::Now().GetSeconds();
    Simulator::Stop();
  }
}

void Sim::progress_tick() {
  const double now = Simulator::Now().GetSeconds();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0_).count();
  if (o_.progress && (wall - last_print_ >= 0.5 || last_print_ < 0)) {
    last_print_ = wall;
    char buf[200];
    if (now < o_.duration) {
      const double f = now / o_.duration;
      const int bars = static_cast<int>(f * 30);
      const double eta = f > 0 ? wall * (1 - f) / f : 0;
      std::snprintf(buf, sizeof buf, "\r[%-30s] %3.0f%%  sim %.4f/%.4f s  wall %.0f s  ETA %.0f s  ",
                    std::string(bars, '#').c_str(), 100 * f, now, o_.duration, wall, eta);
    } else {
      int jobs_open = 0;
      for (const auto& job : jobs_) jobs_open += job.done_workers < static_cast<int>(job.workers.size());
      std::snprintf(buf, sizeof buf, "\r[draining] sim %.4f s  wall %.0f s  flows open %d  jobs in an iteration %d  ",
                    now, wall, flows_open_, jobs_open);
    }
    std::cerr << buf << std::flush;
  }
  finish_check();
  if (!stopped_) Simulator::Schedule(Seconds(std::max(1e-5, o_.duration / 200)), &Sim::progress_tick, this);
}

json Sim::run() {
  Config::SetDefault("ns3::RedQueueDisc::UseEcn", BooleanValue(true));
  Config::SetDefault("ns3::RedQueueDisc::UseHardDrop", BooleanValue(false));
  Config::SetDefault("ns3::RedQueueDisc::Gentle", BooleanValue(false));
  Config::SetDefault("ns3::RedQueueDisc::QW", DoubleValue(1.0));
  Config::SetDefault("ns3::RedQueueDisc::MeanPktSize", UintegerValue(1500));
  Config::SetDefault("ns3::RedQueueDisc::MinTh", DoubleValue(o_.ecn_k));
  Config::SetDefault("ns3::RedQueueDisc::MaxTh", DoubleValue(o_.ecn_k));
  Config::SetDefault("ns3::RedQueueDisc::MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, o_.queue_pkts)));
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 20));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 20));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
  // ns-3.37's default recovery (PRR) with TcpDctcp's ECE-driven window reduction left a
  // connection with a full send buffer stuck, one segment per RTO (docs/sim.md); the classic
  // recovery does not.
  Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
  Config::SetDefault("ns3::TcpSocketBase::MinRto",
                     TimeValue(MicroSeconds(static_cast<int64_t>(o_.tcp_min_rto_ms * 1e3))));
  // An ACK per segment: with ns-3.37's delayed ACKs (2 segments) TcpDctcp connections stalled
  // without any loss under load (docs/sim.md "TCP").
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  RngSeedManager::SetSeed(o_.seed);
  RngSeedManager::SetRun(1);

  build();
  rng_ = CreateObject<UniformRandomVariable>();
  gap_ = CreateObject<ExponentialRandomVariable>();
  jrng_ = CreateObject<UniformRandomVariable>();
  rng_->SetStream(1);
  gap_->SetStream(2);
  jrng_->SetStream(3);
  if (o_.single_flow > 0) {
    Simulator::ScheduleNow(&Sim::start_flow, this, 0, tree_.hosts() - 1, static_cast<uint64_t>(o_.single_flow));
  } else if (!o_.no_background && o_.load > 0) {
    const double rate = o_.load * tree_.hosts() * o_.gbps * 1e9 / (8 * cdf_.mean());
    gap_->SetAttribute("Mean", DoubleValue(1 / rate));
    Simulator::ScheduleNow(&Sim::next_arrival, this);
  }
  if (!o_.no_jobs && o_.single_flow <= 0) Simulator::ScheduleNow(&Sim::setup_jobs, this);
  wall0_ = std::chrono::steady_clock::now();
  Simulator::ScheduleNow(&Sim::progress_tick, this);
  if (panama_like_) Simulator::ScheduleNow(&Sim::repair_tick, this);
  Simulator::Stop(Seconds(o_.max_time));
  Simulator::Run();
  if (!stopped_) sim_end_ = Simulator::Now().GetSeconds();
  if (o_.progress) std::cerr << "\n";
  json r = results();
  Simulator::Destroy();
  return r;
}

}  // namespace dcsim
