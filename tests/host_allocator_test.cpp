// panama-host allocator (docs/allocator.md): placement, leases, SQLite restart and reconcile, bad
// input, the service's bounds, and a grant/reclaim that leaves another job's context untouched
// on the SystemC live model.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "allocator.h"
#include "blocks.h"
#include "config.h"
#include "live.h"
#include "switch.h"
#include "tmp_dir.h"

using namespace panama;
using namespace panama::host;
using json = nlohmann::json;

namespace {

const std::string kRtl = std::string(PANAMA_SOURCE_DIR) + "/rtl_out/p4_10g_200mhz";

Config design() {
  std::ifstream in(kRtl + "/config.json");
  return Config::from_json(json::parse(in));
}

using TmpDir = panama::test_util::TmpDir;  // "panama_alloc_" folders

std::string write_inventory(const std::string& dir, int n) {
  json inv{{"accelerators", json::array()}};
  for (int i = 0; i < n; ++i)
    inv["accelerators"].push_back({{"name", "acc" + std::to_string(i)},
                                   {"design", kRtl},
                                   {"control", dir + "/none"},
                                   {"ports", {{"0", "srv0"}, {"1", "srv1"}}}});
  const std::string p = dir + "/inventory.json";
  std::ofstream(p) << inv.dump();
  return p;
}

// The accelerators' registers: the model's register file (real enable rules), every write logged.
struct Fleet {
  explicit Fleet(int n) {
    for (int i = 0; i < n; ++i) rf.push_back(std::make_unique<model::RegFile>(("rf" + std::to_string(i)).c_str(), cfg));
  }
  RegIoFactory factory() {
    return [this](const AccelSpec& s) {
      const size_t i = static_cast<size_t>(std::stoi(s.name.substr(3)));
      return RegIo{[this, i](uint32_t a) { return rf[i]->read(a); },
                   [this, i](uint32_t a, uint32_t v) {
                     writes.push_back({i, a});
                     if (on_write) on_write();
                     rf[i]->write(a, v);
                   }};
    };
  }
  std::vector<CtxSlot> table(size_t i) {
    return read_table(layout, [&](uint32_t a) { return rf[i]->read(a); });
  }
  Config cfg = design();
  RegLayout layout = load_regmap(kRtl);
  std::vector<std::unique_ptr<model::RegFile>> rf;
  std::vector<std::pair<size_t, uint32_t>> writes;
  std::function<void()> on_write;  // e.g. a slow management path: the clock moves per write
};

struct FakeClock {
  int64_t t = 1'000'000;
  std::function<int64_t()> fn() {
    return [this] { return t; };
  }
};

// A test's scratch folder, fleet of n accelerators (named acc0..), fake clock and inventory;
// open() starts an allocator on them (5 s leases, state in the folder: a second open() is a
// restart), by default on the fleet's registers and the fake clock.
struct Rig {
  explicit Rig(int n) : f(n), inv(write_inventory(td.path(), n)) {}
  Allocator& open(RegIoFactory io = {}, std::function<int64_t()> clock = {}) {
    alloc.reset();
    alloc = std::make_unique<Allocator>(load_inventory(inv), td.path() + "/state.sqlite", io ? io : f.factory(), 5000,
                                        clock ? clock : c.fn());
    return *alloc;
  }
  void close() { alloc.reset(); }  // the allocator goes down (its state stays in the folder)
  TmpDir td{"panama_alloc_"};
  Fleet f;
  FakeClock c;
  std::string inv;
  std::unique_ptr<Allocator> alloc;
};

json acquire(Allocator& a, int trees, json ports, int workers = 2) {
  return a.handle_json({{"op", "acquire"}, {"workers", workers}, {"trees", trees}, {"ports", ports}});
}

}  // namespace

