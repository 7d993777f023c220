#include "controller.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/stat.h>

#include "parse_num.h"

namespace panama::host {

uint32_t RegLayout::g(const std::string& name) const {
  auto it = global.find(name);
  if (it == global.end()) throw std::runtime_error("regmap.json has no global register " + name);
  return it->second;
}

uint32_t RegLayout::c(int index, const std::string& name) const {
  auto it = ctx.find(name);
  if (it == ctx.end()) throw std::runtime_error("regmap.json has no context register " + name);
  if (index < 0 || index >= contexts)
    throw std::runtime_error("context index " + std::to_string(index) + " out of range (the design has " +
                             std::to_string(contexts) + ")");
  return ctx_base + static_cast<uint32_t>(index) * ctx_stride + it->second;
}

namespace {

// regmap.json's numbers, strictly: a JSON integer in [lo, hi] (not 2.5, not -1 for an address).
int64_t rm_int(const nlohmann::json& v, const std::string& what, int64_t lo, int64_t hi) {
  const bool ok =
      (v.is_number_unsigned() && v.get<uint64_t>() <= static_cast<uint64_t>(hi) &&
       static_cast<int64_t>(v.get<uint64_t>()) >= lo) ||
      (v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() >= lo && v.get<int64_t>() <= hi);
  if (!ok)
    throw std::runtime_error(what + " must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) +
                             ", got " + v.dump());
  return v.is_number_unsigned() ? static_cast<int64_t>(v.get<uint64_t>()) : v.get<int64_t>();
}
uint32_t rm_u32(const nlohmann::json& v, const std::string& what) {
  return static_cast<uint32_t>(rm_int(v, what, 0, 0xFFFFFFFFll));
}
std::string rm_str(const nlohmann::json& v, const std::string& what) {
  if (!v.is_string()) throw std::runtime_error(what + " must be a string, got " + v.dump());
  return v.get<std::string>();
}
const nlohmann::json& rm_array(const nlohmann::json& v, const std::string& what) {
  if (!v.is_array()) throw std::runtime_error(what + " must be an array");
  return v;
}

}  // namespace

RegLayout parse_regmap(const std::string& text, const std::string& where) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object()) throw std::runtime_error("not a JSON object");
    RegLayout l;
    // The generator's limits: 2..256 ports, 1..256 contexts, one member word per 32 ports.
    l.ports = static_cast<int>(rm_int(j.at("ports"), "ports", 1, 256));
    l.contexts = static_cast<int>(rm_int(j.at("contexts"), "contexts", 1, 256));
    l.member_words = static_cast<int>(rm_int(j.at("member_words"), "member_words", 1, 8));
    if (l.member_words != (l.ports + 31) / 32)
      throw std::runtime_error("member_words is " + std::to_string(l.member_words) + " but " + std::to_string(l.ports) +
                               " ports need " + std::to_string((l.ports + 31) / 32));
    const auto& cb = j.at("context_block");
    l.ctx_base = rm_u32(cb.at("base"), "context_block.base");
    l.ctx_stride = rm_u32(cb.at("stride"), "context_block.stride");
    for (const auto& r : rm_array(j.at("global"), "global"))
      l.global[rm_str(r.at("name"), "a register's name")] = rm_u32(r.at("offset"), "a register's offset");
    for (const auto& r : rm_array(cb.at("registers"), "context_block.registers"))
      l.ctx[rm_str(r.at("name"), "a register's name")] = rm_u32(r.at("offset"), "a register's offset");
    if (j.contains("port_block")) {
      const auto& pb = j.at("port_block");
      l.port_base = rm_u32(pb.at("base"), "port_block.base");
      l.port_stride = rm_u32(pb.at("stride"), "port_block.stride");
      for (const auto& r : rm_array(pb.at("registers"), "port_block.registers")) {
        std::string n = rm_str(r.at("name"), "a register's name");
        if (n.size() > 8 && n.compare(0, 5, "PORT_") == 0 && n.compare(n.size() - 3, 3, "_LO") == 0) {
          n = n.substr(5, n.size() - 8);
          for (auto& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          l.port_counters.emplace_back(n, rm_u32(r.at("offset"), "a register's offset"));
        }
      }
    }
    for (const auto& r : j.at("global")) {
      const std::string n = rm_str(r.at("name"), "a register's name");
      for (const char* id : {"ID", "VERSION", "PORTS", "CONTEXTS", "BUS_BITS", "MAX_ELEMS", "FORMAT", "BUFFER_BYTES"})
        if (n == id) l.identity.emplace_back(n, rm_u32(r.at("reset"), n + " reset"));
    }
    for (const char* n :
         {"CTX_CTRL", "CTX_STATUS", "CTX_JID", "CTX_TID", "CTX_MODE", "CTX_UPSTREAM_PORT", "CTX_GROUP_MAC_HI",
          "CTX_GROUP_MAC_LO", "CTX_GROUP_IP", "CTX_OWN_MAC_HI", "CTX_OWN_MAC_LO", "CTX_OWN_IP", "CTX_TIMEOUT"})
      if (!l.ctx.count(n)) throw std::runtime_error(std::string("no context register ") + n);
    for (int k = 0; k < l.member_words; ++k)
      if (!l.ctx.count("CTX_MEMBERS" + std::to_string(k)))
        throw std::runtime_error("no context register CTX_MEMBERS" + std::to_string(k));
    if (!l.global.count("AGG_PORT")) throw std::runtime_error("no global register AGG_PORT");
    return l;
  } catch (const std::exception& e) {
    throw std::runtime_error(where + ": not a usable regmap.json (" + e.what() + ")");
  }
}

