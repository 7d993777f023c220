#include "allocator.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "config.h"
#include "mgmt_client.h"

namespace panama::host {

using json = nlohmann::json;

namespace {

// A grant after a reclaim starts this far above the reclaimed context's expected VID: a job's
// calls reserve at most 2^24 VIDs per tree, and a member may be one call ahead of another.
constexpr uint32_t kLeftoverMargin = 1u << 26;

struct Bad : std::runtime_error {
  using std::runtime_error::runtime_error;
};

json err(const std::string& m) { return json{{"ok", false}, {"error", m}}; }

int64_t mono_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A clean context: every writable field 0 (the context stays disabled).
std::vector<RegWrite> clear_writes(const RegLayout& l, int c) {
  std::vector<RegWrite> w;
  for (const auto& [name, off] : l.ctx) {
    if (name == "CTX_CTRL" || name == "CTX_STATUS" || name == "CTX_EXPECTED_VID" ||
        name.find("VECTORS") != std::string::npos)
      continue;
    w.push_back({l.c(c, name), 0, "clear " + name});
  }
  return w;
}

}  // namespace

std::vector<AccelSpec> load_inventory(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read inventory " + path);
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("accelerators") || !j["accelerators"].is_array() || j["accelerators"].empty())
    throw std::runtime_error(path + ": needs a non-empty \"accelerators\" array");
  std::vector<AccelSpec> v;
  std::set<std::string> names;
  for (const json& a : j["accelerators"]) {
    AccelSpec s;
    s.name = a.value("name", "");
    s.design = a.value("design", "");
    if (s.name.empty() || s.design.empty())
      throw std::runtime_error(path + ": every accelerator needs name and design");
    if (!names.insert(s.name).second) throw std::runtime_error(path + ": accelerator " + s.name + " given twice");
    s.control = a.value("control", "");
    s.target = a.value("target", "");
    s.key = a.value("key", "");
    if (s.control.empty() == s.target.empty())
      throw std::runtime_error(path + ": accelerator " + s.name + " needs either control or target");
    if (!s.target.empty() && s.key.empty())
      throw std::runtime_error(path + ": accelerator " + s.name + ": a board (target) needs key (its key file)");
    if (s.target.empty() && !s.key.empty())
      throw std::runtime_error(path + ": accelerator " + s.name +
                               ": key is for a board (target), not a control socket");
    s.mgmt_timeout_ms = a.value("mgmt_timeout_ms", 300);
    if (s.mgmt_timeout_ms < 1 || s.mgmt_timeout_ms > 60000)
      throw std::runtime_error(path + ": accelerator " + s.name + ": mgmt_timeout_ms must be 1..60000");
    if (!s.target.empty()) (void)load_mgmt_key(s.key);  // unreadable, malformed or open to others: one line now
    s.agg_port = a.value("agg_port", static_cast<int>(wire::kDefaultAggPort));
    s.agg_ip = a.value("agg_ip", "");
    std::ifstream cf(s.design + "/config.json");
    if (!cf) throw std::runtime_error(path + ": cannot read " + s.design + "/config.json");
    const Config cfg = Config::from_json(json::parse(cf));
    s.ports = cfg.in.ports;
    s.contexts = cfg.in.contexts;
    s.layout = load_regmap(s.design);
    if (s.layout.ports != s.ports || s.layout.contexts != s.contexts)
      throw std::runtime_error(path + ": " + s.design + ": config.json and regmap.json disagree on ports/contexts");
    if (a.contains("ports"))
      for (const auto& [p, srv] : a["ports"].items()) s.port_server[std::stoi(p)] = srv.get<std::string>();
    v.push_back(std::move(s));
  }
  return v;
}

RegIoFactory default_reg_io() {
  return [](const AccelSpec& s) {
    if (s.control.empty()) {  // a board: its management over Ethernet, authenticated with its key
      auto mc = std::make_shared<MgmtClient>(s.target, load_mgmt_key(s.key), s.mgmt_timeout_ms);
      return RegIo{[mc](uint32_t a) { return mc->read(a); }, [mc](uint32_t a, uint32_t v) { mc->write(a, v); }};
    }
    auto cc = std::make_shared<ControlClient>(s.control);
    return RegIo{[cc](uint32_t a) { return cc->read(a); }, [cc](uint32_t a, uint32_t v) { cc->write(a, v); }};
  };
}

// ---------------------------------------------------------------- Allocator