TEST(HostAllocator, PlacementSpreadsTreesOverTheLeastLoaded) {
  Rig g(2);
  Allocator& a = g.open();
  const json both{{"acc0", {0, 1}}, {"acc1", {2, 3}}};
  json r = acquire(a, 2, both);
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(r["jid"], 1);
  ASSERT_EQ(r["trees"].size(), 2u);
  EXPECT_EQ(r["trees"][0]["accelerator"], "acc0");
  EXPECT_EQ(r["trees"][1]["accelerator"], "acc1");
  EXPECT_EQ(r["trees"][0]["group_ip"], "239.0.1.0");
  EXPECT_EQ(r["trees"][1]["group_mac"], "01:00:5e:00:01:01");
  EXPECT_EQ(r["trees"][0]["ranks"][1]["server"], "srv1");
  EXPECT_EQ(r["trees"][1]["first_vid"], 0);
  // The registers hold what the lease says, enabled.
  auto t0 = g.f.table(0), t1 = g.f.table(1);
  ASSERT_EQ(t0.size(), 1u);
  ASSERT_EQ(t1.size(), 1u);
  EXPECT_EQ(t0[0].second.jid, 1);
  EXPECT_EQ(t1[0].second.tid, 1);
  EXPECT_EQ(t1[0].second.members, (std::vector<int>{2, 3}));
  // Equal load: the first in the inventory; then the other one.
  r = acquire(a, 1, both);
  EXPECT_EQ(r["jid"], 2);
  EXPECT_EQ(r["trees"][0]["accelerator"], "acc0");
  r = acquire(a, 1, both);
  EXPECT_EQ(r["trees"][0]["accelerator"], "acc1");
  // Only acc1 given: every tree there, on distinct idle contexts.
  r = acquire(a, 3, json{{"acc1", {0, 1}}});
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(g.f.table(1).size(), 5u);
  const json s = a.handle_json({{"op", "status"}});
  EXPECT_EQ(s["accelerators"][0]["in_use"], 2);
  EXPECT_EQ(s["accelerators"][1]["in_use"], 5);
  EXPECT_EQ(s["accelerators"][1]["free"], 3);
  EXPECT_EQ(s["leases"].size(), 4u);
  // More trees than idle contexts: refused whole, nothing written.
  const size_t before = g.f.writes.size();
  r = acquire(a, 4, json{{"acc1", {0, 1}}});
  EXPECT_FALSE(r["ok"]);
  EXPECT_NE(r["error"].get<std::string>().find("no idle context"), std::string::npos);
  EXPECT_EQ(g.f.writes.size(), before);
}

TEST(HostAllocator, LeaseLifecycleRenewReleaseExpiry) {
  Rig g(1);
  Allocator& a = g.open();
  json r = acquire(a, 2, json{{"acc0", {0, 1}}});
  ASSERT_TRUE(r["ok"]);
  const int64_t lease = r["lease"];
  EXPECT_EQ(r["expires_ms"], g.c.t + 5000);
  g.c.t += 4000;
  r = a.handle_json({{"op", "renew"}, {"lease", lease}});
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(r["expires_ms"], g.c.t + 5000);
  g.c.t += 4000;  // past the first expiry, within the renewed one
  EXPECT_EQ(a.expire(), 0);
  EXPECT_EQ(g.f.table(0).size(), 2u);
  // A second lease, released: its contexts are disabled first, then cleared.
  r = acquire(a, 1, json{{"acc0", {2, 3}}});
  const int64_t l2 = r["lease"];
  const int slot = r["trees"][0]["context"];
  g.f.writes.clear();
  ASSERT_TRUE(a.handle_json({{"op", "release"}, {"lease", l2}})["ok"]);
  ASSERT_FALSE(g.f.writes.empty());
  EXPECT_EQ(g.f.writes.front().second, g.f.layout.c(slot, "CTX_CTRL"));
  EXPECT_EQ(g.f.rf[0]->read(g.f.layout.c(slot, "CTX_JID")), 0u);
  EXPECT_EQ(g.f.rf[0]->read(g.f.layout.c(slot, "CTX_MEMBERS0")), 0u);
  for (const auto& w : g.f.writes) EXPECT_GE(w.second, g.f.layout.c(slot, "CTX_CTRL"));  // only its block
  for (const auto& w : g.f.writes) EXPECT_LT(w.second, g.f.layout.c(slot, "CTX_CTRL") + g.f.layout.ctx_stride);
  EXPECT_EQ(g.f.table(0).size(), 2u);
  r = a.handle_json({{"op", "release"}, {"lease", l2}});
  EXPECT_FALSE(r["ok"]);
  EXPECT_NE(r["error"].get<std::string>().find("has ended"), std::string::npos);
  // Heartbeats stop: the first lease expires and is reclaimed; renewing it is an error.
  g.c.t += 5001;
  EXPECT_EQ(a.expire(), 1);
  EXPECT_TRUE(g.f.table(0).empty());
  r = a.handle_json({{"op", "renew"}, {"lease", lease}});
  EXPECT_FALSE(r["ok"]);
  EXPECT_NE(r["error"].get<std::string>().find("has ended"), std::string::npos);
  EXPECT_TRUE(a.handle_json({{"op", "status"}})["leases"].empty());
}