RegLayout load_regmap(const std::string& path) {
  std::string p = path;
  struct stat st {};
  if (stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) p += "/regmap.json";
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot open " + p);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_regmap(ss.str(), p);
}

std::string check_identity(const RegLayout& l, const std::function<uint32_t(uint32_t)>& read) {
  // ID first: a wrong one means another device (or none) answers, and the rest is noise.
  constexpr uint32_t kPana = 0x50414E41u;
  const uint32_t id = read(l.g("ID"));
  char b[160];
  if (id != kPana) {
    std::snprintf(b, sizeof b, "ID reads 0x%08X, not 0x%08X (\"PANA\"): not a PANAMA accelerator", id, kPana);
    return b;
  }
  for (const auto& [name, want] : l.identity) {
    if (name == "ID") continue;
    const uint32_t got = read(l.g(name));
    if (got != want) {
      std::snprintf(b, sizeof b, "%s reads %u (0x%X), the register map says %u (0x%X)", name.c_str(), got, got, want,
                    want);
      return b;
    }
  }
  return "";
}

nlohmann::ordered_json read_counters(const RegLayout& l, const std::function<uint32_t(uint32_t)>& read) {
  auto r64 = [&](uint32_t lo) {
    const uint64_t a = read(lo);  // latches HI
    return a | (uint64_t{read(lo + 4)} << 32);
  };
  nlohmann::ordered_json j;
  j["ports"] = nlohmann::ordered_json::array();
  for (int p = 0; p < l.ports; ++p) {
    nlohmann::ordered_json o;
    for (const auto& [n, off] : l.port_counters)
      o[n] = r64(l.port_base + static_cast<uint32_t>(p) * l.port_stride + off);
    j["ports"].push_back(o);
  }
  j["contexts"] = nlohmann::ordered_json::array();
  for (int c = 0; c < l.contexts; ++c) {
    const bool en = read(l.c(c, "CTX_STATUS")) & 1u;
    const uint64_t done = r64(l.c(c, "CTX_VECTORS_COMPLETED_LO"));
    const uint64_t drop = r64(l.c(c, "CTX_VECTORS_DROPPED_LO"));
    if (!en && done == 0 && drop == 0) continue;
    j["contexts"].push_back({{"index", c},
                             {"jid", read(l.c(c, "CTX_JID"))},
                             {"tid", read(l.c(c, "CTX_TID"))},
                             {"enabled", en},
                             {"vectors_completed", done},
                             {"vectors_dropped", drop},
                             {"expected_vid", read(l.c(c, "CTX_EXPECTED_VID"))}});
  }
  j["agg_tx_frames"] = r64(l.g("AGG_TX_FRAMES_LO"));
  return j;
}

