// The per-port receive parser: watches one AXI-Stream receive port, keeps the few header bytes
// that classification, validation and the scheduler need as they pass (they may span up to seven
// beats on a 64-bit bus, or all sit in the first beat from 512 bits on), counts the length, and
// one cycle after the last beat emits a descriptor (docs/rtl.md, "Parser").
#include "parser.h"

#include <sstream>
#include <vector>

namespace panama {

namespace {

// A header byte the parser keeps: its offset in the frame and how many low bits it needs
// (only the fragment byte is partial: the flags' MF bit and the offset, not DF or reserved).
struct HdrByte {
  int off;
  int bits;
};

// wire-format.md offsets: eth.type, IPv4 version/IHL, TOS, total length, fragment field,
// protocol, UDP destination port and length, then VER, FLAGS, JID, TID, COUNT, VID, RANK.
// Also kept for the frame the accelerator builds from this one: eth.dst (0..5), the IPv4 words
// that are copied unchanged into a rebuilt header (16..23, for the checksum) and ipv4.dst (30..33).
const std::vector<HdrByte> kHdrBytes = {
    {0, 8}, {1, 8}, {2, 8}, {3, 8}, {4, 8}, {5, 8}, {18, 8}, {19, 8}, {22, 8}, {30, 8}, {31, 8}, {32, 8}, {33, 8},
    {12, 8}, {13, 8}, {14, 8}, {15, 8}, {16, 8}, {17, 8}, {20, 8}, {21, 8}, {23, 8}, {36, 8}, {37, 8},
    {38, 8}, {39, 8}, {42, 8}, {43, 8}, {44, 8}, {45, 8}, {46, 8}, {48, 8}, {49, 8}, {50, 8}, {51, 8},
    {52, 8}, {53, 8}, {54, 8}, {55, 8}};

std::string dec(int width, long long v) { return std::to_string(width) + "'d" + std::to_string(v); }

}  // namespace

std::string emit_parser(const Config& c) {
  const int W = c.bus_bits, BB = c.bus_bytes, ES = c.fmt.elem_bytes;
  const int es_shift = ES == 4 ? 2 : 1;
  const int kidx_w = clog2(BB);  // bits of a byte index within a beat
  // The highest header byte kept lies in beat 55 / BB; the beat counter stops one past it.
  int last_hdr = 0;
  for (const auto& h : kHdrBytes) last_hdr = h.off > last_hdr ? h.off : last_hdr;
  const int beat_sat = last_hdr / BB + 1;
  const int beat_w = beat_sat < 2 ? 1 : clog2(beat_sat + 1);
  const int LEN_W = 17;
  const std::string mod = c.module_name("parser");

  std::ostringstream v;
  v << "module " << mod << " (\n"
    << "  input  wire clk,\n"
    << "  input  wire rst,\n"
    << "  // The configured aggregation UDP destination port; sampled on the last beat of a frame.\n"
    << "  input  wire [15:0] agg_port,\n"
    << "  // One receive port (accelerator.md sPP_axis_*): byte 0 in tdata[7:0] of the first beat,\n"
    << "  // tkeep all ones except on the last beat (contiguous from bit 0), tuser = 1 on the last\n"
    << "  // beat marks an FCS error. Idle cycles may occur inside a frame. Every beat is accepted:\n"
    << "  // tready is the top's (held high).\n"
    << "  input  wire [" << W - 1 << ":0] s_axis_tdata,\n"
    << "  input  wire [" << BB - 1 << ":0] s_axis_tkeep,\n"
    << "  input  wire s_axis_tvalid,\n"
    << "  input  wire s_axis_tlast,\n"
    << "  input  wire s_axis_tuser,\n"
    << "  // One-cycle pulse, the cycle after the last beat was accepted; the desc_* fields hold\n"
    << "  // until the next pulse.\n"
    << "  output reg  desc_valid,\n"
    << "  // Frame length in bytes, 65535 for every longer frame (then desc_too_long = 1).\n"
    << "  output reg  [15:0] desc_len,\n"
    << "  output reg  desc_too_long,\n"
    << "  // 0 runt (< 14 bytes), 1 bypass, 2 aggregation (wire-format.md classification).\n"
    << "  output reg  [1:0] desc_class,\n"
    << "  // tuser of the last beat (any class).\n"
    << "  output reg  desc_rx_error,\n"
    << "  // An aggregation frame that is not well-formed (0 for other classes).\n"
    << "  output reg  desc_malformed,\n"
    << "  // Header fields; meaningful for aggregation frames of at least 64 bytes.\n"
    << "  output reg  [7:0] desc_flags,\n"
    << "  output reg  [15:0] desc_jid,\n"
    << "  output reg  [7:0] desc_tid,\n"
    << "  output reg  [15:0] desc_count,\n"
    << "  output reg  [31:0] desc_vid,\n"
    << "  output reg  [15:0] desc_rank,\n"
    << "  // IPv4 ECN (the low two bits of the TOS byte).\n"
    << "  output reg  [1:0] desc_ecn,\n"
    << "  // For rebuilding the header: eth.dst (byte 0 in [47:40]), the TOS byte, ipv4.dst, and the\n"
    << "  // ones'-complement sum (folded, not inverted) of the IPv4 header words that a rebuilt\n"
    << "  // header copies unchanged: total length, identification, flags/fragment, TTL/protocol.\n"
    << "  output reg  [47:0] desc_eth_dst,\n"
    << "  output reg  [7:0] desc_tos,\n"
    << "  output reg  [31:0] desc_ip_dst,\n"
    << "  output reg  [15:0] desc_csum_part\n"
    << ");\n\n";

  v << "  // Bytes per beat (W / 8).\n  localparam BB = " << BB << ";\n";
  v << "  // Length counter width: 17 bits hold every length a well-formed frame can have\n"
    << "  // (up to 64 + 65485 bytes); it saturates, so a longer frame never wraps.\n"
    << "  localparam LEN_W = " << LEN_W << ";\n";
  v << "  // Header bytes lie in beats 0..BEAT_SAT-1; the beat counter stops at BEAT_SAT.\n"
    << "  localparam [" << beat_w - 1 << ":0] BEAT_SAT = " << dec(beat_w, beat_sat) << ";\n";
  v << "  // Largest valid COUNT.\n  localparam [15:0] MAX_ELEMS = " << dec(16, c.max_elems) << ";\n";
  v << "  // Descriptor classes.\n"
    << "  localparam [1:0] CLASS_RUNT = 2'd" << kParserClassRunt << ";\n"
    << "  localparam [1:0] CLASS_BYPASS = 2'd" << kParserClassBypass << ";\n"
    << "  localparam [1:0] CLASS_AGG = 2'd" << kParserClassAgg << ";\n\n";

  // Beat and length counters.
  v << "  // Position in the current frame: beats seen so far (saturating at BEAT_SAT) and bytes in\n"
    << "  // the beats before this one (saturating at all ones). Both return to 0 after a last beat.\n";
  v << "  reg [" << beat_w - 1 << ":0] beat_q;\n";
  v << "  reg [LEN_W-1:0] len_q;\n";
  v << "  wire beat = s_axis_tvalid;\n";
  v << "  wire last_beat = s_axis_tvalid & s_axis_tlast;\n";
  v << "  wire [LEN_W:0] len_step = {1'b0, len_q} + " << dec(LEN_W + 1, BB) << ";\n";
  v << "  always @(posedge clk) begin\n"
    << "    if (rst) begin\n"
    << "      beat_q <= " << dec(beat_w, 0) << ";\n"
    << "      len_q <= {LEN_W{1'b0}};\n"
    << "    end else if (last_beat) begin\n"
    << "      beat_q <= " << dec(beat_w, 0) << ";\n"
    << "      len_q <= {LEN_W{1'b0}};\n"
    << "    end else if (beat) begin\n"
    << "      if (beat_q != BEAT_SAT) beat_q <= beat_q + " << dec(beat_w, 1) << ";\n"
    << "      len_q <= len_step[LEN_W] ? {LEN_W{1'b1}} : len_step[LEN_W-1:0];\n"
    << "    end\n"
    << "  end\n\n";

  // Bytes of the last beat from tkeep (contiguous from bit 0): one-hot top bit, then binary.
  v << "  // Bytes in this beat: tkeep is contiguous from bit 0, so its top set bit, found without a\n"
    << "  // carry chain (keep_top is one-hot), encodes the count minus one by OR trees.\n";
  v << "  wire [BB-1:0] keep_top = s_axis_tkeep & ~{1'b0, s_axis_tkeep[BB-1:1]};\n";
  v << "  // Bit 0 has index 0: no OR tree reads it.\n";
  v << "  wire unused_keep_top = keep_top[0];\n";
  v << "  wire [" << kidx_w - 1 << ":0] keep_idx;\n";
  for (int j = 0; j < kidx_w; ++j) {
    // Mask of the byte positions whose index has bit j set, as hex digits (BB is a multiple of 4).
    std::string digits;
    for (int d = BB / 4 - 1; d >= 0; --d) {
      int nib = 0;
      for (int b = 0; b < 4; ++b)
        if (((d * 4 + b) >> j) & 1) nib |= 1 << b;
      digits += "0123456789abcdef"[nib];
    }
    v << "  assign keep_idx[" << j << "] = |(keep_top & " << BB << "'h" << digits << ");\n";
  }
  v << "  wire [" << kidx_w << ":0] beat_bytes = s_axis_tkeep[0] ? {1'b0, keep_idx} + " << dec(kidx_w + 1, 1)
    << " : " << dec(kidx_w + 1, 0) << ";\n";
  v << "  wire [LEN_W:0] len_sum = {1'b0, len_q} + {" << dec(LEN_W - kidx_w, 0) << ", beat_bytes};\n";
  v << "  // The whole frame's length on its last beat, saturating.\n";
  v << "  wire [LEN_W-1:0] len_total = len_sum[LEN_W] ? {LEN_W{1'b1}} : len_sum[LEN_W-1:0];\n\n";

  // Header byte capture and merge with the live beat.
  v << "  // Header bytes: each is captured from the beat that carries it; on the last beat the live\n"
    << "  // byte is used when that beat carries it (a frame may end in the beat of its header). Bytes\n"
    << "  // past a short frame's end are stale, but no decision reads them: classification needs\n"
    << "  // 42 bytes, and a shorter-than-64-byte aggregation frame is malformed whatever they hold.\n"
    << "  // They need no reset.\n";
  for (const auto& h : kHdrBytes) v << "  reg [" << h.bits - 1 << ":0] hdr" << h.off << "_q;\n";
  auto live = [&](const HdrByte& h) {
    const int lane = h.off % BB;
    return "s_axis_tdata[" + std::to_string(8 * lane + h.bits - 1) + ":" + std::to_string(8 * lane) + "]";
  };
  v << "  always @(posedge clk) begin\n";
  for (int b = 0; b < beat_sat; ++b) {
    bool any = false;
    for (const auto& h : kHdrBytes) any = any || h.off / BB == b;
    if (!any) continue;  // W = 64: beat 0 carries only the MAC addresses
    v << "    if (beat && beat_q == " << dec(beat_w, b) << ") begin\n";
    for (const auto& h : kHdrBytes)
      if (h.off / BB == b) v << "      hdr" << h.off << "_q <= " << live(h) << ";\n";
    v << "    end\n";
  }
  v << "  end\n";
  for (const auto& h : kHdrBytes)
    v << "  wire [" << h.bits - 1 << ":0] hdr" << h.off << " = beat_q == " << dec(beat_w, h.off / BB) << " ? "
      << live(h) << " : hdr" << h.off << "_q;\n";
  v << "  // The rest of the data bus is not inspected (it goes to the buffer, not here).\n";
  v << "  wire unused_tdata = ^s_axis_tdata;\n\n";

  // Classification.
  v << "  // Fields.\n"
    << "  wire [15:0] eth_type = {hdr12, hdr13};\n"
    << "  wire [15:0] ip_total_len = {hdr16, hdr17};\n"
    << "  wire [13:0] ip_frag = {hdr20[5:0], hdr21};\n"
    << "  wire [15:0] udp_dport = {hdr36, hdr37};\n"
    << "  wire [15:0] udp_len = {hdr38, hdr39};\n"
    << "  wire [15:0] count = {hdr48, hdr49};\n\n";
  v << "  // wire-format.md classification: at least 42 bytes, eth.type 0x0800 (no VLAN tag), IPv4\n"
    << "  // without options (0x45), DSCP 56, not a fragment (MF = 0, offset 0; DF ignored), UDP to the\n"
    << "  // aggregation port.\n";
  v << "  wire is_runt = len_total < " << dec(LEN_W, 14) << ";\n";
  v << "  wire is_agg = len_total >= " << dec(LEN_W, 42) << " && eth_type == 16'h0800 && hdr14 == 8'h45 &&\n"
    << "                hdr15[7:2] == 6'd56 && ip_frag == 14'd0 && hdr23 == 8'd17 && udp_dport == agg_port;\n\n";

  v << "  // Well-formedness: VER 1, 1 <= COUNT <= MAX_ELEMS, UDP length = 30 + ES*COUNT, IPv4 total\n"
    << "  // length = length - 14, length = 64 + ES*COUNT; exact, as the 17-bit length saturates only\n"
    << "  // far above the longest well-formed frame (65548 bytes).\n";
  v << "  wire [17:0] payload_bytes = {" << (es_shift == 2 ? "count, 2'b00" : "1'b0, count, 1'b0") << "};\n";
  v << "  wire bad_ver = hdr42 != 8'd1;\n";
  v << "  wire bad_count = count == 16'd0 || count > MAX_ELEMS;\n";
  v << "  wire bad_udp_len = {3'b000, udp_len} != {1'b0, payload_bytes} + 19'd30;\n";
  v << "  wire bad_ip_len = {1'b0, ip_total_len} != len_total - " << dec(LEN_W, 14) << ";\n";
  v << "  wire bad_frame_len = {2'b00, len_total} != {1'b0, payload_bytes} + 19'd64;\n";
  v << "  wire malformed = bad_ver | bad_count | bad_udp_len | bad_ip_len | bad_frame_len;\n\n";
  v << "  // RFC 1071 arithmetic: a 16-bit ones'-complement sum is the binary sum with its carries\n"
    << "  // folded back in.\n";
  v << "  wire [17:0] csum_wide = {2'b00, hdr16, hdr17} + {2'b00, hdr18, hdr19} + {2'b00, hdr20, hdr21} +\n"
    << "                        {2'b00, hdr22, hdr23};\n";
  v << "  wire [16:0] csum_fold1 = {1'b0, csum_wide[15:0]} + {15'd0, csum_wide[17:16]};\n";
  v << "  wire [15:0] csum_fold2 = csum_fold1[15:0] + {15'd0, csum_fold1[16]};\n\n";

  v << "  always @(posedge clk) begin\n"
    << "    if (rst) desc_valid <= 1'b0;\n"
    << "    else desc_valid <= last_beat;\n"
    << "  end\n\n";
  v << "  // Descriptor fields need no reset: desc_valid qualifies them.\n";
  v << "  always @(posedge clk) begin\n"
    << "    if (last_beat) begin\n"
    << "      desc_len <= len_total[LEN_W-1] ? 16'hffff : len_total[15:0];\n"
    << "      desc_too_long <= len_total[LEN_W-1];\n"
    << "      desc_class <= is_runt ? CLASS_RUNT : is_agg ? CLASS_AGG : CLASS_BYPASS;\n"
    << "      desc_rx_error <= s_axis_tuser;\n"
    << "      desc_malformed <= is_agg & malformed;\n"
    << "      desc_flags <= hdr43;\n"
    << "      desc_jid <= {hdr44, hdr45};\n"
    << "      desc_tid <= hdr46;\n"
    << "      desc_count <= count;\n"
    << "      desc_vid <= {hdr50, hdr51, hdr52, hdr53};\n"
    << "      desc_rank <= {hdr54, hdr55};\n"
    << "      desc_ecn <= hdr15[1:0];\n"
    << "      desc_eth_dst <= {hdr0, hdr1, hdr2, hdr3, hdr4, hdr5};\n"
    << "      desc_tos <= hdr15;\n"
    << "      desc_ip_dst <= {hdr30, hdr31, hdr32, hdr33};\n"
    << "      desc_csum_part <= csum_fold2;\n"
    << "    end\n"
    << "  end\n\n";
  v << "endmodule\n";
  return v.str();
}

}  // namespace panama