// A grant on a board reached over a slow management path: a second of the clock per register
// write, about 15 s for one tree, three times the 5 s lease. Returns the reply; spent: its time.
json slow_acquire(Rig& g, const json& ports, int64_t& spent) {
  const int64_t t0 = g.c.t;
  g.f.on_write = [&g] { g.c.t += 1000; };
  json r = acquire(*g.alloc, 1, ports);
  g.f.on_write = nullptr;
  spent = g.c.t - t0;
  return r;
}

// The lease runs from the grant, so what is granted is not already expired (it was, when the
// clock started at the request).
TEST(HostAllocator, LeaseRunsFromItsGrantNotItsRequest) {
  Rig g(1);
  Allocator& a = g.open();
  int64_t spent = 0;
  json r = slow_acquire(g, json{{"acc0", {0, 1}}}, spent);
  ASSERT_TRUE(r["ok"]) << r.dump();
  ASSERT_GT(spent, 5000) << "programming should outlast the lease here";
  EXPECT_EQ(r["expires_ms"], g.c.t + 5000);
  EXPECT_EQ(a.expire(), 0);
  EXPECT_EQ(g.f.table(0).size(), 1u);
  g.c.t += 4000;  // the heartbeat, within the lease as granted
  EXPECT_EQ(a.expire(), 0);
  r = a.handle_json({{"op", "renew"}, {"lease", r["lease"]}});
  EXPECT_TRUE(r["ok"]) << r.dump();
  g.c.t += 5001;
  EXPECT_EQ(a.expire(), 1);
}

// The service is one thread: while it programs a board for one job, another job's heartbeats
// wait unread. That time does not count against the other leases, which would otherwise be
// reclaimed under jobs that renewed on time.
TEST(HostAllocator, OtherLeasesDoNotRunOutWhileAGrantProgramsABoard) {
  Rig g(1);
  Allocator& a = g.open();
  json r = acquire(a, 1, json{{"acc0", {0, 1}}});
  ASSERT_TRUE(r["ok"]) << r.dump();
  const int64_t first = r["lease"], first_expiry = r["expires_ms"];
  g.c.t += 4000;  // its next heartbeat is due within 1 s
  int64_t spent = 0;
  ASSERT_TRUE(slow_acquire(g, json{{"acc0", {2, 3}}}, spent)["ok"]);
  ASSERT_GT(spent, 5000);
  // The first lease moved on by exactly the grant's time: 1 s left, as before it.
  const json s = a.handle_json({{"op", "status"}});
  ASSERT_EQ(s["leases"].size(), 2u);
  ASSERT_EQ(s["leases"][0]["lease"], first);  // by id
  EXPECT_EQ(s["leases"][0]["expires_ms"], first_expiry + spent);
  // The first job's heartbeat, read right after: its lease still runs.
  r = a.handle_json({{"op", "renew"}, {"lease", first}});
  EXPECT_TRUE(r["ok"]) << r.dump();
  EXPECT_EQ(g.f.table(0).size(), 2u);
}