std::string counters_table(const nlohmann::ordered_json& j) {
  std::ostringstream os;
  const auto& ports = j.at("ports");
  if (!ports.empty()) {
    os << "port";
    for (auto it = ports[0].begin(); it != ports[0].end(); ++it) os << " " << it.key();
    os << "\n";
    for (size_t p = 0; p < ports.size(); ++p) {
      os << p;
      for (auto it = ports[p].begin(); it != ports[p].end(); ++it) os << " " << it.value().dump();
      os << "\n";
    }
  }
  os << "context jid tid enabled vectors_completed vectors_dropped expected_vid\n";
  for (const auto& c : j.at("contexts"))
    os << c.value("index", -1) << " " << c.at("jid").dump() << " " << c.at("tid").dump() << " "
       << (c.value("enabled", true) ? 1 : 0) << " " << c.at("vectors_completed").dump() << " "
       << c.at("vectors_dropped").dump() << " " << c.at("expected_vid").dump() << "\n";
  os << "agg_tx_frames " << j.at("agg_tx_frames").dump() << "\n";
  return os.str();
}

namespace {

uint32_t mac_hi(const wire::Mac& m) { return (uint32_t{m[0]} << 8) | m[1]; }
uint32_t mac_lo(const wire::Mac& m) {
  return (uint32_t{m[2]} << 24) | (uint32_t{m[3]} << 16) | (uint32_t{m[4]} << 8) | m[5];
}

void check_slot(const RegLayout& l, const CtxSlot& s) {
  const auto& e = s.second;
  const std::string where = "context " + std::to_string(s.first) + ": ";
  if (s.first < 0 || s.first >= l.contexts)
    throw std::runtime_error(where + "index out of range (the design has " + std::to_string(l.contexts) + ")");
  if (e.members.empty()) throw std::runtime_error(where + "no member ports");
  for (int p : e.members)
    if (p < 0 || p >= l.ports)
      throw std::runtime_error(where + "member port " + std::to_string(p) +
                               " out of range: the design has PORTS = " + std::to_string(l.ports));
  if (!e.multicast) {
    if (e.upstream_port < 0 || e.upstream_port >= l.ports)
      throw std::runtime_error(where + "upstream port " + std::to_string(e.upstream_port) +
                               " out of range: the design has PORTS = " + std::to_string(l.ports));
    for (int p : e.members)
      if (p == e.upstream_port) throw std::runtime_error(where + "the upstream port is a member");
  }
}

}  // namespace