void Allocator::exec(const std::string& sql) {
  char* msg = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    std::string m = msg ? msg : "?";
    sqlite3_free(msg);
    throw std::runtime_error("state: " + m);
  }
}

namespace {
// A prepared statement with bound values, stepped to the end; rows handed to f.
template <typename F>
void query(sqlite3* db, const std::string& sql, const std::vector<int64_t>& args, F&& f) {
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK)
    throw std::runtime_error(std::string("state: ") + sqlite3_errmsg(db));
  for (size_t i = 0; i < args.size(); ++i) sqlite3_bind_int64(st, static_cast<int>(i + 1), args[i]);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) f(st);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) throw std::runtime_error(std::string("state: ") + sqlite3_errmsg(db));
}
// A quoted SQL string literal.
std::string sql_text(const std::string& s) {
  std::string q = "'";
  for (char ch : s) q += ch == '\'' ? std::string("''") : std::string(1, ch);
  return q + "'";
}
std::string col(sqlite3_stmt* st, int i) {
  const unsigned char* t = sqlite3_column_text(st, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}
}  // namespace

Allocator::Allocator(std::vector<AccelSpec> inv, const std::string& state, RegIoFactory io, int64_t lease_ms,
                     std::function<int64_t()> now_ms)
    : inv_(std::move(inv)), factory_(std::move(io)), lease_ms_(lease_ms), now_(std::move(now_ms)) {
  if (sqlite3_open(state.c_str(), &db_) != SQLITE_OK) {
    std::string m = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error("cannot open state " + state + ": " + m);
  }
  exec(
      "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
      "CREATE TABLE IF NOT EXISTS leases(id INTEGER PRIMARY KEY, jid INTEGER NOT NULL, expires INTEGER NOT NULL,"
      " reply TEXT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS contexts(accel TEXT NOT NULL, idx INTEGER NOT NULL, lease INTEGER NOT NULL,"
      " jid INTEGER NOT NULL, tid INTEGER NOT NULL, PRIMARY KEY(accel, idx));"
      "CREATE TABLE IF NOT EXISTS vids(accel TEXT NOT NULL, idx INTEGER NOT NULL, first_vid INTEGER NOT NULL,"
      " PRIMARY KEY(accel, idx));"
      "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);");
  owner_.resize(inv_.size());
  for (size_t a = 0; a < inv_.size(); ++a) owner_[a].assign(static_cast<size_t>(inv_[a].contexts), 0);
  first_vid_.resize(inv_.size());
  for (size_t a = 0; a < inv_.size(); ++a) first_vid_[a].assign(static_cast<size_t>(inv_[a].contexts), 0);
  reconcile();
}

Allocator::~Allocator() { sqlite3_close(db_); }

RegIo& Allocator::io(size_t a) {
  auto it = io_.find(a);
  if (it == io_.end()) it = io_.emplace(a, factory_(inv_[a])).first;
  return it->second;
}

// The registers are the truth for what is enabled; the state file for who owns it. A context of a
// live lease is left as it is (read only). Contexts of expired leases and contexts the state file
// holds for leases that are gone are reclaimed; enabled contexts nobody owns are foreign: left
// alone, never granted.
void Allocator::reconcile() {
  std::map<std::string, size_t> by_name;
  for (size_t a = 0; a < inv_.size(); ++a) by_name[inv_[a].name] = a;
  std::set<int64_t> live;
  query(db_, "SELECT id FROM leases", {}, [&](sqlite3_stmt* st) { live.insert(sqlite3_column_int64(st, 0)); });
  std::vector<std::string> dropped;
  query(db_, "SELECT accel, idx, first_vid FROM vids", {}, [&](sqlite3_stmt* st) {
    auto it = by_name.find(col(st, 0));
    const int idx = sqlite3_column_int(st, 1);
    if (it != by_name.end() && idx >= 0 && idx < inv_[it->second].contexts)
      first_vid_[it->second][static_cast<size_t>(idx)] = static_cast<uint32_t>(sqlite3_column_int64(st, 2));
  });
  query(db_, "SELECT accel, idx, lease FROM contexts", {}, [&](sqlite3_stmt* st) {
    const std::string acc = col(st, 0);
    const int idx = sqlite3_column_int(st, 1);
    const int64_t lease = sqlite3_column_int64(st, 2);
    auto it = by_name.find(acc);
    if (it == by_name.end() || idx >= inv_[it->second].contexts || !live.count(lease)) {
      dropped.push_back(acc + ":" + std::to_string(idx));
      if (it != by_name.end() && idx < inv_[it->second].contexts) owner_[it->second][static_cast<size_t>(idx)] = -2;
      return;
    }
    owner_[it->second][static_cast<size_t>(idx)] = lease;
  });
  for (size_t a = 0; a < inv_.size(); ++a) {
    const RegLayout& l = inv_[a].layout;
    RegIo& r = io(a);
    const auto table = read_table(l, r.read);
    std::set<int> enabled;
    for (const auto& s : table) enabled.insert(s.first);
    for (int c = 0; c < inv_[a].contexts; ++c) {
      int64_t& o = owner_[a][static_cast<size_t>(c)];
      if (o == -2) {  // the state file's orphan: reclaim it
        r.write(l.c(c, "CTX_CTRL"), 0);
        note_leftovers(a, c);
        for (const RegWrite& w : clear_writes(l, c)) r.write(w.addr, w.value);
        o = 0;
      } else if (o == 0 && enabled.count(c)) {
        o = -1;
        foreign_.push_back(inv_[a].name + ":" + std::to_string(c));
      } else if (o == 0 && r.read(l.c(c, "CTX_EXPECTED_VID")) != 0) {
        // Idle but used since the registers were last reset: by a lease reclaimed before the
        // restart (the state file's value), or enabled and disabled by hand while the allocator
        // was down (the registers' E is then ahead of it).
        const uint32_t kept = first_vid_[a][static_cast<size_t>(c)];
        note_leftovers(a, c);
        if (first_vid_[a][static_cast<size_t>(c)] < kept) first_vid_[a][static_cast<size_t>(c)] = kept;
      }
    }
  }
  exec("DELETE FROM contexts WHERE lease NOT IN (SELECT id FROM leases)");
  expire();
}

