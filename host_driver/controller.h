// `panama-host controller` (docs/host.md): programs the accelerator's contexts from a job
// description. The register writes are computed from a generator output's regmap.json (not from
// the C++ RegMap), so the same list drives a real board (offline: a list of address / value /
// comment lines) or a running switch stand-in (live: its control socket, `switch --control`).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ctx.h"
#include "sock.h"

namespace panama::host {

// The part of regmap.json the controller needs.
struct RegLayout {
  int ports = 0, contexts = 0, member_words = 0;
  uint32_t ctx_base = 0, ctx_stride = 0;
  std::map<std::string, uint32_t> global;  // name -> absolute address
  std::map<std::string, uint32_t> ctx;     // name -> offset inside a context block
  uint32_t port_base = 0, port_stride = 0;
  std::vector<std::pair<std::string, uint32_t>> port_counters;  // "rx_frames" -> offset of its _LO word
  // What the design must read back in its identity registers (regmap.json reset values), in the
  // order they are checked.
  std::vector<std::pair<std::string, uint32_t>> identity;
  uint32_t g(const std::string& name) const;
  uint32_t c(int index, const std::string& name) const;
};

// PATH is regmap.json or a generator output directory holding it. Throws std::runtime_error.
RegLayout load_regmap(const std::string& path);
// The same from regmap.json's text; `where` (its path) starts the error line.
RegLayout parse_regmap(const std::string& text, const std::string& where);

struct RegWrite {
  uint32_t addr = 0, value = 0;
  std::string comment;
};

// One context slot to program: index in the context table and its contents.
using CtxSlot = std::pair<int, wire::CtxEntry>;

struct ProgramPlan {
  std::vector<CtxSlot> program;  // slots to (re)program and enable
  std::vector<int> disable;      // slots to disable only
  bool whole_table = false;      // disable every slot first (a board from reset: CTX.json)
  int agg_port = -1;             // >= 0: write AGG_PORT (only effective while all contexts are disabled)
  bool enable = true;            // false: program the fields but leave the slots disabled
};

// The writes, in order: disables, AGG_PORT, then per slot CTX_CTRL=0, every field (unused ones
// 0, so the result does not depend on what was there before), CTX_CTRL=1.
std::vector<RegWrite> plan_writes(const RegLayout& l, const ProgramPlan& p);

// "0x00001008 0x00000007  # ctx 0 CTX_JID = 7" lines; parse_writes reads them back (comments
// and blank lines allowed; a leading "write" word is accepted).
std::string format_writes(const std::vector<RegWrite>& w);
std::vector<RegWrite> parse_writes(const std::string& text);

// The context table as the register file holds it (enabled slots only, with their index), read
// through `read`. Used by the stand-in to follow reprogramming and by `controller --show`.
template <typename Read>
std::vector<CtxSlot> read_table(const RegLayout& l, Read&& read, std::vector<uint32_t>* status = nullptr);

// Reads the design's identity registers (ID, VERSION, PORTS, CONTEXTS, BUS_BITS, MAX_ELEMS,
// FORMAT, BUFFER_BYTES) through `read` and compares them with the register map. Returns "" when
// they match, else one line naming the first difference. Reads only.
std::string check_identity(const RegLayout& l, const std::function<uint32_t(uint32_t)>& read);

// The counters as the registers hold them (reads only; a 64-bit counter is its LO word, which
// latches HI, then HI): {"ports": [{"rx_frames": ..}, ..], "contexts": [{"index", "jid", "tid",
// "enabled", "vectors_completed", "vectors_dropped", "expected_vid"}, ..], "agg_tx_frames"}.
// Contexts: every enabled slot, and every slot with a non-zero counter (a context disabled
// after use keeps its counts).
nlohmann::ordered_json read_counters(const RegLayout& l, const std::function<uint32_t(uint32_t)>& read);
// The same as a text table (one line per port, one per context).
std::string counters_table(const nlohmann::ordered_json& j);

// The control socket's replies (ControlClient): take_reply removes the first whole line from buf
// and returns it (nothing while no line is complete; throws std::runtime_error on an "error ..."
// reply); parse_read_reply is the value of a "read" reply (throws std::runtime_error naming the
// request unless the reply is one number 0..2^32-1).
std::optional<std::string> take_reply(std::string& buf);
uint32_t parse_read_reply(const std::string& reply, const std::string& request);

// A client of the stand-in's control socket (a Unix stream socket): one line per request.
class ControlClient {
 public:
  explicit ControlClient(const std::string& path);
  std::string request(const std::string& line);  // the reply line (throws on "error ..." replies)
  void write(uint32_t addr, uint32_t value);
  uint32_t read(uint32_t addr);