TEST(HostAllocator, RestartReloadsStateAndReconciles) {
  Rig g(1);
  int64_t live = 0;
  std::vector<uint32_t> live_regs;
  auto regs = [&](int slot) {
    std::vector<uint32_t> v;
    for (const auto& [name, off] : g.f.layout.ctx) v.push_back(g.f.rf[0]->read(g.f.layout.c(slot, name)));
    return v;
  };
  int live_slot = -1;
  {
    Allocator& a = g.open();
    json r = acquire(a, 1, json{{"acc0", {0, 1}}});
    live = r["lease"];
    live_slot = r["trees"][0]["context"];
    ASSERT_TRUE(acquire(a, 1, json{{"acc0", {2, 3}}})["ok"]);  // expires at t + 5000
    g.c.t += 3000;
    ASSERT_TRUE(a.handle_json({{"op", "renew"}, {"lease", live}})["ok"]);  // expires at t + 8000
  }
  g.close();
  // While the allocator is down: someone else enables context 7 by hand; the second lease's time
  // runs out.
  wire::CtxEntry e;
  e.jid = 1;  // the live lease's JID too: a foreign context's JID is never handed out again
  e.tid = 9;
  e.members = {3};
  ProgramPlan p;
  p.program.emplace_back(7, e);
  for (const RegWrite& w : plan_writes(g.f.layout, p)) g.f.rf[0]->write(w.addr, w.value);
  g.c.t += 2500;
  live_regs = regs(live_slot);
  g.f.writes.clear();
  Allocator& a = g.open();
  EXPECT_EQ(a.foreign(), (std::vector<std::string>{"acc0:7"}));
  EXPECT_EQ(regs(live_slot), live_regs);
  for (const auto& w : g.f.writes) {
    EXPECT_FALSE(w.second >= g.f.layout.c(live_slot, "CTX_CTRL") &&
                 w.second < g.f.layout.c(live_slot, "CTX_CTRL") + g.f.layout.ctx_stride);
    EXPECT_FALSE(w.second >= g.f.layout.c(7, "CTX_CTRL"));
  }
  const json s = a.handle_json({{"op", "status"}});
  ASSERT_EQ(s["leases"].size(), 1u);
  EXPECT_EQ(s["leases"][0]["lease"], live);
  EXPECT_EQ(s["accelerators"][0]["in_use"], 1);
  EXPECT_EQ(s["accelerators"][0]["foreign"], 1);
  EXPECT_EQ(g.f.table(0).size(), 2u);  // the live lease's and the foreign one
  // The live lease goes on; a new job gets neither its context nor the foreign one's, nor JID 1.
  ASSERT_TRUE(a.handle_json({{"op", "renew"}, {"lease", live}})["ok"]);
  json r = acquire(a, 6, json{{"acc0", {0, 1}}});
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_NE(r["jid"], 1);
  for (const json& t : r["trees"]) {
    EXPECT_NE(t["context"], live_slot);
    EXPECT_NE(t["context"], 7);
  }
  EXPECT_EQ(regs(live_slot), live_regs);
  EXPECT_FALSE(acquire(a, 1, json{{"acc0", {0, 1}}})["ok"]);  // all 8 taken
}

// Where a reclaimed context's next grant starts (above the leftovers) survives a restart, and is
// reconciled with the registers: a context used by hand while the allocator was down starts above
// its expected VID. Lease ids are never handed out twice, across a restart too.
TEST(HostAllocator, RestartKeepsWhereReclaimedContextsStart) {
  Rig g(1);
  const int64_t kMargin = int64_t{1} << 26;
  int64_t last = 0;
  int used = -1;
  {
    Allocator& a = g.open();
    for (int k = 0; k < 2; ++k) {
      const json r = acquire(a, 1, json{{"acc0", {0, 1}}});
      ASSERT_TRUE(r["ok"]) << r.dump();
      EXPECT_GT(r["lease"].get<int64_t>(), last);  // not the released lease's id again
      last = r["lease"];
      used = r["trees"][0]["context"];
      EXPECT_EQ(r["trees"][0]["first_vid"], k == 0 ? 0 : 1000 + kMargin);
      g.f.rf[0]->ctx(used).expected_vid = 1000;  // the job ran to VID 1000
      ASSERT_TRUE(a.handle_json({{"op", "release"}, {"lease", last}})["ok"]);
    }
  }
  g.close();
  // While it is down, someone enables context 5 by hand, runs it to 3 * 2^26 and disables it.
  g.f.rf[0]->ctx(5).expected_vid = 3u << 26;
  Allocator& a = g.open();
  const json r = acquire(a, 8, json{{"acc0", {0, 1}}});
  ASSERT_TRUE(r["ok"]) << r.dump();
  EXPECT_GT(r["lease"].get<int64_t>(), last);
  for (const json& t : r["trees"]) {
    const int ctx = t["context"];
    EXPECT_EQ(t["first_vid"].get<int64_t>(), ctx == used ? 1000 + kMargin : ctx == 5 ? 4 * kMargin : 0) << ctx;
  }
}