void Allocator::note_leftovers(size_t a, int c) {
  read_leftovers(a, c);
  store_first_vid(a, c);
}

void Allocator::read_leftovers(size_t a, int c) {
  const uint32_t e = io(a).read(inv_[a].layout.c(c, "CTX_EXPECTED_VID")) + kLeftoverMargin;
  first_vid_[a][static_cast<size_t>(c)] = e < 0x80000000u ? e : 0;
}

void Allocator::store_first_vid(size_t a, int c) {
  query(db_, "INSERT OR REPLACE INTO vids(accel, idx, first_vid) VALUES(" + sql_text(inv_[a].name) + ", ?, ?)",
        {c, first_vid_[a][static_cast<size_t>(c)]}, [](sqlite3_stmt*) {});
}

void Allocator::end_stale_transaction() {
  // A transaction a failed ROLLBACK left open (abandon) must not take in the next request's
  // writes, which a later rollback would then undo.
  if (!sqlite3_get_autocommit(db_)) exec("ROLLBACK");
}

int Allocator::expire() {
  end_stale_transaction();
  const int64_t t0 = now_();
  std::vector<int64_t> gone;
  query(db_, "SELECT id FROM leases WHERE expires <= ?", {t0},
        [&](sqlite3_stmt* st) { gone.push_back(sqlite3_column_int64(st, 0)); });
  for (int64_t id : gone) {
    try {
      reclaim(id);
    } catch (const std::exception& x) {
      forget(id, std::string("reclaim of expired lease ") + std::to_string(id) + " failed: " + x.what());
    }
  }
  if (!gone.empty()) hold_others(now_() - t0, 0);
  return static_cast<int>(gone.size());
}

// The service has one thread: while it writes an accelerator's registers (over management, a
// round trip each) no renew is read. That time does not count against the other leases.
void Allocator::hold_others(int64_t ms, int64_t except) {
  if (ms > 0) query(db_, "UPDATE leases SET expires = expires + ? WHERE id != ?", {ms, except}, [](sqlite3_stmt*) {});
}

// Disable every context of the lease first, then clear them, then forget the lease.
void Allocator::reclaim(int64_t lease) {
  for (size_t a = 0; a < inv_.size(); ++a)
    for (int c = 0; c < inv_[a].contexts; ++c)
      if (owner_[a][static_cast<size_t>(c)] == lease) io(a).write(inv_[a].layout.c(c, "CTX_CTRL"), 0);
  // The registers first: a context is cleared and idle again even when the state file then fails
  // (its first VID stays in memory; a restart reads it back from the registers).
  std::string state_error;
  for (size_t a = 0; a < inv_.size(); ++a)
    for (int c = 0; c < inv_[a].contexts; ++c)
      if (owner_[a][static_cast<size_t>(c)] == lease) {
        // Contributions still queued on the context stay there (accelerator.md: leftovers stay
        // queued across disable and enable), at VIDs from the expected VID on, within a job's
        // call range or two: the next grant starts its VIDs above them.
        read_leftovers(a, c);
        for (const RegWrite& w : clear_writes(inv_[a].layout, c)) io(a).write(w.addr, w.value);
        owner_[a][static_cast<size_t>(c)] = 0;
        try {
          store_first_vid(a, c);
          query(db_, "DELETE FROM contexts WHERE accel = " + sql_text(inv_[a].name) + " AND idx = ?", {c},
                [](sqlite3_stmt*) {});
        } catch (const std::exception& x) {
          if (state_error.empty()) state_error = x.what();
        }
      }
  drop_rows(lease);
  if (!state_error.empty()) throw std::runtime_error(state_error);
}

