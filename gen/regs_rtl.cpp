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
int regs_pending_bits(const Config& c) { return clog2(2L * regs_counter_count(c) + 2); }

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
  v << "  // Read channel (docs/rtl.md \"Register file\", \"Counters in block RAM\"): the address is\n"
    << "  // held; D: it is decoded into registers (rd_fire, one read in flight at a time); S0: the\n"
    << "  // read samples the state (rd_smp; a counter LO read also takes the counter pipeline's slot\n"
    << "  // of that cycle); S1..S3: the counter's sum comes out of the pipeline; then rdata_q and\n"
    << "  // rvalid_q are registered and held until rready. A new address may be taken meanwhile.\n"
    << "  reg ar_full_q;\n"
    << "  reg [AW-1:0] ar_addr_q;\n"
    << "  reg rvalid_q;\n"
    << "  reg [31:0] rdata_q;\n"
    << "  // A read between D and its rvalid; the decoded read waiting for its S0.\n"
    << "  reg rd_busy_q;\n"
    << "  reg rd_dec_q;\n"
    << "  reg [AW-1:0] rd_addr_q;\n"
    << "  reg rd_lo_q;\n"
    << "  reg rd_hi_q;\n"
    << "  reg [CIW-1:0] rd_idx_q;\n"
    << "  wire rd_fire = ar_full_q & ~rd_busy_q & ~rvalid_q;\n"
    << "  wire rd_smp;\n"
    << "  reg [2:0] rd_stage_q;  // the read in S1, S2, S3\n"
    << "  assign s_axil_arready = ~ar_full_q;\n"
    << "  assign s_axil_rvalid = rvalid_q;\n"
    << "  assign s_axil_rdata = rdata_q;\n"
    << "  assign s_axil_rresp = 2'b00;\n"
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
  // Pending-count width: a counter is flushed at least every 2 * NCNT cycles (docs/rtl.md,
  // "Counters in block RAM"), so its pending count never exceeds 2 * NCNT + 1.
  const int PW = regs_pending_bits(c);
  v << "  // Counters (docs/rtl.md, \"Counters in block RAM\"): 64-bit, saturating at all ones, held\n"
    << "  // in a RAM of NCNT words. Each counter's +1 pulses go into a small pending count (PW bits)\n"
    << "  // in flip-flops; one pipelined read-modify-write per cycle adds one counter's pending count\n"
    << "  // to its RAM word: round-robin over all counters, or the counter a LO read asks for (the\n"
    << "  // read's S0). S0: take the pending count (the counter restarts from this cycle's pulse)\n"
    << "  // and read the RAM; S1: RAM data; S2: saturating add; S3: the sum is written back and is\n"
    << "  // the read's value. No counter is in S1..S3 twice (the hazard check below), so every\n"
    << "  // read of the RAM sees the counter's last write. A valid bit per counter makes\n"
    << "  // CLEAR_COUNTERS a one-cycle operation (an invalid word reads as 0), and the clear cancels\n"
    << "  // the write-back of every flush in flight. CLEAR_COUNTERS wins over a same-cycle pulse.\n"
    << "  localparam PW = " << PW << ";\n"
    << "  localparam [CIW-1:0] NCNT_LAST = " << dec(CIW, NCNT - 1) << ";\n"
    << "  wire [NCNT-1:0] cnt_inc = {agg_tx_inc, ctx_dropped_inc, ctx_completed_inc, port_count_inc};\n"
    << "  reg [NCNT*PW-1:0] pend_q;\n"
    << "  reg [NCNT-1:0] vld_q;\n"
    << "  // The round-robin pointer and the three counters after it.\n"
    << "  reg [CIW-1:0] rr_q, rr1_q, rr2_q, rr3_q;\n"
    << "  // Flushes in S1, S2, S3: counter, write-back enable (cleared by CLEAR_COUNTERS).\n"
    << "  reg [CIW-1:0] s1_a, s2_a, s3_a;\n"
    << "  reg s1_we, s2_we, s3_we;\n"
    << "  reg [PW-1:0] s1_p, s2_p;\n"
    << "  reg s1_vld;\n"
    << "  reg [63:0] s2_d;\n"
    << "  reg [63:0] s3_sum;\n"
    << "  reg [63:0] ram_q;\n"
    << "  wire [63:0] sum;\n"
    << "  wire sum_c;\n"
    << "  // A LO read takes the slot when its counter is not in S1..S3 and is not one of the next\n"
    << "  // three round-robin counters (which would then be flushed while it is in S1..S3).\n"
    << "  wire rd_hazard = (rd_idx_q == s1_a) | (rd_idx_q == s2_a) | (rd_idx_q == s3_a) |\n"
    << "                   (rd_idx_q == rr1_q) | (rd_idx_q == rr2_q) | (rd_idx_q == rr3_q);\n"
    << "  assign rd_smp = rd_dec_q & ~(rd_lo_q & rd_hazard);\n"
    << "  wire inj = rd_smp & rd_lo_q;\n"
    << "  wire [CIW-1:0] a0 = inj ? rd_idx_q : rr_q;\n"
    << "  // The round robin stays while a read takes the slot (unless it takes the round robin's own\n"
    << "  // counter).\n"
    << "  wire rr_adv = ~inj | (rd_idx_q == rr_q);\n"
    << "  // The pending count and valid bit of the round-robin counter and of the read's counter\n"
    << "  // (AND-OR multiplexers from registered selects), then the slot's choice.\n"
    << "  reg [PW-1:0] p_rr, p_rd;\n"
    << "  reg v_rr, v_rd;\n"
    << "  always @* begin\n"
    << "    p_rr = {PW{1'b0}};\n"
    << "    p_rd = {PW{1'b0}};\n"
    << "    v_rr = 1'b0;\n"
    << "    v_rd = 1'b0;\n"
    << "    for (i = 0; i < NCNT; i = i + 1) begin\n"
    << "      p_rr = p_rr | (pend_q[i*PW +: PW] & {PW{rr_q == i[CIW-1:0]}});\n"
    << "      p_rd = p_rd | (pend_q[i*PW +: PW] & {PW{rd_idx_q == i[CIW-1:0]}});\n"
    << "      v_rr = v_rr | (vld_q[i] & (rr_q == i[CIW-1:0]));\n"
    << "      v_rd = v_rd | (vld_q[i] & (rd_idx_q == i[CIW-1:0]));\n"
    << "    end\n"
    << "  end\n"
    << "  // Per counter: the pending count (restarted by the slot) and the valid bit (set by the\n"
    << "  // write-back, cleared by CLEAR_COUNTERS).\n"
    << "  generate\n"
    << "    for (g = 0; g < NCNT; g = g + 1) begin : g_cnt\n"
    << "      wire take = inj ? (rd_idx_q == g) : (rr_q == g);\n"
    << "      always @(posedge clk) begin\n"
    << "        if (rst || wr_clear) pend_q[g*PW +: PW] <= {PW{1'b0}};\n"
    << "        else if (take) pend_q[g*PW +: PW] <= {{(PW-1){1'b0}}, cnt_inc[g]};\n"
    << "        else pend_q[g*PW +: PW] <= pend_q[g*PW +: PW] + {{(PW-1){1'b0}}, cnt_inc[g]};\n"
    << "        if (rst || wr_clear) vld_q[g] <= 1'b0;\n"
    << "        else if (s3_we && s3_a == g) vld_q[g] <= 1'b1;\n"
    << "      end\n"
    << "    end\n"
    << "  endgenerate\n"
    << "  always @(posedge clk) begin\n"
    << "    if (rst) begin\n"
    << "      rr_q <= " << dec(CIW, 0) << ";\n"
    << "      rr1_q <= " << dec(CIW, 1 % NCNT) << ";\n"
    << "      rr2_q <= " << dec(CIW, 2 % NCNT) << ";\n"
    << "      rr3_q <= " << dec(CIW, 3 % NCNT) << ";\n"
    << "      s1_we <= 1'b0;\n"
    << "      s2_we <= 1'b0;\n"
    << "      s3_we <= 1'b0;\n"
    << "    end else begin\n"
    << "      if (rr_adv) begin\n"
    << "        rr_q <= rr1_q;\n"
    << "        rr1_q <= rr2_q;\n"
    << "        rr2_q <= rr3_q;\n"
    << "        rr3_q <= rr3_q == NCNT_LAST ? " << dec(CIW, 0) << " : rr3_q + " << dec(CIW, 1) << ";\n"
    << "      end\n"
    << "      s1_we <= ~wr_clear;\n"
    << "      s2_we <= s1_we & ~wr_clear;\n"
    << "      s3_we <= s2_we & ~wr_clear;\n"
    << "    end\n"
    << "  end\n"
    << "  // The pipeline's data needs no reset: the write enables qualify it.\n"
    << "  always @(posedge clk) begin\n"
    << "    s1_a <= a0;\n"
    << "    s1_p <= inj ? p_rd : p_rr;\n"
    << "    s1_vld <= inj ? v_rd : v_rr;\n"
    << "    s2_a <= s1_a;\n"
    << "    s2_p <= s1_p;\n"
    << "    s2_d <= s1_vld ? ram_q : 64'd0;\n"
    << "    s3_a <= s2_a;\n"
    << "    s3_sum <= sum_c ? {64{1'b1}} : sum;\n"
    << "  end\n";
  v << "  // The counter RAM: one read (S0) and one write (S3) port, read-first.\n"
    << "  (* ram_style = \"block\" *) reg [63:0] cnt_mem [0:NCNT-1];\n"
    << "  always @(posedge clk) begin\n"
    << "    if (s3_we) cnt_mem[s3_a] <= s3_sum;\n"
    << "    ram_q <= cnt_mem[a0];\n"
    << "  end\n"
    << "  // S2: the saturating add (a carry out means the sum passed 2^64 - 1).\n"
    << "  assign {sum_c, sum} = {1'b0, s2_d} + {{(65-PW){1'b0}}, s2_p};\n\n";
}