TEST(HostAllocator, BadInputIsOneClearErrorAndGrantsNothing) {
  Rig g(1);
  Allocator& a = g.open();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"op":"acquire","workers":2,"trees":1,"ports":{"acc0":[1,1]}})", "duplicate ranks"},
      {R"({"op":"acquire","workers":5,"trees":1,"ports":{"acc0":[0,1,2,3,0]}})", "more ports than acc0 has"},
      {R"({"op":"acquire","workers":2,"trees":1,"ports":{"acc0":[0,4]}})", "past acc0's 4 ports"},
      {R"({"op":"acquire","workers":2,"trees":3,"first_tid":6,"ports":{"acc0":[0,1]}})", "past acc0's 8 contexts"},
      {R"({"op":"acquire","workers":2,"trees":9,"ports":{"acc0":[0,1]}})", "past acc0's 8 contexts"},
      {R"({"op":"acquire","workers":2,"trees":1,"ports":{"acc9":[0,1]}})", "unknown accelerator"},
      {R"({"op":"acquire","workers":2,"trees":1,"ports":{"acc0":[0]}})", "one port per rank"},
      {R"({"op":"acquire","workers":"2","trees":1,"ports":{"acc0":[0,1]}})", "\"workers\" must be an integer"},
      {R"({"op":"acquire","workers":2,"trees":1,"ports":[0,1]})", "\"ports\" must be an object"},
      {R"({"op":"acquire","workers":2,"trees":1,"ports":{"acc0":["0",1]}})", "must be integers"},
      {R"({"op":"acquire","workers":2,"ports":{"acc0":[0,1]}})", "missing \"trees\""},
      {R"({"op":"renew","lease":42})", "has ended"},
      {R"({"op":"renew","lease":"x"})", "\"lease\" must be an integer"},
      {R"({"op":"release"})", "missing \"lease\""},
      {"not json", "not JSON"},
      {"[1,2]", "must be a JSON object"},
      {R"({"lease":1})", "no \"op\""},
      {R"({"op":7})", "\"op\" must be a string"},
      {R"({"op":"grab"})", "unknown op"},
  };
  for (const auto& [line, want] : cases) {
    const json r = json::parse(a.handle(line));
    EXPECT_FALSE(r["ok"]) << line;
    EXPECT_NE(r["error"].get<std::string>().find(want), std::string::npos) << line << " -> " << r.dump();
  }
  EXPECT_TRUE(g.f.writes.empty());
  EXPECT_TRUE(g.f.table(0).empty());
  EXPECT_TRUE(a.handle_json({{"op", "status"}})["leases"].empty());
}

namespace {
int connect_unix(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::strcpy(sa.sun_path, path.c_str());
  if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) return -1;
  return fd;
}
// The reply line, or "" when the peer closed / nothing came within ms.
std::string read_line(int fd, int ms, bool* closed = nullptr) {
  std::string s;
  char ch;
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 20) <= 0) continue;
    const ssize_t n = recv(fd, &ch, 1, 0);
    if (n <= 0) {
      if (closed) *closed = true;
      return s;
    }
    if (ch == '\n') return s;
    s += ch;
  }
  return s;
}
}  // namespace

TEST(HostAllocator, ServiceBoundsSilentAndOverlongClients) {
  Rig g(1);
  Allocator& a = g.open({}, [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  });
  ServerOpts o;
  o.socket = g.td.path() + "/alloc.sock";
  o.idle_ms = 400;
  o.max_line = 1000;
  o.max_clients = 3;
  o.tcp_port = 0;
  o.token = "s3cret";
  AllocatorServer s(a, o);
  std::atomic<bool> stop{false};
  std::thread t([&] {
    while (!stop) s.poll_once(20);
  });
  const int silent = connect_unix(o.socket);
  ASSERT_GE(silent, 0);
  const int good = connect_unix(o.socket);
  const std::string req = R"({"op":"status"})"
                          "\n{\"op\":\n";
  ASSERT_EQ(send(good, req.data(), req.size(), 0), static_cast<ssize_t>(req.size()));
  EXPECT_TRUE(json::parse(read_line(good, 2000))["ok"]);
  const json bad = json::parse(read_line(good, 2000));
  EXPECT_EQ(bad["error"], "request is not JSON");
  // An over-long line: one error, then the connection is closed.
  const int big = connect_unix(o.socket);
  const std::string junk(3000, 'x');
  send(big, junk.data(), junk.size(), MSG_NOSIGNAL);
  bool closed = false;
  const std::string e = read_line(big, 2000);
  EXPECT_NE(e.find("longer than 1000"), std::string::npos) << e;
  read_line(big, 2000, &closed);
  EXPECT_TRUE(closed);
  // The silent client is closed after idle_ms; the service went on serving meanwhile.
  closed = false;
  read_line(silent, 3000, &closed);
  EXPECT_TRUE(closed);
  // TCP on loopback: the token is required.
  const int tcp = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(s.tcp_port()));
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(tcp, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  const std::string r2 = "{\"op\":\"status\"}\n{\"op\":\"status\",\"token\":\"s3cret\"}\n";
  send(tcp, r2.data(), r2.size(), 0);
  EXPECT_EQ(json::parse(read_line(tcp, 2000))["error"], "bad or missing token");
  EXPECT_TRUE(json::parse(read_line(tcp, 2000))["ok"]);
  stop = true;
  t.join();
  for (int fd : {silent, good, big, tcp}) close(fd);
}