void Allocator::drop_rows(int64_t lease) {
  query(db_, "DELETE FROM contexts WHERE lease = ?", {lease}, [](sqlite3_stmt*) {});
  query(db_, "DELETE FROM leases WHERE id = ?", {lease}, [](sqlite3_stmt*) {});
}

void Allocator::forget(int64_t lease, const std::string& why) {
  // What was not cleared is unknown: never granted until a restart's reconcile reads it back.
  int unknown = 0;
  for (auto& row : owner_)
    for (int64_t& o : row)
      if (o == lease) {
        o = -1;
        ++unknown;
      }
  bool ended = false;
  try {
    drop_rows(lease);
    ended = true;
  } catch (const std::exception&) {
    // The state file fails too: the lease row stays and the next expiry tries again (and says so
    // once it can end it).
  }
  if (unknown > 0 || ended)
    std::fprintf(stderr, "panama-host allocator: %s; %d context(s) out of use until a restart\n", why.c_str(), unknown);
}

std::string Allocator::handle(const std::string& line) {
  json req;
  try {
    req = json::parse(line);
  } catch (const std::exception&) {
    return err("request is not JSON").dump();
  }
  return handle_json(req).dump();
}

json Allocator::handle_json(const json& req) {
  int64_t t0 = -1;
  json out;
  try {
    if (!req.is_object()) throw Bad("request must be a JSON object");
    if (!req.contains("op")) throw Bad("request has no \"op\"");
    if (!req["op"].is_string()) throw Bad("\"op\" must be a string");
    const std::string op = req["op"];
    expire();
    t0 = now_();
    if (op == "acquire")
      out = acquire(req);
    else if (op == "renew")
      out = renew(req);
    else if (op == "release")
      out = release(req);
    else if (op == "status")
      out = status();
    else
      throw Bad("unknown op \"" + op + "\" (acquire, renew, release, status)");
  } catch (const Bad& e) {
    out = err(e.what());
  } catch (const std::exception& e) {
    out = err(std::string("internal: ") + e.what());
  }
  if (t0 < 0) return out;  // not a request
  try {
    // The lease this request granted or renewed runs from now already.
    const bool own = out.value("ok", false) && out.contains("lease");
    hold_others(now_() - t0, own ? out["lease"].get<int64_t>() : 0);
  } catch (const std::exception& e) {
    out = err(std::string("internal: ") + e.what());
  }
  return out;
}

namespace {
int64_t get_int(const json& req, const char* key, int64_t lo, int64_t hi, std::optional<int64_t> dflt = {}) {
  if (!req.contains(key)) {
    if (dflt) return *dflt;
    throw Bad(std::string("missing \"") + key + "\"");
  }
  const json& v = req[key];
  if (!v.is_number_integer()) throw Bad(std::string("\"") + key + "\" must be an integer");
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi)
    throw Bad(std::string("\"") + key + "\" must be " + std::to_string(lo) + ".." + std::to_string(hi));
  return x;
}
}  // namespace