std::vector<RegWrite> plan_writes(const RegLayout& l, const ProgramPlan& p) {
  std::vector<RegWrite> w;
  auto put = [&](uint32_t a, uint32_t v, std::string c) { w.push_back({a, v, std::move(c)}); };
  for (const auto& s : p.program) check_slot(l, s);
  for (size_t i = 0; i < p.program.size(); ++i)
    for (size_t k = i + 1; k < p.program.size(); ++k) {
      if (p.program[i].first == p.program[k].first)
        throw std::runtime_error("context " + std::to_string(p.program[i].first) + " given twice");
      if (p.program[i].second.jid == p.program[k].second.jid && p.program[i].second.tid == p.program[k].second.tid)
        throw std::runtime_error("(JID " + std::to_string(p.program[i].second.jid) + ", TID " +
                                 std::to_string(p.program[i].second.tid) + ") given twice");
    }
  if (p.whole_table) {
    for (int c = 0; c < l.contexts; ++c) put(l.c(c, "CTX_CTRL"), 0, "ctx " + std::to_string(c) + " disable");
  } else {
    for (int c : p.disable) put(l.c(c, "CTX_CTRL"), 0, "ctx " + std::to_string(c) + " disable");
  }
  if (p.agg_port >= 0) put(l.g("AGG_PORT"), static_cast<uint32_t>(p.agg_port), "AGG_PORT (all contexts disabled)");
  // A whole table leaves the unused slots as reset left them (fields 0), so that the register
  // state equals CTX.json loaded after a reset whatever was programmed before.
  std::vector<CtxSlot> slots = p.program;
  std::vector<bool> used(static_cast<size_t>(l.contexts), false);
  for (const auto& s : p.program) used[static_cast<size_t>(s.first)] = true;
  std::vector<int> blank;
  if (p.whole_table)
    for (int c = 0; c < l.contexts; ++c)
      if (!used[static_cast<size_t>(c)]) blank.push_back(c);
  for (int c : blank) {
    const std::string n = "ctx " + std::to_string(c) + " (unused) ";
    for (const char* r : {"CTX_JID", "CTX_TID", "CTX_MODE", "CTX_UPSTREAM_PORT", "CTX_GROUP_MAC_HI", "CTX_GROUP_MAC_LO",
                          "CTX_GROUP_IP", "CTX_OWN_MAC_HI", "CTX_OWN_MAC_LO", "CTX_OWN_IP", "CTX_TIMEOUT"})
      put(l.c(c, r), 0, n + r + " = 0");
    for (int k = 0; k < l.member_words; ++k) put(l.c(c, "CTX_MEMBERS" + std::to_string(k)), 0, n + "no members");
  }
  for (const auto& [c, e] : slots) {
    const std::string n = "ctx " + std::to_string(c) + " ";
    if (!p.whole_table) put(l.c(c, "CTX_CTRL"), 0, n + "disable (fields are writable only while disabled)");
    put(l.c(c, "CTX_JID"), e.jid, n + "JID " + std::to_string(e.jid));
    put(l.c(c, "CTX_TID"), e.tid, n + "TID " + std::to_string(e.tid));
    put(l.c(c, "CTX_MODE"), e.multicast ? 0 : 1, n + (e.multicast ? "mode multicast" : "mode upstream"));
    std::vector<uint32_t> words(static_cast<size_t>(l.member_words), 0);
    std::string ms;
    for (int q : e.members) {
      words[static_cast<size_t>(q / 32)] |= 1u << (q % 32);
      ms += (ms.empty() ? "" : ",") + std::to_string(q);
    }
    for (int k = 0; k < l.member_words; ++k)
      put(l.c(c, "CTX_MEMBERS" + std::to_string(k)), words[static_cast<size_t>(k)],
          n + "members word " + std::to_string(k) + " (ports " + ms + ")");
    const bool up = !e.multicast;
    put(l.c(c, "CTX_UPSTREAM_PORT"), up ? static_cast<uint32_t>(e.upstream_port) : 0,
        n + (up ? "upstream port " + std::to_string(e.upstream_port) : "upstream port (unused)"));
    const wire::Mac gm = up ? wire::Mac{} : e.group_mac;
    put(l.c(c, "CTX_GROUP_MAC_HI"), mac_hi(gm), n + "group MAC " + (up ? "(unused)" : wire::mac_to_string(gm)));
    put(l.c(c, "CTX_GROUP_MAC_LO"), mac_lo(gm), n + "group MAC low");
    put(l.c(c, "CTX_GROUP_IP"), up ? 0 : e.group_ip,
        n + "group IP " + (up ? "(unused)" : wire::ipv4_to_string(e.group_ip)));
    const wire::Mac om = up ? e.src_mac : wire::Mac{};
    put(l.c(c, "CTX_OWN_MAC_HI"), mac_hi(om), n + "own MAC " + (up ? wire::mac_to_string(om) : "(unused)"));
    put(l.c(c, "CTX_OWN_MAC_LO"), mac_lo(om), n + "own MAC low");
    put(l.c(c, "CTX_OWN_IP"), up ? e.src_ip : 0, n + "own IP " + (up ? wire::ipv4_to_string(e.src_ip) : "(unused)"));
    put(l.c(c, "CTX_TIMEOUT"), e.timeout_cycles, n + "timeout " + std::to_string(e.timeout_cycles) + " cycles");
    if (p.enable) put(l.c(c, "CTX_CTRL"), 1, n + "enable (expected VID := 0)");
  }
  return w;
}