// A grant and a reclaim of job B while job A runs on the live model: A's context registers and
// counters read back unchanged, and A keeps aggregating.
// The service's socket path: a regular file there is refused and left as it was (never
// unlinked); a stale socket is replaced, and the path is removed at exit.
TEST(HostAllocator, SocketPathIsNeverSomethingElsesFile) {
  Rig g(1);
  Allocator& a = g.open({}, [] { return int64_t{0}; });
  ServerOpts o;
  o.socket = g.td.path() + "/alloc.sock";
  std::ofstream(o.socket) << "not a socket\n";
  try {
    AllocatorServer s(a, o);
    ADD_FAILURE() << "a regular file at --socket was replaced";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a socket"), std::string::npos) << e.what();
  }
  std::ifstream in(o.socket);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "not a socket");
  std::remove(o.socket.c_str());
  { AllocatorServer s(a, o); }  // leaves no socket behind
  { AllocatorServer s(a, o); }  // nor would a stale one stop the next
  struct stat st {};
  EXPECT_NE(::lstat(o.socket.c_str(), &st), 0);
}

// Job A aggregates on its context; job B is granted two trees and released: A's registers and
// counters read back unchanged, no write touched A's context block, and A keeps aggregating. On
// an engine with a register port (the SystemC live model, the Verilated RTL; the soft engine has
// none: its contexts come from a file, the allocator cannot serve it).
void grant_and_reclaim_leave_another_job_untouched(Engine& eng) {
  const TmpDir td("panama_alloc_");
  const std::string& d = td.path();
  const RegLayout l = load_regmap(kRtl);
  std::vector<uint32_t> written;
  RegIoFactory io = [&](const AccelSpec&) {
    return RegIo{[&](uint32_t x) { return eng.reg_read(x); },
                 [&](uint32_t x, uint32_t v) {
                   written.push_back(x);
                   eng.reg_write(x, v);
                 }};
  };
  FakeClock c;
  Allocator a(load_inventory(write_inventory(d, 1)), d + "/state.sqlite", io, 5000, c.fn());
  const json ra = acquire(a, 1, json{{"acc0", {0, 1}}});
  ASSERT_TRUE(ra["ok"]);
  const int slot = ra["trees"][0]["context"];
  auto contribute = [&](uint32_t vid) {
    for (int port : {0, 1}) {
      wire::FrameSpec s;
      s.hdr.jid = static_cast<uint16_t>(ra["jid"].get<int>());
      s.hdr.tid = 0;
      s.hdr.vid = vid;
      s.payload = wire::payload_from_elems(std::vector<uint32_t>(8, 0x3f800000u), 4);
      eng.inject(port, wire::build_frame(s));
    }
    eng.run_until_idle();
  };
  contribute(0);
  auto regs = [&] {
    std::vector<uint32_t> v;
    for (const auto& [name, off] : l.ctx) v.push_back(eng.reg_read(l.c(slot, name)));
    return v;
  };
  ASSERT_EQ(eng.reg_read(l.c(slot, "CTX_VECTORS_COMPLETED_LO")), 1u);
  const auto before = regs();
  written.clear();
  const json rb = acquire(a, 2, json{{"acc0", {2, 3}}});
  ASSERT_TRUE(rb["ok"]) << rb.dump();
  eng.advance(100);
  ASSERT_TRUE(a.handle_json({{"op", "release"}, {"lease", rb["lease"]}})["ok"]);
  eng.advance(100);
  EXPECT_EQ(regs(), before);
  for (uint32_t x : written) EXPECT_FALSE(x >= l.c(slot, "CTX_CTRL") && x < l.c(slot, "CTX_CTRL") + l.ctx_stride);
  contribute(1);
  EXPECT_EQ(eng.reg_read(l.c(slot, "CTX_VECTORS_COMPLETED_LO")), 2u);
  EXPECT_EQ(eng.reg_read(l.c(slot, "CTX_EXPECTED_VID")), 2u);
}