// {"op":"acquire","workers":W,"trees":T,"ports":{"ACC":[port of rank 0, ...], ...},
//  "first_tid":0,"timeout_cycles":0}
// The request's ranks on each accelerator it names, checked: known accelerator, one port per
// rank, ports in range and distinct, the TID range within the design's contexts.
std::vector<Allocator::Candidate> Allocator::candidates(const json& req, int workers, int trees, int first_tid) const {
  if (!req.contains("ports") || !req["ports"].is_object() || req["ports"].empty())
    throw Bad("\"ports\" must be an object: accelerator name -> the port of each rank");
  std::vector<Candidate> cand;
  for (const auto& [name, list] : req["ports"].items()) {
    size_t a = inv_.size();
    for (size_t i = 0; i < inv_.size(); ++i)
      if (inv_[i].name == name) a = i;
    if (a == inv_.size()) throw Bad("unknown accelerator \"" + name + "\"");
    if (!list.is_array()) throw Bad("ports of " + name + " must be an array");
    if (static_cast<int>(list.size()) != workers)
      throw Bad("ports of " + name + ": one port per rank (" + std::to_string(workers) + ")");
    if (workers > inv_[a].ports)
      throw Bad(std::to_string(workers) + " ranks need more ports than " + name + " has (" +
                std::to_string(inv_[a].ports) + ")");
    std::vector<int> ports;
    for (const json& p : list) {
      if (!p.is_number_integer()) throw Bad("ports of " + name + " must be integers");
      const int x = p.get<int>();
      if (x < 0 || x >= inv_[a].ports)
        throw Bad("port " + std::to_string(x) + " past " + name + "'s " + std::to_string(inv_[a].ports) + " ports");
      ports.push_back(x);
    }
    std::vector<int> s = ports;
    std::sort(s.begin(), s.end());
    if (std::adjacent_find(s.begin(), s.end()) != s.end())
      throw Bad("ports of " + name + ": two ranks on one port (duplicate ranks)");
    if (first_tid + trees > inv_[a].contexts)
      throw Bad("TIDs " + std::to_string(first_tid) + ".." + std::to_string(first_tid + trees - 1) + " past " + name +
                "'s " + std::to_string(inv_[a].contexts) + " contexts");
    cand.emplace_back(a, std::move(ports));
  }
  return cand;
}

int64_t Allocator::free_jid() {
  // JID: the smallest one no live lease holds (and no foreign context shows).
  std::set<int64_t> used;
  query(db_, "SELECT jid FROM leases", {}, [&](sqlite3_stmt* st) { used.insert(sqlite3_column_int64(st, 0)); });
  for (size_t a = 0; a < inv_.size(); ++a)
    for (int c = 0; c < inv_[a].contexts; ++c)
      if (owner_[a][static_cast<size_t>(c)] == -1) {
        const auto table = read_table(inv_[a].layout, io(a).read);
        for (const auto& s : table) used.insert(s.second.jid);
        break;
      }
  int64_t jid = 1;
  while (used.count(jid)) ++jid;
  if (jid > 0xFFFF) throw Bad("no free JID");
  return jid;
}

std::vector<Allocator::Placement> Allocator::place(const std::vector<Candidate>& cand, int trees) const {
  // Placement: each tree on the candidate with the fewest contexts in use (counting the trees
  // of this job placed so far), ties by inventory order.
  std::vector<int> load(inv_.size(), 0), idle(inv_.size(), 0);
  for (size_t a = 0; a < inv_.size(); ++a)
    for (int64_t o : owner_[a]) (o != 0 ? load[a] : idle[a])++;
  std::vector<Placement> placed;
  for (int t = 0; t < trees; ++t) {
    size_t best = cand.size();
    for (size_t i = 0; i < cand.size(); ++i) {
      const size_t a = cand[i].first;
      if (idle[a] == 0) continue;
      if (best == cand.size() || load[a] < load[cand[best].first]) best = i;
    }
    if (best == cand.size()) throw Bad("no idle context for tree " + std::to_string(t) + " on the given accelerators");
    const size_t a = cand[best].first;
    int slot = -1;
    for (int c = 0; c < inv_[a].contexts && slot < 0; ++c) {
      if (owner_[a][static_cast<size_t>(c)] != 0) continue;
      bool taken = false;
      for (const Placement& p : placed) taken |= cand[p.cand].first == a && p.slot == c;
      if (!taken) slot = c;
    }
    placed.push_back({best, slot});
    ++load[a];
    --idle[a];
  }
  return placed;
}

json Allocator::acquire(const json& req) {
  const int workers = static_cast<int>(get_int(req, "workers", 1, 256));
  const int trees = static_cast<int>(get_int(req, "trees", 1, 256));
  const int first_tid = static_cast<int>(get_int(req, "first_tid", 0, 255, 0));
  const uint32_t timeout = static_cast<uint32_t>(get_int(req, "timeout_cycles", 0, 0xFFFFFFFFll, 0));
  const std::vector<Candidate> cand = candidates(req, workers, trees, first_tid);
  const int64_t jid = free_jid();
  const std::vector<Placement> placed = place(cand, trees);
  // Idle means disabled in the registers too: check before writing anything.
  for (const Placement& p : placed) {
    const size_t a = cand[p.cand].first;
    if (io(a).read(inv_[a].layout.c(p.slot, "CTX_STATUS")) & 1u) {
      owner_[a][static_cast<size_t>(p.slot)] = -1;
      foreign_.push_back(inv_[a].name + ":" + std::to_string(p.slot));
      throw Bad("context " + std::to_string(p.slot) + " of " + inv_[a].name + " is enabled by someone else; retry");
    }
  }
  exec("BEGIN");  // handle_json's expire() has ended any transaction a failed rollback left open
  int64_t id = 0;
  try {
    return grant(cand, placed, jid, trees, first_tid, timeout, id);
  } catch (...) {
    abandon(id);
    throw;
  }
}

