// `panama-host allocator` (docs/allocator.md): the one owner of the accelerators' contexts. Jobs
// acquire leases over JSON lines (a Unix socket, optionally loopback TCP with a token); a lease is
// a JID and one context per tree, programmed on idle contexts only (enable last) and reclaimed
// (disable first, then cleared) on release or when its heartbeats stop. State lives in SQLite.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller.h"

struct sqlite3;

namespace panama::host {

// One accelerator of the inventory.
struct AccelSpec {
  std::string name, design, control, target, key;  // control: a stand-in's socket; target/key: a board
  std::map<int, std::string> port_server;          // optional: which server sits on a port
  RegLayout layout;                                // from design/regmap.json
  int ports = 0, contexts = 0;                     // from design/config.json
  int agg_port = wire::kDefaultAggPort;            // the UDP port the workers send to
  std::string agg_ip;                              // optional: passed on to the job
  int mgmt_timeout_ms = 300;                       // a board: the wait for each management response
};

// Inventory JSON: {"accelerators": [{"name", "design", "control" | "target"+"key",
// "ports": {"0": "server0", ...}, "agg_port", "agg_ip"}]}. Throws std::runtime_error.
std::vector<AccelSpec> load_inventory(const std::string& path);

// How the allocator reaches an accelerator's registers.
struct RegIo {
  std::function<uint32_t(uint32_t)> read;
  std::function<void(uint32_t, uint32_t)> write;
};
using RegIoFactory = std::function<RegIo(const AccelSpec&)>;
RegIoFactory default_reg_io();  // ControlClient on "control"; boards are not reached yet

class Allocator {
 public:
  // now_ms: wall-clock milliseconds (leases outlive a restart). Opens/creates the state file,
  // reloads it and reconciles with the registers (reclaims expired leases).
  Allocator(std::vector<AccelSpec> inv, const std::string& state, RegIoFactory io, int64_t lease_ms,
            std::function<int64_t()> now_ms);
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // One request line -> one reply line (no newline). Never throws.
  std::string handle(const std::string& line);
  nlohmann::json handle_json(const nlohmann::json& req);
  // Reclaims every lease past its expiry; returns how many.
  int expire();
  // What reconcile found at start: contexts enabled on an accelerator that no lease owns (left
  // alone and never granted).
  const std::vector<std::string>& foreign() const { return foreign_; }

 private:
  // A job's ranks on one accelerator (its index) and where each tree went (a context of it).
  using Candidate = std::pair<size_t, std::vector<int>>;
  struct Placement {
    size_t cand;
    int slot;
  };
  nlohmann::json acquire(const nlohmann::json& req);
  // acquire's part inside its transaction; sets id once the lease row exists.
  nlohmann::json grant(const std::vector<Candidate>& cand, const std::vector<Placement>& placed, int64_t jid, int trees,
                       int first_tid, uint32_t timeout, int64_t& id);
  void abandon(int64_t id);      // rollback and reclaim after a failed grant
  void end_stale_transaction();  // rolls back one a failed rollback left open
  std::vector<Candidate> candidates(const nlohmann::json& req, int workers, int trees, int first_tid) const;
  int64_t free_jid();
  std::vector<Placement> place(const std::vector<Candidate>& cand, int trees) const;
  nlohmann::json renew(const nlohmann::json& req);
  nlohmann::json release(const nlohmann::json& req);
  nlohmann::json status();
  void reclaim(int64_t lease);
  void hold_others(int64_t ms, int64_t except);  // every lease but except ends ms later
  void reconcile();
  RegIo& io(size_t a);
  void exec(const std::string& sql);
  // Reads context c's expected VID (disabled) and keeps, in memory and in the state file, where
  // its next grant starts.
  void note_leftovers(size_t a, int c);
  void read_leftovers(size_t a, int c);   // the memory half of note_leftovers
  void store_first_vid(size_t a, int c);  // the state file's half
  // Ends a lease whose reclaim failed: its contexts not cleared are marked unknown (-1), its rows
  // deleted where the state file allows; one line on stderr saying why.
  void forget(int64_t lease, const std::string& why);
  void drop_rows(int64_t lease);  // the lease's rows in the state file (contexts, then the lease)

  std::vector<AccelSpec> inv_;
  RegIoFactory factory_;
  std::map<size_t, RegIo> io_;
  int64_t lease_ms_;
  std::function<int64_t()> now_;
  sqlite3* db_ = nullptr;
  // owner[a][c]: lease id holding context c of accelerator a; 0 idle; -1 foreign (enabled, unknown)
  std::vector<std::vector<int64_t>> owner_;
  // first_vid[a][c]: where the next grant of context c starts its VIDs (docs/allocator.md
  // "Reclaim and queued contributions"): above what a reclaimed lease may have left queued on it.
  // Kept in the state file (table vids) and reconciled with the registers on restart.
  std::vector<std::vector<uint32_t>> first_vid_;
  std::vector<std::string> foreign_;
};

// The service: poll()-based, non-blocking, one thread.
struct ServerOpts {
  std::string socket;  // Unix socket path
  int tcp_port = -1;   // >= 0: also listen on 127.0.0.1:PORT (0: any free port; see tcp_port())
  std::string token;   // TCP requests must carry "token" equal to this
  size_t max_line = 65536;
  int idle_ms = 5000;  // a connection with no complete request for this long is closed
  int max_clients = 64;
};

class AllocatorServer {
 public:
  AllocatorServer(Allocator& a, ServerOpts o);
  ~AllocatorServer();
  // Serves for at most timeout_ms (expiry included); returns after one poll round.
  void poll_once(int timeout_ms);
  int tcp_port() const { return tcp_port_; }
  size_t clients() const { return conns_.size(); }

 private:
  struct Conn {
    Fd fd;
    bool tcp = false;
    std::string in, out;
    int64_t last = 0;
  };
  void accept_on(int lfd, bool tcp);
  bool serve(Conn& c);  // false: close it
  Allocator& a_;
  ServerOpts o_;
  Fd unix_, tcp_;
  int tcp_port_ = -1;
  std::string expire_error_;  // the last expiry failure reported (one line per distinct error)
  std::vector<Conn> conns_;
};

}  // namespace panama::host