TEST(HostAllocator, GrantAndReclaimLeaveAnotherJobUntouchedOnTheLiveModel) {
  std::unique_ptr<Engine> eng = make_model_engine(design(), wire::CtxFile{});
  grant_and_reclaim_leave_another_job_untouched(*eng);
}

// The Verilated RTL (verilated on first use, cached in build/rtl_cache: minutes the first time).
TEST(HostAllocator, GrantAndReclaimLeaveAnotherJobUntouchedOnTheRtl) {
  const TmpDir td("panama_alloc_");
  const std::string ctx = td.path() + "/empty.json";
  std::ofstream(ctx) << "{\"contexts\": []}\n";
  std::unique_ptr<Engine> eng = make_rtl_engine(kRtl, ctx, design().in.ports);
  grant_and_reclaim_leave_another_job_untouched(*eng);
}

// The accelerator fails in the middle of a grant: one error, no lease, and the context whose state
// is unknown is not granted again.
TEST(HostAllocator, AnAcceleratorFailingMidGrantGrantsNothing) {
  Rig g(1);
  int budget = 1 << 30;
  RegIoFactory io = [&](const AccelSpec& s) {
    RegIo r = g.f.factory()(s);
    auto w = r.write;
    r.write = [w, &budget](uint32_t a, uint32_t v) {
      if (--budget < 0) throw std::runtime_error("control socket closed");
      w(a, v);
    };
    return r;
  };
  Allocator& a = g.open(io);
  budget = 3;
  const json r = acquire(a, 1, json{{"acc0", {0, 1}}});
  EXPECT_FALSE(r["ok"]);
  EXPECT_NE(r["error"].get<std::string>().find("control socket closed; nothing granted"), std::string::npos) << r;
  const json s = a.handle_json({{"op", "status"}});
  EXPECT_TRUE(s["leases"].empty());
  EXPECT_EQ(s["accelerators"][0]["owner"][0], "foreign");
  budget = 1 << 30;
  const json r2 = acquire(a, 1, json{{"acc0", {0, 1}}});
  ASSERT_TRUE(r2["ok"]) << r2;
  EXPECT_EQ(r2["trees"][0]["context"], 1);
}

// A second connection to an allocator's state file: to inject failures (triggers) and to read
// what was committed.
struct SideDb {
  explicit SideDb(const std::string& path) {
    sqlite3* d = nullptr;
    if (sqlite3_open(path.c_str(), &d) != SQLITE_OK) throw std::runtime_error("cannot open " + path);
    db.reset(d);
  }
  // Runs q: "" when it succeeds, else SQLite's message.
  std::string exec(const std::string& q) {
    char* msg = nullptr;
    const int rc = sqlite3_exec(db.get(), q.c_str(), nullptr, nullptr, &msg);
    const std::string m = msg ? msg : "?";
    sqlite3_free(msg);
    return rc == SQLITE_OK ? std::string() : m;
  }
  // The first column of q's first row ("" when none).
  std::string value(const std::string& q) {
    std::string v;
    sqlite3_exec(
        db.get(), q.c_str(),
        [](void* p, int, char** col, char**) {
          *static_cast<std::string*>(p) = col[0] ? col[0] : "";
          return 1;  // the first row is enough
        },
        &v, nullptr);
    return v;
  }
  // Every insert into table fails with "injected" until heal().
  void break_inserts(const std::string& table) {
    ASSERT_EQ(exec("CREATE TRIGGER inject BEFORE INSERT ON " + table + " BEGIN SELECT RAISE(ABORT, 'injected'); END"),
              "");
  }
  void heal() { ASSERT_EQ(exec("DROP TRIGGER inject"), ""); }
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db{nullptr, sqlite3_close};
};