void Allocator::abandon(int64_t id) {
  // A grant that failed anywhere between BEGIN and COMMIT (registers, SQL): nothing of it stays,
  // in the database or on the boards, and the next request starts a transaction of its own.
  // A rollback that fails leaves the transaction open: the next request or expiry ends it first.
  if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  if (id <= 0) return;
  try {
    reclaim(id);
  } catch (const std::exception& x) {
    forget(id, std::string("undoing failed grant ") + std::to_string(id) + ": " + x.what());
  }
}

json Allocator::grant(const std::vector<Candidate>& cand, const std::vector<Placement>& placed, int64_t jid, int trees,
                      int first_tid, uint32_t timeout, int64_t& id) {
  // Lease ids are never handed out twice (a client renewing an ended lease must not renew a new
  // one): the next one is above the highest ever granted (meta last_lease) and every live one.
  query(db_,
        "SELECT MAX(COALESCE((SELECT value FROM meta WHERE key = 'last_lease'), 0),"
        " COALESCE((SELECT MAX(id) FROM leases), 0))",
        {}, [&](sqlite3_stmt* st) { id = sqlite3_column_int64(st, 0) + 1; });
  // Expiry is set at the grant, below: programming a board over management can take a while.
  query(db_, "INSERT INTO leases(id, jid, expires, reply) VALUES(?, ?, ?, '')", {id, jid, now_() + lease_ms_},
        [](sqlite3_stmt*) {});
  query(db_, "INSERT OR REPLACE INTO meta(key, value) VALUES('last_lease', ?)", {id}, [](sqlite3_stmt*) {});
  json out{{"ok", true}, {"lease", id}, {"jid", jid}, {"lease_ms", lease_ms_}};
  json jt = json::array();
  for (int t = 0; t < trees; ++t) {
    const Placement& p = placed[static_cast<size_t>(t)];
    const size_t a = cand[p.cand].first;
    const int tid = first_tid + t;
    wire::CtxEntry e;
    e.jid = static_cast<uint16_t>(jid);
    e.tid = static_cast<uint8_t>(tid);
    e.members = cand[p.cand].second;
    std::sort(e.members.begin(), e.members.end());
    e.multicast = true;
    e.group_mac = wire::Mac{0x01,
                            0x00,
                            0x5e,
                            static_cast<uint8_t>((jid >> 8) & 0x7F),
                            static_cast<uint8_t>(jid),
                            static_cast<uint8_t>(tid)};
    e.group_ip = 0xEF000000u | (static_cast<uint32_t>(jid) << 8) | static_cast<uint32_t>(tid);
    e.timeout_cycles = timeout;
    ProgramPlan plan;
    plan.program.emplace_back(p.slot, e);
    owner_[a][static_cast<size_t>(p.slot)] = id;  // before writing: a failure reclaims what was written
    uint32_t st = 0;
    try {
      for (const RegWrite& w : plan_writes(inv_[a].layout, plan)) io(a).write(w.addr, w.value);
      st = io(a).read(inv_[a].layout.c(p.slot, "CTX_STATUS"));
    } catch (const std::exception& x) {
      throw Bad("accelerator " + inv_[a].name + ": " + x.what() + "; nothing granted");
    }
    if (!(st & 1u)) {
      throw Bad("enable of context " + std::to_string(p.slot) + " on " + inv_[a].name + " refused (status 0x" + [&] {
        char b[16];
        std::snprintf(b, sizeof b, "%x", st);
        return std::string(b);
      }() + ")");
    }
    query(db_, "INSERT INTO contexts(accel, idx, lease, jid, tid) VALUES(" + sql_text(inv_[a].name) + ", ?, ?, ?, ?)",
          {p.slot, id, jid, tid}, [](sqlite3_stmt*) {});
    json ranks = json::array();
    for (size_t r = 0; r < cand[p.cand].second.size(); ++r) {
      const int port = cand[p.cand].second[r];
      json rk{{"rank", r}, {"port", port}};
      auto s = inv_[a].port_server.find(port);
      if (s != inv_[a].port_server.end()) rk["server"] = s->second;
      ranks.push_back(rk);
    }
    jt.push_back({{"tid", tid},
                  {"accelerator", inv_[a].name},
                  {"context", p.slot},
                  {"first_vid", first_vid_[a][static_cast<size_t>(p.slot)]},
                  {"agg_port", inv_[a].agg_port},
                  {"agg_ip", inv_[a].agg_ip},
                  {"group_mac", wire::mac_to_string(e.group_mac)},
                  {"group_ip", wire::ipv4_to_string(e.group_ip)},
                  {"members", e.members},
                  {"ranks", ranks}});
  }
  out["trees"] = jt;
  // The lease runs from its grant, once every context is written and read back enabled.
  const int64_t expires = now_() + lease_ms_;
  out["expires_ms"] = expires;
  query(db_, "UPDATE leases SET expires = ?, reply = " + sql_text(out.dump()) + " WHERE id = ?", {expires, id},
        [](sqlite3_stmt*) {});
  exec("COMMIT");
  return out;
}

