// The register file of the accelerator: an AXI4-Lite slave implementing RegMap (gen/regmap.h)
// exactly as the SystemC model's RegFile does, the per-context configuration outputs the
// datapath reads, and every 64-bit saturating counter of accelerator.md rule 10 (docs/rtl.md,
// "Register file"). Every address, reset value and error bit comes from RegMap / regmap.json, so
// the RTL cannot disagree with the published map; a register this emitter does not know makes it
// throw rather than emit a silently incomplete decoder.
#include "regs_rtl.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <nlohmann/json.hpp>

#include "emit.h"
#include "regmap.h"

namespace panama {

namespace {

std::string dec(int width, long long v) { return std::to_string(width) + "'d" + std::to_string(v); }

// `v` (a `from`-bit expression naming a plain signal) resized to `to` bits: zero-extended, or
// its low bits (the caller guarantees the value fits).
std::string resize(const std::string& v, int from, int to) {
  if (from == to) return v;
  if (from < to) return "{" + dec(to - from, 0) + ", " + v + "}";
  return v + "[" + std::to_string(to - 1) + ":0]";
}

// A zero-extended 32-bit read word of a `width`-bit field.
std::string word(int width, const std::string& v) {
  if (width >= 32) return v;
  return "{" + dec(32 - width, 0) + ", " + v + "}";
}

}  // namespace

int regs_counter_index_completed(const Config& c, int ctx) { return kNumPortCounters * c.in.ports + ctx; }
int regs_counter_index_dropped(const Config& c, int ctx) { return kNumPortCounters * c.in.ports + c.in.contexts + ctx; }
int regs_counter_index_agg_tx(const Config& c) { return kNumPortCounters * c.in.ports + 2 * c.in.contexts; }
int regs_counter_count(const Config& c) { return regs_counter_index_agg_tx(c) + 1; }

namespace {

// One emission of the register file: the derived sizes, then one member function per part of
// the module, called in order by emit_regs.
struct RegsWriter {
  explicit RegsWriter(const Config& cfg);
  void ports();
  void params();
  void axil();
  void write_decode();
  void ctx_state();
  void ctx_writes();
  void field_write_cases();
  void agg_port_reg();
  void counters();
  void read_decode();
  void ctx_read_cases();
  void read_mux();