std::string format_writes(const std::vector<RegWrite>& w) {
  std::string s;
  char b[64];
  for (const auto& x : w) {
    std::snprintf(b, sizeof b, "0x%08X 0x%08X", x.addr, x.value);
    s += b;
    if (!x.comment.empty()) s += "  # " + x.comment;
    s += "\n";
  }
  return s;
}

static uint32_t parse_u32(const std::string& t, const std::string& line) {
  const auto v = parse_unsigned(t, 0, 0xFFFFFFFFull);
  if (!v) throw std::runtime_error("bad number '" + t + "' in '" + line + "'");
  return static_cast<uint32_t>(*v);
}

std::vector<RegWrite> parse_writes(const std::string& text) {
  std::vector<RegWrite> v;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::string body = line, comment;
    const size_t h = line.find('#');
    if (h != std::string::npos) {
      body = line.substr(0, h);
      comment = line.substr(h + 1);
      while (!comment.empty() && comment[0] == ' ') comment.erase(0, 1);
    }
    std::istringstream ls(body);
    std::string a, b, extra;
    if (!(ls >> a)) continue;
    if (a == "write" && !(ls >> a)) throw std::runtime_error("bad register write '" + line + "'");
    if (!(ls >> b) || (ls >> extra)) throw std::runtime_error("bad register write '" + line + "' (ADDR VALUE)");
    v.push_back({parse_u32(a, line), parse_u32(b, line), comment});
  }
  return v;
}

nlohmann::json table_json(const std::vector<CtxSlot>& t, int agg_port) {
  wire::CtxFile f;
  f.agg_port = static_cast<uint16_t>(agg_port);
  for (const auto& s : t) f.contexts.push_back(s.second);
  nlohmann::json j = wire::to_json(f);
  for (size_t i = 0; i < t.size(); ++i) j["contexts"][i]["index"] = t[i].first;
  return j;
}

// ---------------------------------------------------------------------------------------------