json Allocator::renew(const json& req) {
  const int64_t id = get_int(req, "lease", 1, INT64_MAX);
  bool found = false;
  query(db_, "SELECT id FROM leases WHERE id = ?", {id}, [&](sqlite3_stmt*) { found = true; });
  if (!found) throw Bad("lease " + std::to_string(id) + " has ended (released or expired)");
  const int64_t expires = now_() + lease_ms_;
  query(db_, "UPDATE leases SET expires = ? WHERE id = ?", {expires, id}, [](sqlite3_stmt*) {});
  return {{"ok", true}, {"lease", id}, {"expires_ms", expires}};
}

json Allocator::release(const json& req) {
  const int64_t id = get_int(req, "lease", 1, INT64_MAX);
  bool found = false;
  query(db_, "SELECT id FROM leases WHERE id = ?", {id}, [&](sqlite3_stmt*) { found = true; });
  if (!found) throw Bad("lease " + std::to_string(id) + " has ended (released or expired)");
  reclaim(id);
  return {{"ok", true}, {"lease", id}};
}

json Allocator::status() {
  json acc = json::array();
  for (size_t a = 0; a < inv_.size(); ++a) {
    int used = 0, foreign = 0;
    json ctx = json::array();
    for (int c = 0; c < inv_[a].contexts; ++c) {
      const int64_t o = owner_[a][static_cast<size_t>(c)];
      used += o > 0;
      foreign += o < 0;
      ctx.push_back(o > 0 ? json(o) : o < 0 ? json("foreign") : json(nullptr));
    }
    acc.push_back({{"name", inv_[a].name},
                   {"ports", inv_[a].ports},
                   {"contexts", inv_[a].contexts},
                   {"in_use", used},
                   {"foreign", foreign},
                   {"free", inv_[a].contexts - used - foreign},
                   {"owner", ctx}});
  }
  json leases = json::array();
  query(db_, "SELECT id, jid, expires, reply FROM leases ORDER BY id", {}, [&](sqlite3_stmt* st) {
    json r = json::parse(col(st, 3), nullptr, false);
    leases.push_back({{"lease", sqlite3_column_int64(st, 0)},
                      {"jid", sqlite3_column_int64(st, 1)},
                      {"expires_ms", sqlite3_column_int64(st, 2)},
                      {"trees", r.is_object() && r.contains("trees") ? r["trees"] : json::array()}});
  });
  return {{"ok", true}, {"accelerators", acc}, {"leases", leases}};
}

// ---------------------------------------------------------------- AllocatorServer

namespace {
void nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }
}  // namespace