  const Config& c;
  const RegMap m;
  const int N, C, MW, AW, NCNT, CIW;
  const int CXW;  // context index bits of an address
  const int PXW;  // port index bits of an address
  const std::string mod;
  // Global registers and their reset values, as published in regmap.json.
  const nlohmann::json map_json;
  std::ostringstream v;
};

RegsWriter::RegsWriter(const Config& cfg)
    : c(cfg),
      m(RegMap::from(cfg)),
      N(m.ports),
      C(m.contexts),
      MW(m.member_words),
      AW(clog2(m.size)),
      NCNT(regs_counter_count(cfg)),
      CIW(clog2(NCNT)),
      CXW(AW - 8),
      PXW(AW - 7),
      mod(cfg.module_name("regs")),
      map_json(nlohmann::json::parse(regmap_json(cfg))) {
  // The decoder splits addresses at the block strides: they must be powers of two with the
  // blocks aligned to them (RegMap's layout), or the index arithmetic below is wrong.
  if (m.ctx_stride != 0x100 || m.port_stride != 0x80 || (m.ctx_base % m.ctx_stride) != 0 ||
      (m.port_base % m.port_stride) != 0 || (1u << AW) != m.size)
    throw std::logic_error("emit_regs: register map layout changed (strides, bases or size)");
}

void RegsWriter::ports() {
  v << "module " << mod << " (\n"
    << "  input  wire clk,\n"
    << "  input  wire rst,\n"
    << "  // AXI4-Lite slave (32-bit data, byte addresses; docs/rtl.md \"Register file\"). Every\n"
    << "  // response is OKAY; wstrb and the prot signals are ignored (writes are whole words).\n"
    << axil_slave_ports(std::to_string(AW - 1)) << "  input  wire s_axil_rready,\n"
    << "  // The aggregation UDP destination port (AGG_PORT).\n"
    << "  output wire [15:0] agg_port,\n"
    << "  // Context c's configuration at [c*16 +: 16] (likewise for every width below).\n"
    << "  output wire [" << C - 1 << ":0] ctx_enable,\n"
    << "  // One-cycle pulse with the rising edge of ctx_enable[c]: the datapath sets E := 0.\n"
    << "  output wire [" << C - 1 << ":0] ctx_enable_set,\n"
    << "  output wire [" << C * 16 - 1 << ":0] ctx_jid,\n"
    << "  output wire [" << C * 8 - 1 << ":0] ctx_tid,\n"
    << "  // Member bitmap of context c at [c*N +: N], bit i = port i.\n"
    << "  output wire [" << C * N - 1 << ":0] ctx_members,\n"
    << "  // Mode: 1 upstream, 0 multicast (root).\n"
    << "  output wire [" << C - 1 << ":0] ctx_upstream,\n"
    << "  output wire [" << C * 8 - 1 << ":0] ctx_upstream_port,\n"
    << "  // MACs: byte 0 (first on the wire) in bits [47:40]; IPv4 a.b.c.d = {a, b, c, d}.\n"
    << "  output wire [" << C * 48 - 1 << ":0] ctx_group_mac,\n"
    << "  output wire [" << C * 32 - 1 << ":0] ctx_group_ip,\n"
    << "  output wire [" << C * 48 - 1 << ":0] ctx_own_mac,\n"
    << "  output wire [" << C * 32 - 1 << ":0] ctx_own_ip,\n"
    << "  // Timeout in cycles, 0 = never.\n"
    << "  output wire [" << C * 32 - 1 << ":0] ctx_timeout,\n"
    << "  // The datapath's expected VID of each context, read through CTX_EXPECTED_VID.\n"
    << "  input  wire [" << C * 32 - 1 << ":0] ctx_expected_vid,\n"
    << "  // One-cycle +1 pulses: port p's counter k (regmap.h PortCounter order) at bit p*16+k.\n"
    << "  input  wire [" << N * 16 - 1 << ":0] port_count_inc,\n"
    << "  input  wire [" << C - 1 << ":0] ctx_completed_inc,\n"
    << "  input  wire [" << C - 1 << ":0] ctx_dropped_inc,\n"
    << "  input  wire agg_tx_inc\n"
    << ");\n\n";
}

void RegsWriter::params() {
  std::ostringstream size_hex;
  size_hex << std::hex << m.size;
  v << "  // Ports and contexts (" << MW << " member bitmap word(s) per context).\n"
    << "  localparam N = " << N << ";\n"
    << "  localparam C = " << C << ";\n"
    << "  // Address bits: the map spans 0x" << size_hex.str() << " bytes.\n"
    << "  localparam AW = " << AW << ";\n"
    << "  // Counters, 64 bits each, in one flat array: port p's counter k at p*16+k, then\n"
    << "  // vectors_completed of each context, vectors_dropped of each context, agg_tx_frames.\n"
    << "  localparam NCNT = " << NCNT << ";\n"
    << "  localparam CIW = " << CIW << ";\n"
    << "  localparam [CIW-1:0] CNT_COMPLETED = " << dec(CIW, regs_counter_index_completed(c, 0)) << ";\n"
    << "  localparam [CIW-1:0] CNT_DROPPED = " << dec(CIW, regs_counter_index_dropped(c, 0)) << ";\n"
    << "  localparam [CIW-1:0] CNT_AGG_TX = " << dec(CIW, regs_counter_index_agg_tx(c)) << ";\n"
    << "  // Context blocks [CTX_BASE, CTX_END), 256 bytes each; port blocks [PORT_BASE, PORT_END),\n"
    << "  // 128 bytes each. The ends are AW+1 bits wide: PORT_END may be the map's size.\n"
    << "  localparam [AW-1:0] CTX_BASE = " << hx(AW, m.ctx_base) << ";\n"
    << "  localparam [AW:0] CTX_END = " << hx(AW + 1, m.ctx(C, 0)) << ";\n"
    << "  localparam [AW-1:0] PORT_BASE = " << hx(AW, m.port_base) << ";\n"
    << "  localparam [AW:0] PORT_END = " << hx(AW + 1, m.port_base + static_cast<uint32_t>(N) * m.port_stride) << ";\n";
  v << "  // Global registers (regmap.json \"global\").\n";
  for (const auto& r : map_json.at("global"))
    v << "  localparam [AW-1:0] A_" << r.at("name").get<std::string>() << " = "
      << hx(AW, r.at("offset").get<uint32_t>()) << ";\n";
  v << "  // Context block offsets (regmap.json \"context_block\").\n";
  for (const auto& r : m.context_registers())
    v << "  localparam [7:0] O_" << r.name << " = " << hx(8, r.offset) << ";\n";
  v << "  // CTX_STATUS error bits 12..8, kept as err[4:0]: write while enabled, upstream port out\n"
    << "  // of range, duplicate (JID, TID), upstream port is a member, no members.\n\n";
  auto err_bit = [](uint32_t status_bit) {
    int b = 0;
    while ((1u << b) != status_bit) ++b;
    return b - 8;
  };
  if (err_bit(RegMap::kErrNoMembers) != 0 || err_bit(RegMap::kErrUpstreamMember) != 1 ||
      err_bit(RegMap::kErrDuplicate) != 2 || err_bit(RegMap::kErrUpstreamRange) != 3 ||
      err_bit(RegMap::kErrWriteEnabled) != 4 || RegMap::kStEnabled != 1)
    throw std::logic_error("emit_regs: CTX_STATUS bits moved");
}

void RegsWriter::axil() {
  v << "  // Write channel: the address and the data are each taken into a one-entry holding\n"
    << "  // register as soon as they come (in either order or together); the write is done in the\n"
    << "  // cycle both are held and no response is pending, and the response is held until bready.\n"
    << "  reg aw_full_q;\n"
    << "  reg [AW-1:0] aw_addr_q;\n"
    << "  reg w_full_q;\n"
    << "  reg [31:0] w_data_q;\n"
    << "  reg bvalid_q;\n"
    << "  wire wr_fire = aw_full_q & w_full_q & ~bvalid_q;\n"
    << "  assign s_axil_awready = ~aw_full_q;\n"
    << "  assign s_axil_wready = ~w_full_q;\n"
    << "  assign s_axil_bvalid = bvalid_q;\n"
    << "  assign s_axil_bresp = 2'b00;\n"
    << "  always @(posedge clk) begin\n"
    << "    if (rst) begin\n"
    << "      aw_full_q <= 1'b0;\n"
    << "      w_full_q <= 1'b0;\n"
    << "      bvalid_q <= 1'b0;\n"
    << "    end else begin\n"
    << "      if (wr_fire) begin\n"
    << "        aw_full_q <= 1'b0;\n"
    << "        w_full_q <= 1'b0;\n"
    << "      end else begin\n"
    << "        if (s_axil_awvalid) aw_full_q <= 1'b1;\n"
    << "        if (s_axil_wvalid) w_full_q <= 1'b1;\n"
    << "      end\n"
    << "      if (wr_fire) bvalid_q <= 1'b1;\n"
    << "      else if (s_axil_bready) bvalid_q <= 1'b0;\n"
    << "    end\n"
    << "  end\n"
    << "  // The holding registers need no reset: the full flags qualify them.\n"
    << "  always @(posedge clk) begin\n"
    << "    if (s_axil_awvalid & ~aw_full_q) aw_addr_q <= s_axil_awaddr;\n"
    << "    if (s_axil_wvalid & ~w_full_q) w_data_q <= s_axil_wdata;\n"
    << "  end\n\n";
  v << "  // Read channel: the address is held, the read is done in the cycle after (so the wide\n"
    << "  // read multiplexer starts from a register), and the data is held until rready. A new\n"
    << "  // address may be taken while the previous data waits.\n"
    << "  reg ar_full_q;\n"
    << "  reg [AW-1:0] ar_addr_q;\n"
    << "  reg rvalid_q;\n"
    << "  reg [31:0] rdata_q;\n"
    << "  wire rd_fire = ar_full_q & ~rvalid_q;\n"
    << "  assign s_axil_arready = ~ar_full_q;\n"
    << "  assign s_axil_rvalid = rvalid_q;\n"
    << "  assign s_axil_rdata = rdata_q;\n"
    << "  assign s_axil_rresp = 2'b00;\n"
    << "  always @(posedge clk) begin\n"
    << "    if (rst) begin\n"
    << "      ar_full_q <= 1'b0;\n"
    << "      rvalid_q <= 1'b0;\n"
    << "    end else begin\n"
    << "      if (rd_fire) ar_full_q <= 1'b0;\n"
    << "      else if (s_axil_arvalid) ar_full_q <= 1'b1;\n"
    << "      if (rd_fire) rvalid_q <= 1'b1;\n"
    << "      else if (s_axil_rready) rvalid_q <= 1'b0;\n"
    << "    end\n"
    << "  end\n"
    << "  always @(posedge clk) begin\n"
    << "    if (s_axil_arvalid & ~ar_full_q) ar_addr_q <= s_axil_araddr;\n"
    << "  end\n"
    << "  // Protection and byte strobes carry nothing this slave uses (docs/rtl.md).\n"
    << "  wire unused_axil = ^{s_axil_awprot, s_axil_arprot, s_axil_wstrb};\n\n";
}

void RegsWriter::write_decode() {
  v << "  // Write decode. Addresses are compared in full (byte addresses), so an unaligned address\n"
    << "  // hits no register, as in the model.\n"
    << "  wire wr_in_ctx = aw_addr_q >= CTX_BASE && {1'b0, aw_addr_q} < CTX_END;\n"
    << "  wire [" << CXW - 1 << ":0] wr_ctx = aw_addr_q[AW-1:8] - CTX_BASE[AW-1:8];\n"
    << "  wire [7:0] wr_off = aw_addr_q[7:0];\n"
    << "  wire [" << C - 1 << ":0] wr_ctx_hit;\n"
    << "  wire wr_ctrl = wr_off == O_CTX_CTRL;\n"
    << "  // Writes the model treats as context field writes (refused while enabled): every offset\n"
    << "  // but CTRL, STATUS, EXPECTED_VID and the counter words.\n"
    << "  wire wr_field = !wr_ctrl && wr_off != O_CTX_STATUS && wr_off != O_CTX_EXPECTED_VID &&\n"
    << "                  !(wr_off >= O_CTX_VECTORS_COMPLETED_LO && wr_off <= O_CTX_VECTORS_DROPPED_HI);\n"
    << "  wire wr_agg_port = wr_fire && aw_addr_q == A_AGG_PORT;\n"
    << "  wire wr_clear = wr_fire && aw_addr_q == A_CLEAR_COUNTERS && w_data_q[0];\n\n";
}

void RegsWriter::ctx_state() {
  v << "  // Context configuration, context c's fields at [c*width +: width].\n"
    << "  reg [C-1:0] en_q;\n"
    << "  reg [C-1:0] en_set_q;\n"
    << "  reg [C*5-1:0] err_q;\n"
    << "  reg [C*16-1:0] jid_q;\n"
    << "  reg [C*8-1:0] tid_q;\n"
    << "  reg [C*N-1:0] mem_q;\n"
    << "  reg [C-1:0] up_q;\n"
    << "  reg [C*8-1:0] up_port_q;\n"
    << "  reg [C*48-1:0] gmac_q;\n"
    << "  reg [C*32-1:0] gip_q;\n"
    << "  reg [C*48-1:0] omac_q;\n"
    << "  reg [C*32-1:0] oip_q;\n"
    << "  reg [C*32-1:0] tmo_q;\n"
    << "  assign ctx_enable = en_q;\n"
    << "  assign ctx_enable_set = en_set_q;\n"
    << "  assign ctx_jid = jid_q;\n"
    << "  assign ctx_tid = tid_q;\n"
    << "  assign ctx_members = mem_q;\n"
    << "  assign ctx_upstream = up_q;\n"
    << "  assign ctx_upstream_port = up_port_q;\n"
    << "  assign ctx_group_mac = gmac_q;\n"
    << "  assign ctx_group_ip = gip_q;\n"
    << "  assign ctx_own_mac = omac_q;\n"
    << "  assign ctx_own_ip = oip_q;\n"
    << "  assign ctx_timeout = tmo_q;\n\n";

  v << "  // The enable checks look at the context being written (one multiplexer for all contexts).\n"
    << "  // Each context ANDs its fields with its hit bit; the ORs below combine them.\n"
    << "  wire [C*N-1:0] ws_mem_m;\n"
    << "  wire [C-1:0] ws_up_m;\n"
    << "  wire [C*8-1:0] ws_up_port_m;\n"
    << "  wire [C*16-1:0] ws_jid_m;\n"
    << "  wire [C*8-1:0] ws_tid_m;\n"
    << "  reg [N-1:0] ws_mem;\n"
    << "  reg [7:0] ws_up_port;\n"
    << "  reg [15:0] ws_jid;\n"
    << "  reg [7:0] ws_tid;\n"
    << "  integer i;\n"
    << "  always @* begin\n"
    << "    ws_mem = {N{1'b0}};\n"
    << "    ws_up_port = 8'd0;\n"
    << "    ws_jid = 16'd0;\n"
    << "    ws_tid = 8'd0;\n"
    << "    for (i = 0; i < C; i = i + 1) begin\n"
    << "      ws_mem = ws_mem | ws_mem_m[i*N +: N];\n"
    << "      ws_up_port = ws_up_port | ws_up_port_m[i*8 +: 8];\n"
    << "      ws_jid = ws_jid | ws_jid_m[i*16 +: 16];\n"
    << "      ws_tid = ws_tid | ws_tid_m[i*8 +: 8];\n"
    << "    end\n"
    << "  end\n"
    << "  wire ws_up = |ws_up_m;\n"
    << "  // Another enabled context with the same (JID, TID). The context being enabled is itself\n"
    << "  // disabled, so it never matches itself.\n"
    << "  wire [C-1:0] dup_hit;\n"
    << "  wire up_range = ws_up && {1'b0, ws_up_port} >= " << dec(9, N) << ";\n"
    << "  wire [N-1:0] up_onehot = {{(N-1){1'b0}}, 1'b1} << ws_up_port;\n"
    << "  wire up_member = ws_up && !up_range && |(ws_mem & up_onehot);\n"
    << "  wire [4:0] en_err = {1'b0, up_range, |dup_hit, up_member, ~|ws_mem};\n\n";
}

void RegsWriter::ctx_writes() {
  v << "  // Per context: CTRL writes (enable with the checks, disable, clear the error bits) and\n"
    << "  // field writes, which only a disabled context takes (else ERR_WRITE_ENABLED).\n"
    << "  genvar g;\n"
    << "  generate\n"
    << "    for (g = 0; g < C; g = g + 1) begin : g_ctx\n"
    << "      assign wr_ctx_hit[g] = wr_in_ctx && wr_ctx == g;\n"
    << "      assign ws_mem_m[g*N +: N] = mem_q[g*N +: N] & {N{wr_ctx_hit[g]}};\n"
    << "      assign ws_up_m[g] = up_q[g] & wr_ctx_hit[g];\n"
    << "      assign ws_up_port_m[g*8 +: 8] = up_port_q[g*8 +: 8] & {8{wr_ctx_hit[g]}};\n"
    << "      assign ws_jid_m[g*16 +: 16] = jid_q[g*16 +: 16] & {16{wr_ctx_hit[g]}};\n"
    << "      assign ws_tid_m[g*8 +: 8] = tid_q[g*8 +: 8] & {8{wr_ctx_hit[g]}};\n"
    << "      assign dup_hit[g] = en_q[g] && jid_q[g*16 +: 16] == ws_jid && tid_q[g*8 +: 8] == ws_tid;\n"
    << "      wire wsel = wr_fire & wr_ctx_hit[g];\n"
    << "      always @(posedge clk) begin\n"
    << "        if (rst) begin\n"
    << "          en_q[g] <= 1'b0;\n"
    << "          en_set_q[g] <= 1'b0;\n"
    << "          err_q[g*5 +: 5] <= 5'd0;\n"
    << "          jid_q[g*16 +: 16] <= 16'd0;\n"
    << "          tid_q[g*8 +: 8] <= 8'd0;\n"
    << "          mem_q[g*N +: N] <= {N{1'b0}};\n"
    << "          up_q[g] <= 1'b0;\n"
    << "          up_port_q[g*8 +: 8] <= 8'd0;\n"
    << "          gmac_q[g*48 +: 48] <= 48'd0;\n"
    << "          gip_q[g*32 +: 32] <= 32'd0;\n"
    << "          omac_q[g*48 +: 48] <= 48'd0;\n"
    << "          oip_q[g*32 +: 32] <= 32'd0;\n"
    << "          tmo_q[g*32 +: 32] <= 32'd0;\n"
    << "        end else begin\n"
    << "          en_set_q[g] <= 1'b0;\n"
    << "          if (wsel && wr_ctrl) begin\n"
    << "            if (!w_data_q[0]) begin\n"
    << "              en_q[g] <= 1'b0;\n"
    << "              err_q[g*5 +: 5] <= 5'd0;\n"
    << "            end else if (en_q[g]) begin\n"
    << "              err_q[g*5 +: 5] <= 5'd0;\n"
    << "            end else if (en_err == 5'd0) begin\n"
    << "              en_q[g] <= 1'b1;\n"
    << "              en_set_q[g] <= 1'b1;\n"
    << "              err_q[g*5 +: 5] <= 5'd0;\n"
    << "            end else begin\n"
    << "              err_q[g*5 +: 5] <= en_err;\n"
    << "            end\n"
    << "          end else if (wsel && wr_field) begin\n"
    << "            if (en_q[g]) begin\n"
    << "              err_q[g*5+4] <= 1'b1;\n"
    << "            end else begin\n"
    << "              case (wr_off)\n";
  // Field writes, from the map's context registers.
  field_write_cases();
  v << "                default: ;\n"
    << "              endcase\n"
    << "            end\n"
    << "          end\n"
    << "        end\n"
    << "      end\n"
    << "    end\n"
    << "  endgenerate\n\n";
}

// One case item per writable context field, from the map's context registers.
void RegsWriter::field_write_cases() {
  for (const auto& r : m.context_registers()) {
    std::string lhs;
    int width = 32;
    switch (r.offset) {
      case RegMap::kCtxCtrl:
      case RegMap::kCtxStatus:
      case RegMap::kCtxExpectedVid:
      case RegMap::kCtxCompletedLo:
      case RegMap::kCtxCompletedHi:
      case RegMap::kCtxDroppedLo:
      case RegMap::kCtxDroppedHi:
        if (r.access == "RW" && r.offset != RegMap::kCtxCtrl) throw std::logic_error("emit_regs: " + r.name);
        continue;
      case RegMap::kCtxJid:
        lhs = "jid_q[g*16 +: 16]";
        width = 16;
        break;
      case RegMap::kCtxTid:
        lhs = "tid_q[g*8 +: 8]";
        width = 8;
        break;
      case RegMap::kCtxMode:
        lhs = "up_q[g]";
        width = 1;
        break;
      case RegMap::kCtxUpstreamPort:
        lhs = "up_port_q[g*8 +: 8]";
        width = 8;
        break;
      case RegMap::kCtxGroupMacHi:
        lhs = "gmac_q[g*48+32 +: 16]";
        width = 16;
        break;
      case RegMap::kCtxGroupMacLo:
        lhs = "gmac_q[g*48 +: 32]";
        break;
      case RegMap::kCtxGroupIp:
        lhs = "gip_q[g*32 +: 32]";
        break;
      case RegMap::kCtxOwnMacHi:
        lhs = "omac_q[g*48+32 +: 16]";
        width = 16;
        break;
      case RegMap::kCtxOwnMacLo:
        lhs = "omac_q[g*48 +: 32]";
        break;
      case RegMap::kCtxOwnIp:
        lhs = "oip_q[g*32 +: 32]";
        break;
      case RegMap::kCtxTimeout:
        lhs = "tmo_q[g*32 +: 32]";
        break;
      default: {
        const uint32_t k = (r.offset - RegMap::kCtxMembers) / 4;
        if (r.offset < RegMap::kCtxMembers || r.offset % 4 != 0 || k >= static_cast<uint32_t>(MW))
          throw std::logic_error("emit_regs: unknown context register " + r.name);
        // Bits of ports >= N do not exist.
        width = std::min(32, N - 32 * static_cast<int>(k));
        lhs = "mem_q[g*N+" + std::to_string(32 * k) + " +: " + std::to_string(width) + "]";
      }
    }
    if (r.access != "RW") throw std::logic_error("emit_regs: " + r.name + " is not RW");
    v << "                O_" << r.name << ": " << lhs << " <= w_data_q[" << width - 1 << ":0];\n";
  }
}

void RegsWriter::agg_port_reg() {
  uint32_t agg_reset = 0;
  for (const auto& r : map_json.at("global"))
    if (r.at("offset").get<uint32_t>() == RegMap::kAggPort) agg_reset = r.at("reset").get<uint32_t>();
  v << "  // AGG_PORT: writes are ignored while any context is enabled (live traffic would be\n"
    << "  // classified by two ports).\n"
    << "  reg [15:0] agg_port_q;\n"
    << "  assign agg_port = agg_port_q;\n"
    << "  always @(posedge clk) begin\n"
    << "    if (rst) agg_port_q <= " << hx(16, agg_reset) << ";\n"
    << "    else if (wr_agg_port && ~|en_q) agg_port_q <= w_data_q[15:0];\n"
    << "  end\n\n";
}

void RegsWriter::counters() {
  v << "  // Counters: 64-bit, saturating at all ones; CLEAR_COUNTERS wins over a same-cycle pulse.\n"
    << "  wire [NCNT-1:0] cnt_inc = {agg_tx_inc, ctx_dropped_inc, ctx_completed_inc, port_count_inc};\n"
    << "  // Generated per counter (one small always block each, which synthesis tools handle far\n"
    << "  // faster than one loop over the whole array), in loops of at most 16 x N and 2C + 1.\n"
    << "  reg [NCNT*64-1:0] cnt_q;\n";
  auto counter = [&](const std::string& idx, const std::string& ind) {
    v << ind << "always @(posedge clk) begin\n"
      << ind << "  if (rst || wr_clear) cnt_q[(" << idx << ")*64 +: 64] <= 64'd0;\n"
      << ind << "  else if (cnt_inc[" << idx << "] && ~&cnt_q[(" << idx << ")*64 +: 64])\n"
      << ind << "    cnt_q[(" << idx << ")*64 +: 64] <= cnt_q[(" << idx << ")*64 +: 64] + 64'd1;\n"
      << ind << "end\n";
  };
  v << "  genvar h;\n"
    << "  generate\n"
    << "    for (g = 0; g < N; g = g + 1) begin : g_pcnt\n"
    << "      for (h = 0; h < 16; h = h + 1) begin : g_k\n";
  counter("g*16+h", "        ");
  v << "      end\n"
    << "    end\n"
    << "    for (g = 16*N; g < NCNT; g = g + 1) begin : g_ccnt\n";
  counter("g", "      ");
  v << "    end\n"
    << "  endgenerate\n\n";
}

void RegsWriter::read_decode() {
  v << "  // Read decode.\n"
    << "  wire rd_in_ctx = ar_addr_q >= CTX_BASE && {1'b0, ar_addr_q} < CTX_END;\n"
    << "  wire [" << CXW - 1 << ":0] rd_ctx = ar_addr_q[AW-1:8] - CTX_BASE[AW-1:8];\n"
    << "  wire [7:0] rd_off = ar_addr_q[7:0];\n"
    << "  wire rd_in_port = ar_addr_q >= PORT_BASE && {1'b0, ar_addr_q} < PORT_END;\n"
    << "  wire [" << PXW - 1 << ":0] rd_port = ar_addr_q[AW-1:7] - PORT_BASE[AW-1:7];\n"
    << "  wire [6:0] rd_poff = ar_addr_q[6:0];\n";
  v << "  // Each context's read word for rd_off (0 unless the address is in its block).\n"
    << "  wire [C*32-1:0] ctx_rword;\n"
    << "  generate\n"
    << "    for (g = 0; g < C; g = g + 1) begin : g_rd\n"
    << "      wire hit = rd_in_ctx && rd_ctx == g;\n"
    << "      reg [31:0] w;\n"
    << "      always @* begin\n"
    << "        case (rd_off)\n";
  ctx_read_cases();
  v << "          default: w = 32'd0;\n"
    << "        endcase\n"
    << "      end\n"
    << "      assign ctx_rword[g*32 +: 32] = w & {32{hit}};\n"
    << "    end\n"
    << "  endgenerate\n\n";
}

// One case item per readable context word (the counters are read by read_mux).
void RegsWriter::ctx_read_cases() {
  for (const auto& r : m.context_registers()) {
    std::string e;
    switch (r.offset) {
      case RegMap::kCtxCtrl:
        e = word(1, "en_q[g]");
        break;
      case RegMap::kCtxStatus:
        e = "{19'd0, err_q[g*5 +: 5], 7'd0, en_q[g]}";
        break;
      case RegMap::kCtxJid:
        e = word(16, "jid_q[g*16 +: 16]");
        break;
      case RegMap::kCtxTid:
        e = word(8, "tid_q[g*8 +: 8]");
        break;
      case RegMap::kCtxMode:
        e = word(1, "up_q[g]");
        break;
      case RegMap::kCtxUpstreamPort:
        e = word(8, "up_port_q[g*8 +: 8]");
        break;
      case RegMap::kCtxGroupMacHi:
        e = word(16, "gmac_q[g*48+32 +: 16]");
        break;
      case RegMap::kCtxGroupMacLo:
        e = "gmac_q[g*48 +: 32]";
        break;
      case RegMap::kCtxGroupIp:
        e = "gip_q[g*32 +: 32]";
        break;
      case RegMap::kCtxOwnMacHi:
        e = word(16, "omac_q[g*48+32 +: 16]");
        break;
      case RegMap::kCtxOwnMacLo:
        e = "omac_q[g*48 +: 32]";
        break;
      case RegMap::kCtxOwnIp:
        e = "oip_q[g*32 +: 32]";
        break;
      case RegMap::kCtxTimeout:
        e = "tmo_q[g*32 +: 32]";
        break;
      case RegMap::kCtxExpectedVid:
        e = "ctx_expected_vid[g*32 +: 32]";
        break;
      case RegMap::kCtxCompletedLo:
      case RegMap::kCtxCompletedHi:
      case RegMap::kCtxDroppedLo:
      case RegMap::kCtxDroppedHi:
        continue;  // counters: the counter path below
      default: {
        const int k = static_cast<int>((r.offset - RegMap::kCtxMembers) / 4);
        const int width = std::min(32, N - 32 * k);
        e = word(width, "mem_q[g*N+" + std::to_string(32 * k) + " +: " + std::to_string(width) + "]");
      }
    }
    v << "          O_" << r.name << ": w = " << e << ";\n";
  }
}

void RegsWriter::read_mux() {
  v << "  // The addressed word: a constant, a configuration register, or a counter. Counter LO\n"
    << "  // words read the counter's low half and latch its high half into the one shadow that\n"
    << "  // every HI word reads.\n"
    << "  reg [31:0] rd_word;\n"
    << "  reg rd_cnt_lo;\n"
    << "  reg rd_cnt_hi;\n"
    << "  reg [CIW-1:0] rd_cnt_idx;\n"
    << "  always @* begin\n"
    << "    rd_word = 32'd0;\n"
    << "    rd_cnt_lo = 1'b0;\n"
    << "    rd_cnt_hi = 1'b0;\n"
    << "    rd_cnt_idx = CNT_AGG_TX;\n"
    << "    case (ar_addr_q)\n";
  for (const auto& r : map_json.at("global")) {
    const uint32_t off = r.at("offset").get<uint32_t>();
    const std::string name = r.at("name").get<std::string>(), acc = r.at("access").get<std::string>();
    if (off == RegMap::kAggPort)
      v << "      A_" << name << ": rd_word = {16'd0, agg_port_q};\n";
    else if (off == RegMap::kAggTxFramesLo)
      v << "      A_" << name << ": rd_cnt_lo = 1'b1;\n";
    else if (off == RegMap::kAggTxFramesHi)
      v << "      A_" << name << ": rd_cnt_hi = 1'b1;\n";
    else if (acc == "WO")
      continue;  // reads 0
    else if (acc == "RO")
      v << "      A_" << name << ": rd_word = " << hx(32, r.at("reset").get<uint32_t>()) << ";\n";
    else
      throw std::logic_error("emit_regs: unknown global register " + name);
  }
  v << "      default: ;\n"
    << "    endcase\n"
    << "    if (rd_in_ctx) begin\n";
  v << "      for (i = 0; i < C; i = i + 1) rd_word = rd_word | ctx_rword[i*32 +: 32];\n"
    << "      case (rd_off)\n"
    << "        O_CTX_VECTORS_COMPLETED_LO: begin rd_cnt_lo = 1'b1; rd_cnt_idx = CNT_COMPLETED + "
    << resize("rd_ctx", CXW, CIW) << "; end\n"
    << "        O_CTX_VECTORS_COMPLETED_HI: rd_cnt_hi = 1'b1;\n"
    << "        O_CTX_VECTORS_DROPPED_LO: begin rd_cnt_lo = 1'b1; rd_cnt_idx = CNT_DROPPED + "
    << resize("rd_ctx", CXW, CIW) << "; end\n"
    << "        O_CTX_VECTORS_DROPPED_HI: rd_cnt_hi = 1'b1;\n"
    << "        default: ;\n"
    << "      endcase\n"
    << "    end\n"
    << "    // Port p's counter k: LO at 8k, HI at 8k+4.\n"
    << "    if (rd_in_port && rd_poff[1:0] == 2'd0) begin\n"
    << "      rd_cnt_lo = !rd_poff[2];\n"
    << "      rd_cnt_hi = rd_poff[2];\n"
    << "      rd_cnt_idx = {" << resize("rd_port", PXW, CIW - 4) << ", rd_poff[6:3]};\n"
    << "    end\n"
    << "  end\n";
  if (PXW > CIW - 4)
    v << "  // rd_port < N fits the counter index; its high bits are zero whenever rd_in_port.\n"
      << "  wire unused_rd_port = ^rd_port[" << PXW - 1 << ":" << CIW - 4 << "];\n";
  v << "  // The addressed counter, as an AND-OR multiplexer (a variable part-select of the wide\n"
    << "  // array makes Yosys build a far larger and slower circuit).\n"
    << "  reg [63:0] rd_cnt;\n"
    << "  always @* begin\n"
    << "    rd_cnt = 64'd0;\n"
    << "    for (i = 0; i < NCNT; i = i + 1) rd_cnt = rd_cnt | (cnt_q[i*64 +: 64] & {64{rd_cnt_idx == i[CIW-1:0]}});\n"
    << "  end\n"
    << "  reg [31:0] hi_latch_q;\n"
    << "  always @(posedge clk) begin\n"
    << "    if (rst) hi_latch_q <= 32'd0;\n"
    << "    else if (rd_fire && rd_cnt_lo) hi_latch_q <= rd_cnt[63:32];\n"
    << "  end\n"
    << "  // Read data needs no reset: rvalid qualifies it.\n"
    << "  always @(posedge clk) begin\n"
    << "    if (rd_fire) rdata_q <= rd_cnt_hi ? hi_latch_q : rd_cnt_lo ? rd_cnt[31:0] : rd_word;\n"
    << "  end\n\n";
  v << "endmodule\n";
}

}  // namespace

std::string emit_regs(const Config& c) {
  RegsWriter w(c);
  w.ports();
  w.params();
  w.axil();
  w.write_decode();
  w.ctx_state();
  w.ctx_writes();
  w.agg_port_reg();
  w.counters();
  w.read_decode();
  w.read_mux();
  return w.v.str();
}

}  // namespace panama