 private:
  Fd fd_;
  std::string buf_;
};

// A Unix socket path a server is about to bind (flag names the option, for the messages): a stale
// socket there is removed; a regular file, or a socket a live server answers on, is an error and
// is left alone. release_socket_path removes the path at exit only if it is still a socket.
void claim_socket_path(const std::string& path, const std::string& flag);
void release_socket_path(const std::string& path);

// Serves the control socket inside the stand-in's loop (non-blocking; poll() from the loop's
// thread). Requests: "write ADDR VALUE [# comment]" -> "ok"; "read ADDR" -> "0xVALUE";
// "contexts" -> the context table as CTX.json-like JSON on one line (enabled slots, with
// "index"); "counters" -> the counters JSON on one line; "ping" -> "ok".
// Safe on a shared machine: it refuses to replace anything at its path but a stale socket (a
// regular file, or a socket a live server answers on, is an error), serves at most kMaxConns
// connections, closes a connection whose request line exceeds kMaxLine bytes (after an error
// reply), and never blocks: replies are queued per connection (at most kMaxOut bytes; a client
// that does not read them is disconnected).
class ControlServer {
 public:
  static constexpr size_t kMaxConns = 16, kMaxLine = 64 * 1024, kMaxOut = 256 * 1024;
  explicit ControlServer(const std::string& path);
  ~ControlServer();  // removes the socket's path
  // Handles what is pending. handler(line) returns the reply; true when a request was handled.
  template <typename Handler>
  bool poll(Handler&& handler);

 private:
  bool poll_impl(const std::function<std::string(const std::string&)>& h);
  std::string path_;
  Fd lfd_;
  struct Conn {
    Fd fd;
    std::string in, out;
    bool closing = false;  // close once `out` is sent
  };
  std::vector<Conn> conns_;
};

template <typename Handler>
bool ControlServer::poll(Handler&& handler) {
  return poll_impl(std::function<std::string(const std::string&)>(std::forward<Handler>(handler)));
}

// Converts the table to CTX.json-like JSON (each entry with "index").
nlohmann::json table_json(const std::vector<CtxSlot>& t, int agg_port);

// --- template implementation

template <typename Read>
std::vector<CtxSlot> read_table(const RegLayout& l, Read&& read, std::vector<uint32_t>* status) {
  std::vector<CtxSlot> t;
  if (status) status->clear();
  for (int c = 0; c < l.contexts; ++c) {
    const uint32_t st = read(l.c(c, "CTX_STATUS"));
    if (status) status->push_back(st);
    if (!(st & 1u)) continue;
    wire::CtxEntry e;
    e.jid = static_cast<uint16_t>(read(l.c(c, "CTX_JID")));
    e.tid = static_cast<uint8_t>(read(l.c(c, "CTX_TID")));
    e.multicast = (read(l.c(c, "CTX_MODE")) & 1u) == 0;
    for (int k = 0; k < l.member_words; ++k) {
      const uint32_t w = read(l.c(c, "CTX_MEMBERS" + std::to_string(k)));
      for (int b = 0; b < 32; ++b)
        if ((w >> b) & 1u) e.members.push_back(32 * k + b);
    }
    auto mac = [&](const char* hi, const char* lo) {
      wire::Mac m{};
      const uint32_t h = read(l.c(c, hi)), w = read(l.c(c, lo));
      m[0] = static_cast<uint8_t>(h >> 8);
      m[1] = static_cast<uint8_t>(h);
      for (int i = 0; i < 4; ++i) m[static_cast<size_t>(2 + i)] = static_cast<uint8_t>(w >> (24 - 8 * i));
      return m;
    };
    if (e.multicast) {
      e.group_mac = mac("CTX_GROUP_MAC_HI", "CTX_GROUP_MAC_LO");
      e.group_ip = read(l.c(c, "CTX_GROUP_IP"));
    } else {
      e.upstream_port = static_cast<int>(read(l.c(c, "CTX_UPSTREAM_PORT")) & 0xFF);
      e.src_mac = mac("CTX_OWN_MAC_HI", "CTX_OWN_MAC_LO");
      e.src_ip = read(l.c(c, "CTX_OWN_IP"));
    }
    e.timeout_cycles = read(l.c(c, "CTX_TIMEOUT"));
    t.emplace_back(c, std::move(e));
  }
  return t;
}

}  // namespace panama::host