AllocatorServer::AllocatorServer(Allocator& a, ServerOpts o) : a_(a), o_(std::move(o)) {
  if (!o_.socket.empty()) {
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (o_.socket.size() >= sizeof sa.sun_path) throw std::runtime_error("--socket: path too long");
    std::strcpy(sa.sun_path, o_.socket.c_str());
    unix_ = Fd(socket(AF_UNIX, SOCK_STREAM, 0));
    claim_socket_path(o_.socket, "--socket");  // never what is not a stale socket
    if (bind(unix_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || listen(unix_.get(), 16) != 0)
      throw std::runtime_error("cannot listen on " + o_.socket + ": " + std::strerror(errno));
    nonblock(unix_.get());
  }
  if (o_.tcp_port >= 0) {
    if (o_.token.empty()) throw std::runtime_error("--tcp needs a token (--token-file)");
    tcp_ = Fd(socket(AF_INET, SOCK_STREAM, 0));
    int one = 1;
    setsockopt(tcp_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(static_cast<uint16_t>(o_.tcp_port));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(tcp_.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || listen(tcp_.get(), 16) != 0)
      throw std::runtime_error("cannot listen on TCP port " + std::to_string(o_.tcp_port) + ": " +
                               std::strerror(errno));
    socklen_t len = sizeof sa;
    getsockname(tcp_.get(), reinterpret_cast<sockaddr*>(&sa), &len);
    tcp_port_ = ntohs(sa.sin_port);
    nonblock(tcp_.get());
  }
}

AllocatorServer::~AllocatorServer() { release_socket_path(o_.socket); }

void AllocatorServer::accept_on(int lfd, bool tcp) {
  for (;;) {
    Fd c(accept(lfd, nullptr, nullptr));
    if (c.get() < 0) return;
    if (static_cast<int>(conns_.size()) >= o_.max_clients) {
      const std::string m = err("too many clients").dump() + "\n";
      (void)!::send(c.get(), m.data(), m.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      continue;  // closed
    }
    nonblock(c.get());
    conns_.push_back({std::move(c), tcp, "", "", mono_ms()});
  }
}

bool AllocatorServer::serve(Conn& c) {
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, 0);
    if (n == 0) return false;
    if (n < 0) break;
    c.in.append(buf, static_cast<size_t>(n));
  }
  size_t nl;
  while ((nl = c.in.find('\n')) != std::string::npos) {
    std::string line = c.in.substr(0, nl);
    c.in.erase(0, nl + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    c.last = mono_ms();
    if (line.size() > o_.max_line) {
      c.out += err("request line longer than " + std::to_string(o_.max_line) + " bytes").dump() + "\n";
      c.in.clear();
      return false;
    }
    std::string reply;
    if (c.tcp) {
      json req = json::parse(line, nullptr, false);
      if (req.is_discarded())
        reply = err("request is not JSON").dump();
      else if (!req.is_object() || !req.contains("token") || req["token"] != o_.token)
        reply = err("bad or missing token").dump();
      else
        reply = a_.handle_json(req).dump();
    } else {
      reply = a_.handle(line);
    }
    c.out += reply + "\n";
  }
  if (c.in.size() > o_.max_line) {
    c.out += err("request line longer than " + std::to_string(o_.max_line) + " bytes").dump() + "\n";
    return false;
  }
  return true;
}

void AllocatorServer::poll_once(int timeout_ms) {
  std::vector<pollfd> p;
  if (unix_.get() >= 0) p.push_back({unix_.get(), POLLIN, 0});
  if (tcp_.get() >= 0) p.push_back({tcp_.get(), POLLIN, 0});
  const size_t base = p.size();
  for (const Conn& c : conns_) p.push_back({c.fd.get(), static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
  ::poll(p.data(), p.size(), std::min(timeout_ms, 100));
  std::vector<bool> keep(conns_.size(), true);
  const int64_t now = mono_ms();
  for (size_t i = 0; i < conns_.size(); ++i) {
    Conn& c = conns_[i];
    const short re = p[base + i].revents;
    if (re & (POLLIN | POLLHUP | POLLERR)) keep[i] = serve(c);
    if (!c.out.empty()) {
      const ssize_t n = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0)
        c.out.erase(0, static_cast<size_t>(n));
      else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
        keep[i] = false;
    }
    if (now - c.last > o_.idle_ms) keep[i] = false;  // never wrote a whole request: bounded
  }
  size_t j = 0;
  for (size_t i = 0; i < conns_.size(); ++i)
    if (keep[i]) conns_[j++] = std::move(conns_[i]);
  conns_.resize(j);
  for (size_t k = 0; k < base; ++k)
    if (p[k].revents & POLLIN) accept_on(p[k].fd, p[k].fd == tcp_.get());
  try {
    a_.expire();
    expire_error_.clear();
  } catch (const std::exception& x) {
    // The state file cannot be read: the service goes on serving (requests say why); one line
    // per distinct error, not one per poll.
    if (x.what() != expire_error_) std::fprintf(stderr, "panama-host allocator: expiry check failed: %s\n", x.what());
    expire_error_ = x.what();
  }
}

}  // namespace panama::host