// The database fails in the middle of a grant, after the registers are written (a trigger makes
// the contexts row's INSERT fail): one error, no lease, the context disabled again, and the next
// grant runs in a transaction of its own.
TEST(HostAllocator, AStateFailureMidGrantGrantsNothingAndTheNextGrantWorks) {
  Rig g(1);
  Allocator& a = g.open();
  SideDb side(g.td.path() + "/state.sqlite");
  side.break_inserts("contexts");
  const json r = acquire(a, 1, json{{"acc0", {0, 1}}});
  EXPECT_FALSE(r["ok"]);
  EXPECT_NE(r["error"].get<std::string>().find("injected"), std::string::npos) << r;
  EXPECT_GT(g.f.writes.size(), 0u);  // the context was programmed before the failure
  EXPECT_TRUE(g.f.table(0).empty()) << "the context written for the failed grant is still enabled";
  json s = a.handle_json({{"op", "status"}});
  EXPECT_TRUE(s["leases"].empty()) << s;
  EXPECT_TRUE(s["accelerators"][0]["owner"][0].is_null()) << s;
  side.heal();
  const json r2 = acquire(a, 1, json{{"acc0", {0, 1}}});
  ASSERT_TRUE(r2["ok"]) << r2;
  EXPECT_EQ(r2["trees"][0]["context"], 0);
  // Committed: another connection sees the lease and its context.
  EXPECT_EQ(side.value("SELECT COUNT(*) FROM leases JOIN contexts ON contexts.lease = leases.id"), "1");
}

// The database fails while a lease is released (its first VID cannot be stored): the release
// says so, yet the context is disabled, cleared and idle again, and its next grant starts above
// what the job left (kept in memory).
TEST(HostAllocator, AStateFailureInAReleaseStillClearsTheContext) {
  Rig g(1);
  Allocator& a = g.open();
  SideDb side(g.td.path() + "/state.sqlite");
  const json r = acquire(a, 1, json{{"acc0", {0, 1}}});
  ASSERT_TRUE(r["ok"]) << r;
  ASSERT_EQ(r["trees"][0]["context"], 0);
  g.f.rf[0]->ctx(0).expected_vid = 1000;  // the job ran to VID 1000
  side.break_inserts("vids");
  const json rel = a.handle_json({{"op", "release"}, {"lease", r["lease"]}});
  EXPECT_FALSE(rel["ok"]);
  EXPECT_NE(rel["error"].get<std::string>().find("injected"), std::string::npos) << rel;
  EXPECT_TRUE(g.f.table(0).empty()) << "the released context is still enabled";
  const json s = a.handle_json({{"op", "status"}});
  EXPECT_TRUE(s["leases"].empty()) << s;
  EXPECT_TRUE(s["accelerators"][0]["owner"][0].is_null()) << s;
  EXPECT_EQ(side.value("SELECT COUNT(*) FROM contexts"), "0");
  side.heal();
  const json r2 = acquire(a, 1, json{{"acc0", {0, 1}}});
  ASSERT_TRUE(r2["ok"]) << r2;
  EXPECT_EQ(r2["trees"][0]["context"], 0);
  EXPECT_EQ(r2["trees"][0]["first_vid"], 1000 + (int64_t{1} << 26));
}

// A lease expires on a board that can no longer be written: the lease ends, its context is out of
// use (unknown) until a restart, and another job's lease on another board renews as before (the
// expiry runs before every request and after every poll of the service).
TEST(HostAllocator, AnExpiryThatCannotReachItsBoardLeavesTheOthersServed) {
  Rig g(2);
  bool acc0_down = false;
  RegIoFactory io = [&](const AccelSpec& spec) {
    RegIo r = g.f.factory()(spec);
    if (spec.name == "acc0") {
      auto w = r.write;
      r.write = [w, &acc0_down](uint32_t addr, uint32_t v) {
        if (acc0_down) throw std::runtime_error("control socket closed");
        w(addr, v);
      };
    }
    return r;
  };
  Allocator& a = g.open(io);
  const json ra = acquire(a, 1, json{{"acc0", {0, 1}}});
  const json rb = acquire(a, 1, json{{"acc1", {0, 1}}});
  ASSERT_TRUE(ra["ok"]) << ra;
  ASSERT_TRUE(rb["ok"]) << rb;
  g.c.t += 4000;
  ASSERT_TRUE(a.handle_json({{"op", "renew"}, {"lease", rb["lease"]}})["ok"]);
  acc0_down = true;
  g.c.t += 2000;  // A's lease is past its end, B's is not
  const json renew = a.handle_json({{"op", "renew"}, {"lease", rb["lease"]}});
  EXPECT_TRUE(renew["ok"]) << renew;
  EXPECT_EQ(a.expire(), 0);  // A is gone: not tried again
  const json s = a.handle_json({{"op", "status"}});
  ASSERT_EQ(s["leases"].size(), 1u) << s;
  EXPECT_EQ(s["leases"][0]["lease"], rb["lease"]);
  EXPECT_EQ(s["accelerators"][0]["owner"][0], "foreign") << s;
  EXPECT_EQ(g.f.table(1).size(), 1u);
}