ControlClient::ControlClient(const std::string& path) {
  fd_ = Fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd_.get() < 0) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) throw std::runtime_error("control socket path too long: " + path);
  std::strcpy(a.sun_path, path.c_str());
  if (connect(fd_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    const std::string e = std::strerror(errno);
    throw std::runtime_error("cannot connect to the control socket " + path + ": " + e);
  }
  timeval tv{10, 0};
  setsockopt(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

std::optional<std::string> take_reply(std::string& buf) {
  const size_t nl = buf.find('\n');
  if (nl == std::string::npos) return std::nullopt;
  std::string r = buf.substr(0, nl);
  buf.erase(0, nl + 1);
  if (r.rfind("error", 0) == 0) throw std::runtime_error("stand-in: " + r);
  return r;
}

uint32_t parse_read_reply(const std::string& reply, const std::string& request) { return parse_u32(reply, request); }

std::string ControlClient::request(const std::string& line) {
  std::string l = line + "\n";
  for (size_t off = 0; off < l.size();) {
    const ssize_t n = ::send(fd_.get(), l.data() + off, l.size() - off, MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("control socket: send failed: " + std::string(std::strerror(errno)));
    off += static_cast<size_t>(n);
  }
  for (;;) {
    if (auto r = take_reply(buf_)) return *r;
    char b[65536];
    const ssize_t n = ::recv(fd_.get(), b, sizeof b, 0);
    if (n <= 0) throw std::runtime_error("control socket: no reply to '" + line + "'");
    buf_.append(b, static_cast<size_t>(n));
  }
}

void ControlClient::write(uint32_t addr, uint32_t value) {
  char b[64];
  std::snprintf(b, sizeof b, "write 0x%X 0x%X", addr, value);
  request(b);
}

uint32_t ControlClient::read(uint32_t addr) {
  char b[64];
  std::snprintf(b, sizeof b, "read 0x%X", addr);
  return parse_read_reply(request(b), b);
}

void claim_socket_path(const std::string& path, const std::string& flag) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;
  if (!S_ISSOCK(st.st_mode))
    throw std::runtime_error(flag + ": " + path + " exists and is not a socket; not removing it");
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) throw std::runtime_error(flag + ": path too long: " + path);
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  Fd probe(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (probe.get() >= 0 && connect(probe.get(), reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0)
    throw std::runtime_error(flag + ": a server is already listening on " + path);
  unlink(path.c_str());
}

void release_socket_path(const std::string& path) {
  struct stat st {};
  if (!path.empty() && ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) unlink(path.c_str());
}

ControlServer::ControlServer(const std::string& path) : path_(path) {
  lfd_ = Fd(socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (lfd_.get() < 0) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) throw std::runtime_error("--control: path too long: " + path);
  std::strcpy(a.sun_path, path.c_str());
  claim_socket_path(path, "--control");
  if (bind(lfd_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(lfd_.get(), 4) != 0) {
    const std::string e = std::strerror(errno);
    path_.clear();  // not ours: leave it
    throw std::runtime_error("--control: cannot listen on " + path + ": " + e);
  }
}

ControlServer::~ControlServer() { release_socket_path(path_); }

bool ControlServer::poll_impl(const std::function<std::string(const std::string&)>& h) {
  bool did = false;
  for (int k = 0; k < 4; ++k) {
    const int fd = accept4(lfd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;
    if (conns_.size() >= kMaxConns) {
      static const char busy[] = "error too many control connections\n";
      (void)!::send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      ::close(fd);
      continue;
    }
    conns_.push_back({Fd(fd), {}, {}, false});
  }
  for (size_t i = 0; i < conns_.size();) {
    auto& c = conns_[i];
    bool closed = false;
    char b[16384];
    for (int k = 0; k < 16 && !c.closing; ++k) {
      const ssize_t n = ::recv(c.fd.get(), b, sizeof b, 0);
      if (n > 0) {
        c.in.append(b, static_cast<size_t>(n));
        if (c.in.size() > kMaxLine) break;
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) closed = true;
      break;
    }
    for (size_t nl; !c.closing && (nl = c.in.find('\n')) != std::string::npos;) {
      if (nl > kMaxLine) break;
      const std::string line = c.in.substr(0, nl);
      c.in.erase(0, nl + 1);
      std::string r;
      try {
        r = h(line);
      } catch (const std::exception& e) {
        r = std::string("error ") + e.what();
      }
      c.out += r + "\n";
      did = true;
      if (c.out.size() > kMaxOut) closed = true;  // it does not read its replies
      if (closed) break;
    }
    if (!c.closing && c.in.find('\n') > kMaxLine && c.in.size() > kMaxLine) {
      c.out += "error request line longer than " + std::to_string(kMaxLine) + " bytes\n";
      c.in.clear();
      c.closing = true;
    }
    while (!closed && !c.out.empty()) {
      const ssize_t n = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        c.out.erase(0, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) closed = true;
      break;
    }
    if (c.closing && c.out.empty()) closed = true;
    if (closed) {
      conns_.erase(conns_.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
  return did;
}

}  // namespace panama::host
