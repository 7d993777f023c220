// Running the simulation: ns-3 defaults, random streams, the stop condition and progress.
#include "sim.h"

#include <iostream>

namespace dcsim {

namespace {
constexpr int64_t kDelAckTimeoutUs = 50;
}  // namespace

bool Sim::all_done() const {
  const double now = Simulator::Now().GetSeconds();
  if (now < o_.duration && (paper() || o_.iterations == 0)) return false;
  if (flows_open_ > 0 || flows_.size() < flows_scheduled_) return false;
  // A placed job that has not left is in an iteration (after --duration it leaves at its end);
  // in the paper workload a job still waiting for servers at --duration never starts.
  for (const auto& job : jobs_)
    if (job.placed && !job.left) return false;
  return true;
}

// The offered load on the server uplinks: every packet a server's IPv4 layer sends (before its
// queue), payload bytes only, in the measurement window. The aggregation's UDP and TCP to a
// ring's port are training, other TCP the background. IP payloads of at most 48 bytes (SYN, FIN,
// ACKs) are skipped; for the others the TCP header's length and destination port are read from
// the packet's first bytes (the IPv4 header is serialised in front of it), without a copy.
void Sim::host_tx(Ptr<const Packet> p, Ptr<Ipv4>, uint32_t) {
  if (!window(Simulator::Now().GetSeconds())) return;
  uint8_t b[60 + 14];  // the longest IPv4 header, then TCP's ports, sequence, ACK and data offset
  const uint32_t got = p->CopyData(b, sizeof b);
  if (got < 20) return;
  const uint32_t ihl = (b[0] & 0x0fu) * 4u, total = uint32_t(b[2]) << 8 | b[3], protocol = b[9];
  if (total < ihl) return;
  const uint32_t len = total - ihl;
  if (protocol == UdpL4Protocol::PROT_NUMBER) {
    if (len > 8 + kHdrBytes) tx_training_ += len - 8 - kHdrBytes;
  } else if (protocol == TcpL4Protocol::PROT_NUMBER && len > 48 && got >= ihl + 13) {
    const uint32_t hdr = (b[ihl + 12] >> 4) * 4u;
    if (len <= hdr) return;
    const int port = int(b[ihl + 2]) << 8 | b[ihl + 3];
    (port >= kRingPortBase && port < kRingPortBase + kRingPorts ? tx_training_ : tx_background_) += len - hdr;
  }
}

void Sim::snapshot(int which) {
  for (const auto& [layer, qs] : layer_q_) {
    uint64_t bytes = 0;
    for (const auto& q : qs) bytes += q->GetStats().nTotalSentBytes;
    snap_[which][layer] = bytes;
  }
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
      for (const auto& job : jobs_) jobs_open += job.placed && !job.left;
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
  // Delayed ACKs (every second segment), with a delayed-ACK timeout below the minimum RTO. With
  // ns-3's 200 ms timeout (over 5 ms of RTO) a DCTCP sender whose window had shrunk to one segment
  // never got that segment ACKed before its RTO: after each timeout the retransmission's duplicate
  // drew an immediate ACK, the window stayed at one segment and the next lone segment waited again,
  // one segment per RTO (docs/sim.md "TCP"). 50 us is about two base round trips at k = 8.
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
  Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MicroSeconds(kDelAckTimeoutUs)));
  RngSeedManager::SetSeed(o_.seed);
  RngSeedManager::SetRun(1);

  // A closed connection keeps its endpoint for 2 MSL (TIME_WAIT), and ns-3 scans a node's
  // endpoints for every packet it receives; with ns-3's 120 s that list only grows. Every flow
  // here has its own port, so a short MSL loses nothing.
  Config::SetDefault("ns3::TcpSocketBase::MaxSegLifetime", DoubleValue(o_.tcp_msl_s));
  RngSeedManager::SetSeed(o_.seed);
  RngSeedManager::SetRun(1);
  // A binary heap instead of ns-3's default std::map of events: the same order (time, then
  // insertion), fewer allocations (MapScheduler::Insert was 4.6 % of a k = 8 profile).
  ObjectFactory sched;
  sched.SetTypeId("ns3::HeapScheduler");
  Simulator::SetScheduler(sched);

  build();
  setup_accels();
  busy_.assign(tree_.hosts(), 0);
  ctx_used_.assign(acc_.size(), 0);
  for (int h = 0; h < tree_.hosts(); ++h)
    hosts_.Get(h)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext("Tx", MakeCallback(&Sim::host_tx, this));
  series_setup();
  // The workload was drawn up front (make_workload); here it is only scheduled.
  for (size_t i = 0; i < wl_.flows.size(); ++i) {
    const FlowArrival& f = wl_.flows[i];
    const bool is_short = f.class_size() < o_.short_bytes;
    if ((o_.no_background && o_.single_flow <= 0) || (o_.flow_class == 1 && !is_short) ||
        (o_.flow_class == 2 && is_short))
      continue;
    Simulator::Schedule(Seconds(f.t), &Sim::start_flow, this, static_cast<int>(i));
    ++flows_scheduled_;
  }
  if (!o_.no_jobs) jobs_.resize(wl_.jobs.size());
  for (size_t j = 0; j < jobs_.size(); ++j) {
    const JobArrival& a = wl_.jobs[j];
    Job& job = jobs_[j];
    job.id = static_cast<int>(j);
    job.arrival = a.t;
    job.workers.resize(a.workers);
    if (a.model < 0) {
      job.model = "custom";
      job.bytes = o_.model_bytes;
      job.compute_s = std::max(0.0, o_.compute_s);
    } else {
      job.model = models_[a.model].name;
      job.bytes = models_[a.model].bytes * o_.model_scale;
      job.compute_s = models_[a.model].compute_s * o_.model_scale * o_.compute_scale;
    }
    Simulator::Schedule(Seconds(a.t), &Sim::job_arrival, this, static_cast<int>(j));
  }
  Simulator::Schedule(Seconds(o_.warmup), &Sim::snapshot, this, 0);
  Simulator::Schedule(Seconds(o_.duration), &Sim::snapshot, this, 1);
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