void RegsWriter::read_decode() {
  v << "  // Read decode: d_* from the held address (D: which counter, LO or HI), rd_* from the\n"
    << "  // decoded read's address (S0: the word of a configuration register).\n"
    << "  wire d_in_ctx = ar_addr_q >= CTX_BASE && {1'b0, ar_addr_q} < CTX_END;\n"
    << "  wire [" << CXW - 1 << ":0] d_ctx = ar_addr_q[AW-1:8] - CTX_BASE[AW-1:8];\n"
    << "  wire [7:0] d_off = ar_addr_q[7:0];\n"
    << "  wire d_in_port = ar_addr_q >= PORT_BASE && {1'b0, ar_addr_q} < PORT_END;\n"
    << "  wire [" << PXW - 1 << ":0] d_port = ar_addr_q[AW-1:7] - PORT_BASE[AW-1:7];\n"
    << "  wire [6:0] d_poff = ar_addr_q[6:0];\n"
    << "  wire rd_in_ctx = rd_addr_q >= CTX_BASE && {1'b0, rd_addr_q} < CTX_END;\n"
    << "  wire [" << CXW - 1 << ":0] rd_ctx = rd_addr_q[AW-1:8] - CTX_BASE[AW-1:8];\n"
    << "  wire [7:0] rd_off = rd_addr_q[7:0];\n";
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
  v << "  // D: which counter the held address reads (LO or HI word), registered with the address.\n"
    << "  reg d_cnt_lo;\n"
    << "  reg d_cnt_hi;\n"
    << "  reg [CIW-1:0] d_cnt_idx;\n"
    << "  always @* begin\n"
    << "    d_cnt_lo = 1'b0;\n"
    << "    d_cnt_hi = 1'b0;\n"
    << "    d_cnt_idx = CNT_AGG_TX;\n"
    << "    if (ar_addr_q == A_AGG_TX_FRAMES_LO) d_cnt_lo = 1'b1;\n"
    << "    if (ar_addr_q == A_AGG_TX_FRAMES_HI) d_cnt_hi = 1'b1;\n"
    << "    if (d_in_ctx) begin\n"
    << "      case (d_off)\n"
    << "        O_CTX_VECTORS_COMPLETED_LO: begin d_cnt_lo = 1'b1; d_cnt_idx = CNT_COMPLETED + "
    << resize("d_ctx", CXW, CIW) << "; end\n"
    << "        O_CTX_VECTORS_COMPLETED_HI: d_cnt_hi = 1'b1;\n"
    << "        O_CTX_VECTORS_DROPPED_LO: begin d_cnt_lo = 1'b1; d_cnt_idx = CNT_DROPPED + "
    << resize("d_ctx", CXW, CIW) << "; end\n"
    << "        O_CTX_VECTORS_DROPPED_HI: d_cnt_hi = 1'b1;\n"
    << "        default: ;\n"
    << "      endcase\n"
    << "    end\n"
    << "    // Port p's counter k: LO at 8k, HI at 8k+4.\n"
    << "    if (d_in_port && d_poff[1:0] == 2'd0) begin\n"
    << "      d_cnt_lo = !d_poff[2];\n"
    << "      d_cnt_hi = d_poff[2];\n"
    << "      d_cnt_idx = {" << resize("d_port", PXW, CIW - 4) << ", d_poff[6:3]};\n"
    << "    end\n"
    << "  end\n";
  if (PXW > CIW - 4)
    v << "  // d_port < N fits the counter index; its high bits are zero whenever d_in_port.\n"
      << "  wire unused_d_port = ^d_port[" << PXW - 1 << ":" << CIW - 4 << "];\n";
  v << "  // S0: the word of a configuration register or constant (0 for a counter word).\n"
    << "  reg [31:0] rd_word;\n"
    << "  always @* begin\n"
    << "    rd_word = 32'd0;\n"
    << "    case (rd_addr_q)\n";
  for (const auto& r : map_json.at("global")) {
    const uint32_t off = r.at("offset").get<uint32_t>();
    const std::string name = r.at("name").get<std::string>(), acc = r.at("access").get<std::string>();
    if (off == RegMap::kAggPort)
      v << "      A_" << name << ": rd_word = {16'd0, agg_port_q};\n";
    else if (off == RegMap::kAggTxFramesLo || off == RegMap::kAggTxFramesHi)
      continue;  // the counter path
    else if (acc == "WO")
      continue;  // reads 0
    else if (acc == "RO")
      v << "      A_" << name << ": rd_word = " << hx(32, r.at("reset").get<uint32_t>()) << ";\n";
    else
      throw std::logic_error("emit_regs: unknown global register " + name);
  }
  v << "      default: ;\n"
    << "    endcase\n"
    << "    if (rd_in_ctx)\n"
    << "      for (i = 0; i < C; i = i + 1) rd_word = rd_word | ctx_rword[i*32 +: 32];\n"
    << "  end\n";
  v << "  // Counter LO words return the counter's value from the pipeline (S3) and copy its high\n"
    << "  // half into the one shadow that every HI word reads.\n"
    << "  reg [31:0] hi_latch_q;\n"
    << "  reg [31:0] rd_held_q;  // S0's word (configuration or shadow)\n"
    << "  always @(posedge clk) begin\n"
    << "    if (rst) begin\n"
    << "      ar_full_q <= 1'b0;\n"
    << "      rvalid_q <= 1'b0;\n"
    << "      rd_busy_q <= 1'b0;\n"
    << "      rd_dec_q <= 1'b0;\n"
    << "      rd_stage_q <= 3'd0;\n"
    << "      hi_latch_q <= 32'd0;\n"
    << "    end else begin\n"
    << "      if (rd_fire) ar_full_q <= 1'b0;\n"
    << "      else if (s_axil_arvalid) ar_full_q <= 1'b1;\n"
    << "      if (rd_fire) rd_busy_q <= 1'b1;\n"
    << "      else if (rd_stage_q[2]) rd_busy_q <= 1'b0;\n"
    << "      if (rd_fire) rd_dec_q <= 1'b1;\n"
    << "      else if (rd_smp) rd_dec_q <= 1'b0;\n"
    << "      rd_stage_q <= {rd_stage_q[1:0], rd_smp};\n"
    << "      if (rd_stage_q[2]) rvalid_q <= 1'b1;\n"
    << "      else if (s_axil_rready) rvalid_q <= 1'b0;\n"
    << "      if (rd_stage_q[2] && rd_lo_q) hi_latch_q <= s3_sum[63:32];\n"
    << "    end\n"
    << "  end\n"
    << "  // The read's registers need no reset: rd_dec_q, rd_stage_q and rvalid_q qualify them.\n"
    << "  always @(posedge clk) begin\n"
    << "    if (rd_fire) begin\n"
    << "      rd_addr_q <= ar_addr_q;\n"
    << "      rd_lo_q <= d_cnt_lo;\n"
    << "      rd_hi_q <= d_cnt_hi;\n"
    << "      rd_idx_q <= d_cnt_idx;\n"
    << "    end\n"
    << "    if (rd_smp) rd_held_q <= rd_hi_q ? hi_latch_q : rd_word;\n"
    << "    if (rd_stage_q[2]) rdata_q <= rd_lo_q ? s3_sum[31:0] : rd_held_q;\n"
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
