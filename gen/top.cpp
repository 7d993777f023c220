// The datapath around the adder tree (docs/rtl.md):
//  <prefix>_port   one per port: receive stage, parser, bypass FIFO with commit/rewind,
//                  contribution memory of linked beats, descriptor queues per context, admission (rule 2),
//                  transmit to mPP;
//  <prefix>_sched  the aggregation scheduler (rules 5-8: stale, build, count mismatch,
//                  incomplete, skip, timeout), the result builder and the m_agg FIFO;
//  <prefix>_top    ports + scheduler + register file.
// The module bodies are fixed Verilog text; ${NAME} tokens are replaced by the configuration's
// numbers (ANSI port widths cannot use localparams in Verilog-2005).
#include "top.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include "regmap.h"
#include "fpadd.h"
#include "emit.h"
#include "regs_rtl.h"

namespace panama {
namespace {

int bits_for(long max_value) { return std::max(1, clog2(max_value + 1)); }  // holds 0..max_value
int index_bits(long n) { return std::max(1, clog2(n)); }                    // holds 0..n-1

// Every occurrence of `key` in `s` replaced by `text` (the text-valued placeholders, such as
// ${PREFIX}, that subst() cannot fill).
void replace_all(std::string& s, const std::string& key, const std::string& text) {
  for (size_t at = 0; (at = s.find(key, at)) != std::string::npos; at += text.size()) s.replace(at, key.size(), text);
}

std::string subst(const std::string& text, const std::map<std::string, long>& vals) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      const size_t e = text.find('}', i);
      const std::string key = text.substr(i + 2, e - i - 2);
      auto it = vals.find(key);
      if (it == vals.end()) throw std::logic_error("top.cpp: no value for ${" + key + "}");
      out += std::to_string(it->second);
      i = e;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::map<std::string, long> common_values(const Config& c) {
  const BufferPlan b = buffer_plan(c);
  std::map<std::string, long> v;
  v["N"] = c.in.ports;
  v["C"] = c.in.contexts;
  v["CW"] = index_bits(c.in.contexts);
  v["W"] = c.bus_bits;
  v["BB"] = c.bus_bytes;
  v["ES"] = c.fmt.elem_bytes;
  v["BYP"] = b.byp_beats;
  v["BPW"] = index_bits(b.byp_beats);
  v["BCW"] = bits_for(b.byp_beats);
  v["SB"] = b.frame_beats;
  v["SBW"] = bits_for(b.frame_beats);
  v["CAPB"] = b.contrib_beats;
  v["CR"] = static_cast<long>(c.in.contexts) * b.frame_beats;
  v["UW"] = std::max(bits_for(b.contrib_beats), bits_for(b.frame_beats) + 1);
  v["T"] = b.mem_beats;
  v["BW"] = index_bits(b.mem_beats);
  v["RW"] = bits_for(b.mem_beats);
  v["D"] = b.descs;
  v["D1"] = b.descs - 1;
  v["T1"] = b.mem_beats - 1;
  v["DW"] = index_bits(b.descs);
  v["DCW"] = bits_for(b.descs);
  v["FD"] = b.agg_fifo;
  v["FAW"] = index_bits(b.agg_fifo);
  v["FCW"] = bits_for(b.agg_fifo);
  v["L"] = c.addtree_latency;
  v["NB"] = bits_for((c.max_frame_bytes + c.bus_bytes - 1) / c.bus_bytes);  // beats of one frame
  v["PW"] = index_bits(c.in.ports);
  v["W1"] = c.bus_bits - 1;
  v["BB1"] = c.bus_bytes - 1;
  v["MAXE"] = c.max_elems;
  return v;
}

const char* kPortBody = R"V(
  // Contexts.
  localparam C = ${C};
  // Bus width in bits and bytes.
  localparam W = ${W};
  localparam BB = ${BB};
  // Bypass FIFO: depth in beats, pointer and count widths.
  localparam BYP = ${BYP};
  localparam BPW = ${BPW};
  localparam BCW = ${BCW};
  // Contribution memory: beats (the contribution half plus one largest frame of slack, so that
  // a frame being received always finds free beats), pointer width, beat counter width.
  localparam T = ${T};
  localparam BW = ${BW};
  localparam RW = ${RW};
  // Beats of the largest frame S (each context's reservation R) and their counter width.
  localparam SB = ${SB};
  localparam SBW = ${SBW};
  // Beats of the contribution half, and the C reservations together.
  localparam [31:0] CAPB = ${CAPB};
  localparam [31:0] RESERVED = ${CR};
  // Width of a context's beats-in-use counter.
  localparam UW = ${UW};
  // Frame descriptors: number (the most contributions the half can hold), index and count widths.
  localparam D = ${D};
  localparam DW = ${DW};
  localparam DCW = ${DCW};
  // A descriptor's head fields {CE, FLAGS, COUNT, VID, beats, last, first} (VID at IB) and the
  // header fields the result builder copies.
  localparam IB = 2*BW + SBW;
  localparam HIW = IB + 57;
  localparam HDW = 104;
  // Constants sized to their registers.
  localparam [RW-1:0] REM_ONE = 1;
  localparam [BW-1:0] T_LAST = ${T1};
  localparam [DW-1:0] D_LAST = ${D1};
  localparam [DCW-1:0] OCC_ONE = 1;
  // Parser descriptor classes.
  localparam [1:0] CLASS_RUNT = 2'd0;
  localparam [1:0] CLASS_BYPASS = 2'd1;

  // A receive MAC cannot be back-pressured: what does not fit is dropped whole.
  assign s_axis_tready = 1'b1;

  // ---------------------------------------------------------------- receive
  // The beat is registered once, so that a frame's last beat is written in the cycle the
  // parser's descriptor arrives, and the commit or rewind of one frame is settled before the
  // next frame's first beat is written.
  reg [W-1:0] rx_data_q;
  reg [BB-1:0] rx_keep_q;
  reg rx_valid_q, rx_last_q, rx_user_q;
  always @(posedge clk) begin
    if (rst) rx_valid_q <= 1'b0;
    else rx_valid_q <= s_axis_tvalid;
    rx_data_q <= s_axis_tdata;
    rx_keep_q <= s_axis_tkeep;
    rx_last_q <= s_axis_tlast;
    rx_user_q <= s_axis_tuser;
  end

  wire desc_valid;
  wire [15:0] desc_len;
  wire desc_too_long;
  wire [1:0] desc_class;
  wire desc_rx_error, desc_malformed;
  wire [7:0] desc_flags, desc_tid, desc_tos;
  wire [15:0] desc_jid, desc_count, desc_rank, desc_csum_part;
  wire [31:0] desc_vid, desc_ip_dst;
  wire [1:0] desc_ecn;
  wire [47:0] desc_eth_dst;
  ${PREFIX}_parser #(.DATA_W(W), .ELEM_BYTES(${ES}), .MAX_ELEMS(${MAXE})) u_parser (
    .clk(clk), .rst(rst), .agg_port(agg_port),
    .s_axis_tdata(s_axis_tdata), .s_axis_tkeep(s_axis_tkeep), .s_axis_tvalid(s_axis_tvalid),
    .s_axis_tlast(s_axis_tlast), .s_axis_tuser(s_axis_tuser),
    .desc_valid(desc_valid), .desc_len(desc_len), .desc_too_long(desc_too_long), .desc_class(desc_class),
    .desc_rx_error(desc_rx_error), .desc_malformed(desc_malformed), .desc_flags(desc_flags),
    .desc_jid(desc_jid), .desc_tid(desc_tid), .desc_count(desc_count), .desc_vid(desc_vid),
    .desc_rank(desc_rank), .desc_ecn(desc_ecn), .desc_eth_dst(desc_eth_dst), .desc_tos(desc_tos),
    .desc_ip_dst(desc_ip_dst), .desc_csum_part(desc_csum_part));
  // Length, RANK and the too-long flag decide nothing here: the stored beats carry tlast/tkeep.
  wire unused_desc = ^{desc_len, desc_too_long, desc_rank};

  wire rx_beat = rx_valid_q;
  wire rx_end = rx_valid_q & rx_last_q;

  // ---------------------------------------------------------------- bypass FIFO
  // Every frame is written speculatively; its last beat commits it (bypass, or a final sum
  // passing through) or rewinds the write pointer. Each word keeps tuser, tlast and tkeep.
  reg [W+BB+1:0] byp_mem [0:BYP-1];
  reg [BPW-1:0] byp_wr_q, byp_start_q, byp_rd_q;
  reg [BCW-1:0] byp_count_q;   // committed beats not yet read
  reg [BCW-1:0] byp_spec_q;    // beats of the frame being received
  reg byp_ovf_q;               // the frame being received no longer fits
  wire [BCW-1:0] byp_space = BYP[BCW-1:0] - byp_count_q - byp_spec_q;
  wire byp_write = rx_beat & ~byp_ovf_q & (byp_space != {BCW{1'b0}});
  wire [BPW-1:0] byp_wr_next = (byp_wr_q == BYP[BPW-1:0] - 1'b1) ? {BPW{1'b0}} : byp_wr_q + 1'b1;
  always @(posedge clk) begin
    if (byp_write) byp_mem[byp_wr_q] <= {rx_user_q, rx_last_q, rx_keep_q, rx_data_q};
  end

  // ---------------------------------------------------------------- contribution memory
  // Beats of W bits, each stored with the address of the next beat of its frame (the link):
  // one write port (receive) and one synchronous read port (the scheduler), block RAM.
  reg [BW+W-1:0] beat_mem [0:T-1];
  // The same links, read asynchronously by the allocator walking a free segment.
  reg [BW-1:0] link_mem [0:T-1];
  // The free beats are a chain of segments (freed frames, whose own links chain their beats),
  // preceded after reset by the fresh segment 0..T-1 whose links are implicit (beat + 1).
  // seg_mem[last beat of a free segment] = {first beat, beat count} of the segment after it.
  reg [BW+SBW-1:0] seg_mem [0:T-1];
  // Committed allocation point: the next free beat, the beats left in its segment, and whether
  // that segment is the fresh one.
  reg [BW-1:0] fl_ptr_q;
  reg [RW-1:0] fl_rem_q;
  reg fl_fresh_q;
  // Last beat of the last free segment (where a freed frame is appended).
  reg [BW-1:0] fl_tail_q;
  // The frame being received takes beats speculatively from the allocation point; admission
  // commits the walk, any other outcome forgets it (its beats stay free, in the same order).
  reg in_frame_q;
  reg [BW-1:0] a_ptr_q;
  reg [RW-1:0] a_rem_q;
  reg a_fresh_q;
  reg [SBW-1:0] cur_beat_q;  // beats written so far, saturating at SB
  reg [BW-1:0] first_q;      // the frame's first beat
  wire [BW-1:0] cur_ptr = in_frame_q ? a_ptr_q : fl_ptr_q;
  wire [RW-1:0] cur_rem = in_frame_q ? a_rem_q : fl_rem_q;
  wire cur_fresh = in_frame_q ? a_fresh_q : fl_fresh_q;
  wire [BW+SBW-1:0] seg_next = seg_mem[cur_ptr];
  wire seg_end = cur_rem == REM_ONE;
  // The beat after cur_ptr in the free chain: where this frame's next beat goes.
  wire [BW-1:0] nxt_ptr = seg_end ? seg_next[BW+SBW-1:SBW] : cur_fresh ? cur_ptr + 1'b1 : link_mem[cur_ptr];
  wire [RW-1:0] nxt_rem = seg_end ? {{(RW-SBW){1'b0}}, seg_next[SBW-1:0]} : cur_rem - 1'b1;
  wire nxt_fresh = cur_fresh & ~seg_end;
  // A contribution is at most SB beats: longer frames (never admitted here) stop being written.
  wire beat_write = rx_beat & (cur_beat_q != SB[SBW-1:0]);
  always @(posedge clk) begin
    if (beat_write) beat_mem[cur_ptr] <= {nxt_ptr, rx_data_q};
  end
  // link_mem is written one cycle late (a distinct write address keeps it a simple dual-port
  // RAM): the only beat whose write can still be pending when it is read again is one a dropped
  // frame wrote last, and then it is again fresh or a segment end, where the read is not used.
  reg link_wr_q;
  reg [BW-1:0] link_wa_q, link_wd_q;
  always @(posedge clk) begin
    link_wr_q <= beat_write & ~rst;
    link_wa_q <= cur_ptr;
    link_wd_q <= nxt_ptr;
    if (link_wr_q) link_mem[link_wa_q] <= link_wd_q;
  end
  // The scheduler's read port: one beat and its link per cycle, one cycle of latency.
  always @(posedge clk) {rd_link, rd_data} <= beat_mem[rd_addr];
  wire [BW-1:0] frame_first = in_frame_q ? first_q : cur_ptr;
  wire [SBW-1:0] frame_beats = cur_beat_q + 1'b1;  // on the last beat of a contribution (<= SB)

  // ---------------------------------------------------------------- admission (rule 2)
  // The context match is kept off the rule 9 arithmetic (docs/rtl.md, "Admission timing"): the
  // fit is evaluated for every context in parallel from registers only, and every per-context
  // decision is an AND of the one-hot match `sel` with that context's own terms.
  // The register file never has two enabled contexts with the same (JID, TID) (accelerator.md:
  // enabling is refused for a duplicate, and fields are writable only while disabled), so at
  // most one context matches and the match vector is already one-hot: no priority encoder.
  wire [C-1:0] hit;
  integer c;
  genvar ga;
  generate
    for (ga = 0; ga < C; ga = ga + 1) begin : g_match
      assign hit[ga] = ctx_enable[ga] & (ctx_jid[ga*16 +: 16] == desc_jid) & (ctx_tid[ga*8 +: 8] == desc_tid);
    end
  endgenerate
  wire [C-1:0] sel = hit;
  wire any_hit = |hit;
  // Rule 9 accounting in beats (a frame occupies its length rounded up to W/8 bytes): every
  // context owns R = SB beats (one largest frame); beyond that it borrows from the pool of
  // P = CAPB - C*R beats shared by all contexts. A frame of F beats fits context k if the growth
  // of its use beyond R fits in what the pool has free (the SystemC model's
  // PortBuffer::contrib_fits): over(used_k + F) - over(used_k) <= P - shared, with
  // over(u) = max(0, u - R) and shared = sum over contexts of over(used), kept as a running sum
  // (shared_q) rather than added up every cycle. A negative pool (C*R > CAPB) refuses every
  // contribution. With S_k = P + over(used_k) - shared this is max(0, used_k + F - R) <= S_k,
  // i.e. S_k >= 0 and F <= S_k + R - used_k; and F = cur_beat_q + 1 on the last beat (a
  // contribution is at most SB beats, so cur_beat_q has not saturated), so F <= room_k is
  // cur_beat_q < room_k. Widths: |S_k|, |room_k| < 2^(UW+2), held signed in UW+3 bits.
  localparam [31:0] POOL = (RESERVED <= CAPB) ? CAPB - RESERVED : 32'd0;
  localparam [31:0] POOL_SB = POOL + SB;
  localparam POOL_OK = RESERVED <= CAPB;
  wire [C*UW-1:0] used_flat, over_flat;
  reg [UW-1:0] shared_q;
  wire [C-1:0] fits;
  generate
    for (ga = 0; ga < C; ga = ga + 1) begin : g_fit
      wire [UW+2:0] slack = POOL[UW+2:0] + {3'b0, over_flat[ga*UW +: UW]} - {3'b0, shared_q};
      wire [UW+2:0] room = POOL_SB[UW+2:0] + {3'b0, over_flat[ga*UW +: UW]} - {3'b0, shared_q}
                           - {3'b0, used_flat[ga*UW +: UW]};
      assign fits[ga] = POOL_OK & ~slack[UW+2] & ~room[UW+2]
                        & ({{(UW+3-SBW){1'b0}}, cur_beat_q} < room);
    end
  endgenerate
  wire byp_fits = byp_write;  // on the last beat: this beat is written, so the frame fits
  wire is_result = desc_flags[1];
  wire is_bypass = desc_class == CLASS_BYPASS;
  wire is_agg = ~is_bypass & (desc_class != CLASS_RUNT);
  wire agg_ok = is_agg & ~desc_rx_error & ~desc_malformed & any_hit;
  wire uplink_hit = |(sel & ctx_uplink);
  wire member_hit = |(sel & ctx_member);
  wire contrib_fits = |(sel & fits);
  wire pass_result = agg_ok & is_result & uplink_hit;
  wire contrib = agg_ok & ~is_result & member_hit;
  wire commit_byp = rx_end & (is_bypass | pass_result) & byp_fits;
  // The push into context g's queue: rx_end & contrib & contrib_fits with sel one-hot, per context.
  wire agg_pre = rx_end & is_agg & ~desc_rx_error & ~desc_malformed & ~is_result;
  wire [C-1:0] push_ok = {C{agg_pre}} & ctx_member & fits;  // from registers only
  wire [C-1:0] push_ctx = sel & push_ok;
  wire commit_contrib = |push_ctx;

  // Counter pulses, PortCounter order 0..11 (the scheduler adds stale..timeout).
  assign count_inc[0] = rx_end;                                          // rx_frames
  assign count_inc[1] = m_axis_tvalid & m_axis_tready & m_axis_tlast;    // tx_frames
  assign count_inc[2] = rx_end & is_bypass & byp_fits;                   // bypass_frames
  assign count_inc[3] = commit_contrib;                                     // agg_admitted
  assign count_inc[4] = rx_end & pass_result & byp_fits;                 // result_passed
  assign count_inc[5] = rx_end & (desc_class == CLASS_RUNT);             // runt
  assign count_inc[6] = rx_end & is_agg & desc_rx_error;                 // rx_error
  assign count_inc[7] = rx_end & is_agg & ~desc_rx_error & desc_malformed;  // malformed
  assign count_inc[8] = rx_end & is_agg & ~desc_rx_error & ~desc_malformed & ~any_hit;  // no_context
  assign count_inc[9] = rx_end & agg_ok & (is_result ? ~uplink_hit : ~member_hit);  // not_member
  assign count_inc[10] = rx_end & ((pass_result & ~byp_fits) | (contrib & ~contrib_fits));  // overflow
  assign count_inc[11] = rx_end & is_bypass & ~byp_fits;                 // bypass_overflow
  wire unused_desc_valid = desc_valid;  // equals rx_end by construction

  // Bypass FIFO pointers.
  wire tx_issue;
  always @(posedge clk) begin
    if (rst) begin
      byp_wr_q <= {BPW{1'b0}};
      byp_start_q <= {BPW{1'b0}};
      byp_spec_q <= {BCW{1'b0}};
      byp_ovf_q <= 1'b0;
      byp_count_q <= {BCW{1'b0}};
    end else begin
      if (rx_end) begin
        if (commit_byp) begin
          byp_wr_q <= byp_wr_next;
          byp_start_q <= byp_wr_next;
        end else begin
          byp_wr_q <= byp_start_q;  // rewind
        end
        byp_spec_q <= {BCW{1'b0}};
        byp_ovf_q <= 1'b0;
      end else if (rx_beat) begin
        if (byp_write) begin
          byp_wr_q <= byp_wr_next;
          byp_spec_q <= byp_spec_q + 1'b1;
        end else begin
          byp_ovf_q <= 1'b1;
        end
      end
      byp_count_q <= byp_count_q + (commit_byp ? byp_spec_q + 1'b1 : {BCW{1'b0}}) - {{(BCW-1){1'b0}}, tx_issue};
    end
  end

  // ---------------------------------------------------------------- frame descriptors
  // One descriptor per queued contribution, written at admission: the head fields below, and
  // the header fields the result builder copies. Free descriptors: first the never-used ones
  // (d_fresh_q up to D), then a FIFO of released ones.
  reg [DW-1:0] d_next [0:D-1];     // the next descriptor of the same queue
  reg [HIW-1:0] d_info [0:D-1];    // {CE, FLAGS, COUNT, VID, beats, last beat, first beat}
  reg [HDW-1:0] d_hdr [0:D-1];     // {checksum partial sum, ipv4.dst, TOS, eth.dst}
  reg [DW-1:0] d_free [0:D-1];
  reg [DCW-1:0] d_fresh_q;
  reg [DW-1:0] d_free_rd_q, d_free_wr_q;
  wire d_from_fresh = d_fresh_q != D[DCW-1:0];
  wire [DW-1:0] d_new = d_from_fresh ? d_fresh_q[DW-1:0] : d_free[d_free_rd_q];
  wire [HIW-1:0] new_info = {desc_ecn == 2'b11, desc_flags, desc_count, desc_vid, frame_beats, cur_ptr, frame_first};
  always @(posedge clk) begin
    if (commit_contrib) begin
      d_info[d_new] <= new_info;
      d_hdr[d_new] <= {desc_csum_part, desc_ip_dst, desc_tos, desc_eth_dst};
    end
  end

  // The head being removed (at most one per cycle: the scheduler pops one context at a time;
  // q_pop comes from a register in the scheduler).
  wire [C*DW-1:0] head_flat, tail_flat;
  wire [C*HIW-1:0] info_flat;
  wire [C-1:0] becomes_head, pops;
  reg pop_any;
  reg [${CW1}:0] pop_ctx;
  reg [DW-1:0] pop_desc;
  reg [HIW-1:0] pop_info;
  always @* begin
    pop_any = 1'b0;
    pop_ctx = {${CW}{1'b0}};
    pop_desc = {DW{1'b0}};
    pop_info = {HIW{1'b0}};
    for (c = 0; c < C; c = c + 1)
      if (pops[c]) begin
        pop_any = 1'b1;
        pop_ctx = c[${CW1}:0];
        pop_desc = head_flat[c*DW +: DW];
        pop_info = info_flat[c*HIW +: HIW];
      end
  end
  // The same choice as a one-hot vector (the highest-index pop).
  reg [C-1:0] pop_sel;
  reg pop_above;
  always @* begin
    pop_above = 1'b0;
    for (c = C - 1; c >= 0; c = c - 1) begin
      pop_sel[c] = pops[c] & ~pop_above;
      pop_above = pop_above | pops[c];
    end
  end
  wire [DW-1:0] after_desc = d_next[pop_desc];
  wire [HIW-1:0] after_info = d_info[after_desc];
  wire unused_pop_info = ^pop_info[HIW-1:IB];  // the head fields go to the scheduler, not here
  // A frame popped by a build is still being read: its beats (and its share of the context's
  // use) are freed only at q_release, after its last read. At most one frame is held: the
  // release of one build and the pop of the next can fall in the same cycle, never two pops.
  reg held_q;
  reg [${CW1}:0] held_ctx_q;
  reg [BW-1:0] held_first_q, held_last_q;
  reg [SBW-1:0] held_beats_q;
  always @(posedge clk) begin
    if (rst) held_q <= 1'b0;
    else if (pop_any & q_hold) held_q <= 1'b1;
    else if (q_release) held_q <= 1'b0;
    if (pop_any & q_hold) begin
      held_ctx_q <= pop_ctx;
      held_first_q <= pop_info[BW-1:0];
      held_last_q <= pop_info[2*BW-1:BW];
      held_beats_q <= pop_info[2*BW +: SBW];
    end
  end
  // Frames whose beats go back to the free chain this cycle: a dropped head, or the held frame.
  // The scheduler never drops while a build's frame is held and not released this cycle.
  wire rel_now = q_release & held_q;
  wire free_any = rel_now | (pop_any & ~q_hold);
  wire [BW-1:0] pop_first = rel_now ? held_first_q : pop_info[BW-1:0];
  wire [BW-1:0] pop_last = rel_now ? held_last_q : pop_info[2*BW-1:BW];
  wire [SBW-1:0] pop_beats = rel_now ? held_beats_q : pop_info[2*BW +: SBW];

  always @(posedge clk) begin
    if (rst) begin
      d_fresh_q <= {DCW{1'b0}};
      d_free_rd_q <= {DW{1'b0}};
      d_free_wr_q <= {DW{1'b0}};
    end else begin
      if (commit_contrib) begin
        if (d_from_fresh) d_fresh_q <= d_fresh_q + 1'b1;
        else d_free_rd_q <= (d_free_rd_q == D_LAST) ? {DW{1'b0}} : d_free_rd_q + 1'b1;
      end
      if (pop_any) d_free_wr_q <= (d_free_wr_q == D_LAST) ? {DW{1'b0}} : d_free_wr_q + 1'b1;
    end
  end
  always @(posedge clk) begin
    if (pop_any) d_free[d_free_wr_q] <= pop_desc;
  end

  // Frame state and the free chain: admission commits the walk; a removed frame's beats are
  // appended to the free chain whole (its links already chain them).
  always @(posedge clk) begin
    if (rst) begin
      in_frame_q <= 1'b0;
      cur_beat_q <= {SBW{1'b0}};
      fl_ptr_q <= {BW{1'b0}};
      fl_rem_q <= T[RW-1:0];
      fl_fresh_q <= 1'b1;
      fl_tail_q <= T_LAST;
    end else begin
      if (rx_end) begin
        in_frame_q <= 1'b0;
        cur_beat_q <= {SBW{1'b0}};
      end else if (rx_beat) begin
        in_frame_q <= 1'b1;
        if (cur_beat_q != SB[SBW-1:0]) cur_beat_q <= cur_beat_q + 1'b1;
      end
      if (commit_contrib) begin
        fl_ptr_q <= nxt_ptr;
        fl_rem_q <= nxt_rem;
        fl_fresh_q <= nxt_fresh;
      end
      if (free_any) fl_tail_q <= pop_last;
    end
    if (beat_write) begin
      a_ptr_q <= nxt_ptr;
      a_rem_q <= nxt_rem;
      a_fresh_q <= nxt_fresh;
    end
    if (rx_beat & ~in_frame_q) first_q <= cur_ptr;
  end
  always @(posedge clk) begin
    if (free_any) seg_mem[fl_tail_q] <= {pop_first, pop_beats};
  end

  // ---------------------------------------------------------------- queues
  // One linked list of descriptors per context: head, tail, occupancy, the head's fields in
  // registers (the scheduler reads every context's head at once) and the context's beats in use.
  // over(used) change per context without a push, and what a push adds to it (da - dn).
  wire [C*(UW+1)-1:0] dn_flat, gr_flat;
  genvar g;
  generate
    for (g = 0; g < C; g = g + 1) begin : g_queue
      reg [DW-1:0] head_q, tail_q;
      reg [DCW-1:0] occ_q;
      reg [HIW-1:0] info_q;
      reg [31:0] since_q;
      reg [UW-1:0] used_q, over_q;
      wire push = push_ctx[g];
      wire pop = q_pop[g] & (occ_q != {DCW{1'b0}});
      assign pops[g] = pop;
      assign becomes_head[g] = push & ((occ_q == {DCW{1'b0}}) | (pop & (occ_q == OCC_ONE)));
      // Beats freed from this context this cycle, and its use with and without this cycle's
      // push (both ready before admission decides, which only picks one).
      // (free_any & free_ctx == g ? pop_beats : 0, from this queue's own registers: the held
      // frame on its release, else this queue's head when it is the dropped one.)
      wire [SBW-1:0] freed = rel_now ? ((held_ctx_q == g) ? held_beats_q : {SBW{1'b0}})
                                     : ((pop_sel[g] & ~q_hold) ? info_q[2*BW +: SBW] : {SBW{1'b0}});
      wire [UW-1:0] sub = {{(UW-SBW){1'b0}}, freed};
      wire [UW-1:0] used_n = used_q - sub;
      wire [UW-1:0] used_a = used_n + {{(UW-SBW){1'b0}}, frame_beats};
      wire [UW-1:0] over_n = (used_n > SB) ? used_n - SB : {UW{1'b0}};
      wire [UW-1:0] over_a = (used_a > SB) ? used_a - SB : {UW{1'b0}};
      always @(posedge clk) begin
        if (rst) begin
          occ_q <= {DCW{1'b0}};
          used_q <= {UW{1'b0}};
          over_q <= {UW{1'b0}};
        end else begin
          occ_q <= occ_q + (push ? OCC_ONE : {DCW{1'b0}}) - (pop ? OCC_ONE : {DCW{1'b0}});
          used_q <= push ? used_a : used_n;
          over_q <= push ? over_a : over_n;
        end
        if (becomes_head[g]) begin
          head_q <= d_new;
          info_q <= new_info;
          since_q <= now;
        end else if (pop) begin
          head_q <= after_desc;
          info_q <= after_info;
          since_q <= now;
        end
        if (push) tail_q <= d_new;
      end
      assign head_flat[g*DW +: DW] = head_q;
      assign tail_flat[g*DW +: DW] = tail_q;
      assign info_flat[g*HIW +: HIW] = info_q;
      assign used_flat[g*UW +: UW] = used_q;
      assign over_flat[g*UW +: UW] = over_q;
      assign dn_flat[g*(UW+1) +: UW+1] = {1'b0, over_n} - {1'b0, over_q};
      assign gr_flat[g*(UW+1) +: UW+1] = {1'b0, over_a} - {1'b0, over_n};
      assign q_valid[g] = occ_q != {DCW{1'b0}};
      assign q_ptr[g*BW +: BW] = info_q[BW-1:0];
      assign q_vid[g*32 +: 32] = info_q[IB +: 32];
      assign q_count[g*16 +: 16] = info_q[IB+32 +: 16];
      assign q_fin[g] = info_q[IB+48];
      assign q_ce[g] = info_q[IB+56];
      assign q_since[g*32 +: 32] = since_q;
    end
  endgenerate
  // The running sum of over(used): only the pushed context and the freed one change. dn of a
  // context is zero unless it is the freed one, so without a push the sum moves by their OR
  // (shared_0); a push into context g adds over(used_a) - over(used_n) to that (g's own dn is
  // in shared_0). Every candidate is ready before admission decides, which only selects one.
  // The one-hot selections below are OR reductions of bit-transposed vectors (`x_t[b*C + g]` =
  // bit b of context g's value), which synthesis maps to balanced trees; an OR accumulated in a
  // loop becomes a chain of C LUTs.
  wire [(UW+1)*C-1:0] dn_t;        // dn of every context
  wire [UW*C-1:0] shp_t;           // the new sum if context g is the match
  wire [DW*C-1:0] tail_t;          // tails, masked by sel
  wire [UW:0] dn_any;
  wire [UW:0] shared_0 = {1'b0, shared_q} + dn_any;
  wire [C*(UW+1)-1:0] shared_a;    // the new sum when context g is pushed
  wire [UW-1:0] shared_p;
  wire [DW-1:0] link_addr;         // the tail of the matching context's queue
  genvar gb;
  generate
    for (g = 0; g < C; g = g + 1) begin : g_shared
      assign shared_a[g*(UW+1) +: UW+1] = shared_0 + gr_flat[g*(UW+1) +: UW+1];
      for (gb = 0; gb <= UW; gb = gb + 1) begin : g_dn
        assign dn_t[gb*C + g] = dn_flat[g*(UW+1) + gb];
      end
      // The match selects the matching context's outcome: its sum if it is pushed, else shared_0.
      for (gb = 0; gb < UW; gb = gb + 1) begin : g_shp
        assign shp_t[gb*C + g] = sel[g] & (push_ok[g] ? shared_a[g*(UW+1) + gb] : shared_0[gb]);
      end
      for (gb = 0; gb < DW; gb = gb + 1) begin : g_tail
        assign tail_t[gb*C + g] = sel[g] & tail_flat[g*DW + gb];
      end
    end
    for (gb = 0; gb <= UW; gb = gb + 1) begin : g_dn_any
      assign dn_any[gb] = |dn_t[gb*C +: C];
    end
    for (gb = 0; gb < UW; gb = gb + 1) begin : g_shp_or
      assign shared_p[gb] = |shp_t[gb*C +: C];
    end
    for (gb = 0; gb < DW; gb = gb + 1) begin : g_link_or
      assign link_addr[gb] = |tail_t[gb*C +: C];
    end
  endgenerate
  always @(posedge clk) begin
    if (rst) shared_q <= {UW{1'b0}};
    else shared_q <= any_hit ? shared_p : shared_0[UW-1:0];
  end
  reg unused_shared;
  always @* begin
    unused_shared = shared_0[UW];
    for (c = 0; c < C; c = c + 1) unused_shared = unused_shared ^ shared_a[c*(UW+1) + UW];
  end
  // The link from the tail of the pushed context's queue (unless the frame becomes its head).
  wire link_write = |(push_ctx & ~becomes_head);
  always @(posedge clk) begin
    if (link_write) d_next[link_addr] <= d_new;
  end

  // Header fields of the head of context meta_sel, for the result builder: a synchronous read
  // (block RAM), so they come out the cycle after meta_sel. The builder uses them from the
  // cycle after its decision; the heads it reads then are those of the decision cycle (a
  // descriptor written at admission is never a queue's head in the same cycle's read).
  reg [HDW-1:0] sel_hdr;
  always @(posedge clk) sel_hdr <= d_hdr[head_flat[meta_sel*DW +: DW]];
  assign meta_eth_dst = sel_hdr[47:0];
  assign meta_tos = sel_hdr[55:48];
  assign meta_ip_dst = sel_hdr[87:56];
  assign meta_csum_part = sel_hdr[103:88];
  assign meta_flags = info_flat[meta_sel*HIW + IB + 48 +: 8];

  // ---------------------------------------------------------------- transmit (mPP)
  // Reads committed beats into a four-entry FIFO; a read is issued only when the FIFO can take
  // it, so a started frame never underruns (the whole frame is already in memory).
  reg [W+BB+1:0] tx_word_q;
  reg tx_inflight_q;
  reg [W+BB+1:0] tx_fifo [0:3];
  reg [1:0] tx_wp_q, tx_rp_q;
  reg [2:0] tx_cnt_q;
  assign tx_issue = (byp_count_q != {BCW{1'b0}}) & (({1'b0, tx_cnt_q} + {3'b0, tx_inflight_q}) < 4'd3);
  // A FIFO entry moves to the output register when that is empty or being taken.
  wire tx_pop = (tx_cnt_q != 3'd0) & (~tx_out_valid_q | m_axis_tready);
  wire tx_take = tx_pop;
  always @(posedge clk) begin
    if (tx_issue) tx_word_q <= byp_mem[byp_rd_q];
    if (tx_inflight_q) tx_fifo[tx_wp_q] <= tx_word_q;
  end
  always @(posedge clk) begin
    if (rst) begin
      byp_rd_q <= {BPW{1'b0}};
      tx_inflight_q <= 1'b0;
      tx_wp_q <= 2'd0;
      tx_rp_q <= 2'd0;
      tx_cnt_q <= 3'd0;
    end else begin
      if (tx_issue) byp_rd_q <= (byp_rd_q == BYP[BPW-1:0] - 1'b1) ? {BPW{1'b0}} : byp_rd_q + 1'b1;
      tx_inflight_q <= tx_issue;
      if (tx_inflight_q) tx_wp_q <= tx_wp_q + 1'b1;
      if (tx_pop) tx_rp_q <= tx_rp_q + 1'b1;
      tx_cnt_q <= tx_cnt_q + {2'b0, tx_inflight_q} - {2'b0, tx_pop};
    end
  end
  // Output register: mPP is driven by flip-flops only.
  reg [W+BB+1:0] tx_out_q;
  reg tx_out_valid_q;
  always @(posedge clk) begin
    if (tx_take) tx_out_q <= tx_fifo[tx_rp_q];
    if (rst) tx_out_valid_q <= 1'b0;
    else tx_out_valid_q <= tx_take | (tx_out_valid_q & ~m_axis_tready);
  end
  assign m_axis_tvalid = tx_out_valid_q;
  assign m_axis_tdata = tx_out_q[W-1:0];
  assign m_axis_tkeep = tx_out_q[W+BB-1:W];
  assign m_axis_tlast = tx_out_q[W+BB];
  assign m_axis_tuser = tx_out_q[W+BB+1];

endmodule
)V";

const char* kSchedBody = R"V(
  // Ports, contexts, bus.
  localparam N = ${N};
  localparam C = ${C};
  localparam W = ${W};
  localparam BB = ${BB};
  // Element size in bytes.
  localparam ES = ${ES};
  // m_agg FIFO depth in beats.
  localparam FD = ${FD};
  // Adder tree latency in cycles.
  localparam L = ${L};
  // Actions of one context (accelerator.md rules 5-7).
  localparam [2:0] ACT_NONE = 3'd0, ACT_STALE = 3'd1, ACT_BUILD = 3'd2, ACT_MISMATCH = 3'd3,
                   ACT_INCOMPLETE = 3'd4, ACT_SKIP = 3'd5, ACT_TDROP = 3'd6, ACT_TSKIP = 3'd7;

  genvar g;

  // The decision is a pipeline of registered stages:
  //  A  (every cycle, every context) the action of each context from its member heads and E,
  //     registered (a_*);
  //  B  the lowest-index context whose registered action is ready goes first (rule 8); its
  //     pops, counter pulses and build parameters are registered;
  //  I  a build issues one read per cycle to every member's contribution memory.
  // A context's heads and E change only one cycle after its own decision (the ports pop from
  // the registered q_pop, E moves from the registered decision), so its stage-A result is stale
  // for the two cycles after a decision: the context is masked for them ("dirty"). A build may
  // be decided in the last issue cycle of the one before, so back-to-back vectors of one
  // context leave at one beat per cycle as long as a vector is at least three beats long.

  // ---------------------------------------------------------------- A: actions per context
  // Leaves of the minimum tree (N rounded up to a power of two) and its nodes.
  localparam MP = ${NP2};
  localparam MT = 2*MP - 1;
  wire [C*3-1:0] act;
  wire [C*N-1:0] act_stale, act_at_e;
  wire [C*${NB}-1:0] act_beats;
  wire [C*(${KW}+1)-1:0] act_rem;
  wire [C*32-1:0] act_min;  // smallest distance VID - E among the heads considered
  wire [C*${PW}-1:0] act_low;  // the lowest member (it supplies the copied header)
  wire [C-1:0] act_fin, act_ce;
  // Expected VIDs and the cycles of their last changes (registers in g_e below).
  wire [C*32-1:0] e_flat, echg_flat;
  generate
    for (g = 0; g < C; g = g + 1) begin : g_ctx
      wire [N-1:0] mem = ctx_members[g*N +: N];
      wire [31:0] e_g = e_flat[g*32 +: 32];
      wire [31:0] echg_g = echg_flat[g*32 +: 32];
      reg [N-1:0] has, stale, at_e, cnt_ne, expired;
      reg [15:0] ref_cnt;
      reg [31:0] d;
      // The distances of the heads not stale (all ones otherwise), reduced to their minimum by
      // a tree of compares (log2 N deep) rather than a chain.
      reg [32*MT-1:0] mt;
      reg e_old;
      reg [${PW}-1:0] low;
      reg fin_or, ce_or;
      integer p;
      always @* begin
        ref_cnt = 16'd0;
        low = {${PW}{1'b0}};
        fin_or = 1'b0;
        ce_or = 1'b0;
        for (p = N - 1; p >= 0; p = p - 1)
          if (mem[p]) begin
            ref_cnt = q_count[(p*C + g)*16 +: 16];
            low = p[${PW}-1:0];
            fin_or = fin_or | q_fin[p*C + g];
            ce_or = ce_or | q_ce[p*C + g];
          end
        mt = {32*MT{1'b1}};
        // A head waits from when it became head or from the last change of E, the later: it
        // has waited more than the timeout iff both times lie more than the timeout back.
        e_old = (now - echg_g) > ctx_timeout[g*32 +: 32];
        for (p = 0; p < N; p = p + 1) begin
          has[p] = mem[p] & q_valid[p*C + g];
          d = q_vid[(p*C + g)*32 +: 32] - e_g;
          // Serial-number arithmetic: stale iff (v - E) mod 2^32 >= 2^31.
          stale[p] = has[p] & d[31];
          at_e[p] = has[p] & (d == 32'd0);
          cnt_ne[p] = has[p] & (q_count[(p*C + g)*16 +: 16] != ref_cnt);
          if (has[p] && !d[31]) mt[(MP - 1 + p)*32 +: 32] = d;
          expired[p] = has[p] & (ctx_timeout[g*32 +: 32] != 32'd0) & e_old &
                       ((now - q_since[(p*C + g)*32 +: 32]) > ctx_timeout[g*32 +: 32]);
        end
        for (p = MP - 2; p >= 0; p = p - 1)
          mt[p*32 +: 32] = (mt[(2*p+1)*32 +: 32] <= mt[(2*p+2)*32 +: 32]) ? mt[(2*p+1)*32 +: 32] : mt[(2*p+2)*32 +: 32];
      end
      wire [31:0] min_d = mt[31:0];
      wire all_heads = (&(has | ~mem)) & (|mem);
      wire all_at_e = &(at_e | ~mem);
      wire [2:0] my_act = ~ctx_enable[g] ? ACT_NONE :
                      (|stale) ? ACT_STALE :
                      all_heads ? (all_at_e ? ((|cnt_ne) ? ACT_MISMATCH : ACT_BUILD) :
                                   (|at_e) ? ACT_INCOMPLETE : ACT_SKIP) :
                      ((|has) & (|expired)) ? ((|at_e) ? ACT_TDROP : ACT_TSKIP) : ACT_NONE;
      wire [17:0] len = 18'd64 + ref_cnt * ES;
      /* verilator lint_off UNUSEDSIGNAL */
      wire [17:0] beats = (len + BB - 1) >> ${KW};
      /* verilator lint_on UNUSEDSIGNAL */
      reg [2:0] act_q;
      reg [N-1:0] stale_q, at_e_q;
      reg [31:0] min_q;
      reg [${NB}-1:0] beats_q;
      reg [${KW}:0] rem_q;
      reg [${PW}-1:0] low_q;
      reg fin_q, ce_q;
      always @(posedge clk) begin
        if (rst) act_q <= ACT_NONE;
        else act_q <= my_act;
        stale_q <= stale;
        at_e_q <= at_e;
        min_q <= min_d;
        beats_q <= beats[${NB}-1:0];
        rem_q <= {1'b0, len[${KW}-1:0]};
        low_q <= low;
        fin_q <= fin_or;
        ce_q <= ce_or;
      end
      assign act[g*3 +: 3] = act_q;
      assign act_stale[g*N +: N] = stale_q;
      assign act_at_e[g*N +: N] = at_e_q;
      assign act_min[g*32 +: 32] = min_q;
      assign act_beats[g*${NB} +: ${NB}] = beats_q;
      assign act_rem[g*(${KW}+1) +: ${KW}+1] = rem_q;
      assign act_low[g*${PW} +: ${PW}] = low_q;
      assign act_fin[g] = fin_q;
      assign act_ce[g] = ce_q;
    end
  endgenerate

  // ---------------------------------------------------------------- B: choice
  // Building waits for room in the m_agg FIFO for the whole frame, so a started frame never
  // stalls in the tree's pipeline. A build may be decided while the issue stage sends the last
  // beat of the one before; any other action waits until the issue stage is idle (its pops
  // free beats at once, which must not meet a build's release in the same cycle).
  reg busy_q;                    // I is issuing a build's reads
  reg [${NB}-1:0] b_beat_q;      // the beat I issues
  reg [${FCW}-1:0] reserved_q;   // FIFO entries held by frames being built or queued
  reg d1_q, d2_q;                // a decision one and two cycles ago
  reg [${CW}-1:0] d1_ctx_q, d2_ctx_q;
  reg [2:0] d1_act_q;
  reg [31:0] d1_min_q;
  reg [${NB}-1:0] n_beats_q;     // the build being issued: beats, bytes of the last beat
  reg [${KW}:0] n_rem_q;
  wire last_issue = busy_q & (b_beat_q == n_beats_q - 1'b1);
  wire issue_free = ~busy_q | last_issue;
  reg [C-1:0] ready;
  reg [${CW}-1:0] sel;
  reg any_ready;
  integer k;
  always @* begin
    sel = {${CW}{1'b0}};
    any_ready = 1'b0;
    for (k = C - 1; k >= 0; k = k - 1) begin
      ready[k] = (act[k*3 +: 3] != ACT_NONE) &
                 ~(d1_q & (d1_ctx_q == k[${CW}-1:0])) & ~(d2_q & (d2_ctx_q == k[${CW}-1:0])) &
                 ((act[k*3 +: 3] != ACT_BUILD) |
                  ({{(32-${FCW}){1'b0}}, reserved_q} + {{(32-${NB}){1'b0}}, act_beats[k*${NB} +: ${NB}]} <= FD));
      if (ready[k]) begin
        sel = k[${CW}-1:0];
        any_ready = 1'b1;
      end
    end
  end
  wire [2:0] sel_act = act[sel*3 +: 3];
  wire sel_build = sel_act == ACT_BUILD;
  wire fire = any_ready & (sel_build ? issue_free : ~busy_q);
  wire start_build = fire & sel_build;
  wire [31:0] sel32 = {{(32-${CW}){1'b0}}, sel};
  wire [N-1:0] sel_mem = ctx_members[sel*N +: N];
  wire [${NB}-1:0] sel_beats = act_beats[sel*${NB} +: ${NB}];

  // Pops and counter pulses of the decision, registered.
  integer m;
  always @(posedge clk) begin
    q_pop <= {N*C{1'b0}};
    drop_inc <= {N*4{1'b0}};
    ctx_completed_inc <= {C{1'b0}};
    ctx_dropped_inc <= {C{1'b0}};
    q_hold <= start_build;
    q_release <= last_issue;
    if (fire) begin
      for (m = 0; m < N; m = m + 1) begin
        case (sel_act)
          ACT_BUILD: q_pop[m*C + sel32] <= sel_mem[m];
          ACT_STALE: begin
            q_pop[m*C + sel32] <= act_stale[sel32*N + m];
            drop_inc[m*4 + 0] <= act_stale[sel32*N + m];
          end
          ACT_INCOMPLETE: begin
            q_pop[m*C + sel32] <= act_at_e[sel32*N + m];
            drop_inc[m*4 + 1] <= act_at_e[sel32*N + m];
          end
          ACT_MISMATCH: begin
            q_pop[m*C + sel32] <= sel_mem[m];
            drop_inc[m*4 + 2] <= sel_mem[m];
          end
          ACT_TDROP: begin
            q_pop[m*C + sel32] <= act_at_e[sel32*N + m];
            drop_inc[m*4 + 3] <= act_at_e[sel32*N + m];
          end
          default: ;
        endcase
      end
      if (sel_act == ACT_BUILD) ctx_completed_inc[sel] <= 1'b1;
      if (sel_act == ACT_INCOMPLETE || sel_act == ACT_MISMATCH || sel_act == ACT_TDROP)
        ctx_dropped_inc[sel] <= 1'b1;
    end
    if (rst) begin
      q_pop <= {N*C{1'b0}};
      q_hold <= 1'b0;
      q_release <= 1'b0;
      d1_q <= 1'b0;
      d2_q <= 1'b0;
    end else begin
      d1_q <= fire;
      d2_q <= d1_q;
    end
    d1_ctx_q <= sel;
    d2_ctx_q <= d1_ctx_q;
    d1_act_q <= sel_act;
    d1_min_q <= act_min[sel*32 +: 32];
  end

  // E moves, one cycle after the decision (with the pops): to 0 on enabling; +1 after a built,
  // mismatched, incomplete or timed-out vector; to the smallest waiting VID on a skip.
  generate
    for (g = 0; g < C; g = g + 1) begin : g_e
      reg [31:0] e_q, echg_q;
      always @(posedge clk) begin
        if (ctx_enable_set[g]) begin
          e_q <= 32'd0;
          echg_q <= now;
        end else if (d1_q && d1_ctx_q == g && d1_act_q != ACT_STALE) begin
          e_q <= (d1_act_q == ACT_SKIP || d1_act_q == ACT_TSKIP) ? e_q + d1_min_q : e_q + 32'd1;
          echg_q <= now;
        end
      end
      assign e_flat[g*32 +: 32] = e_q;
      assign echg_flat[g*32 +: 32] = echg_q;
      assign ctx_expected_vid[g*32 +: 32] = e_q;
    end
  endgenerate

  // ---------------------------------------------------------------- builder state
  // Captured at the decision (n_*), used by the issue stage; copied into p_* when the first
  // read is issued, for the header patch and the tree beside the reads (the next build may be
  // decided before this one's last beat has passed the patch).
  reg [N-1:0] n_mask_q, p_mask_q;
  reg [N*${BW}-1:0] n_ptr_q;
  reg [${PW}-1:0] n_low_q, p_low_q;
  reg n_mcast_q, n_fin_q, n_ce_q, p_mcast_q, p_fin_q, p_ce_q;
  reg [47:0] n_gmac_q, n_omac_q, p_gmac_q, p_omac_q, b_cmac_q;
  reg [31:0] n_gip_q, n_oip_q, p_gip_q, p_oip_q, b_cip_q;
  reg [15:0] b_csum_q;
  always @(posedge clk) begin
    if (start_build) begin
      n_mask_q <= sel_mem;
      n_low_q <= act_low[sel*${PW} +: ${PW}];
      n_beats_q <= sel_beats;
      n_rem_q <= act_rem[sel*(${KW}+1) +: ${KW}+1];
      n_mcast_q <= ~ctx_upstream[sel];
      n_fin_q <= act_fin[sel];
      n_ce_q <= act_ce[sel];
      n_gmac_q <= ctx_group_mac[sel*48 +: 48];
      n_omac_q <= ctx_own_mac[sel*48 +: 48];
      n_gip_q <= ctx_group_ip[sel*32 +: 32];
      n_oip_q <= ctx_own_ip[sel*32 +: 32];
    end
  end
  generate
    for (g = 0; g < N; g = g + 1) begin : g_ptr
      always @(posedge clk)
        if (start_build) n_ptr_q[g*${BW} +: ${BW}] <= q_ptr[(g*C + sel32)*${BW} +: ${BW}];
    end
  endgenerate

  // ---------------------------------------------------------------- I: reads
  // Beat 0 at each member's head frame, then each following beat at the link read with the
  // one before.
  reg first_q;  // I issues beat 0
  always @(posedge clk) begin
    if (rst) begin
      busy_q <= 1'b0;
      first_q <= 1'b0;
      b_beat_q <= {${NB}{1'b0}};
    end else begin
      busy_q <= start_build | (busy_q & ~last_issue);
      first_q <= start_build;
      b_beat_q <= (start_build | ~busy_q | last_issue) ? {${NB}{1'b0}} : b_beat_q + 1'b1;
    end
    if (first_q) begin
      p_mask_q <= n_mask_q;
      p_low_q <= n_low_q;
      p_mcast_q <= n_mcast_q;
      p_fin_q <= n_fin_q;
      p_ce_q <= n_ce_q;
      p_gmac_q <= n_gmac_q;
      p_omac_q <= n_omac_q;
      p_gip_q <= n_gip_q;
      p_oip_q <= n_oip_q;
    end
  end
  assign rd_addr = first_q ? n_ptr_q : rd_link;

  // The ports answer meta_sel (the decision, registered) the cycle after: header fields of the
  // heads of the context chosen, read before its pops take effect, valid when beat 0 leaves
  // the read stage.
  assign meta_sel = d1_ctx_q;
  reg b_hdr_q;  // the cycle the meta_* outputs are the new build's headers
  always @(posedge clk) begin
    if (rst) b_hdr_q <= 1'b0;
    else b_hdr_q <= first_q;
  end
  wire [47:0] low_mac = meta_eth_dst[p_low_q*48 +: 48];
  wire [7:0] low_tos = meta_tos[p_low_q*8 +: 8];
  wire [31:0] low_ip = meta_ip_dst[p_low_q*32 +: 32];
  wire [15:0] low_part = meta_csum_part[p_low_q*16 +: 16];
  wire unused_meta_flags = ^meta_flags;  // the copied FLAGS byte is patched from the stored word
  // The rebuilt IPv4 header checksum (RFC 1071 over the whole header): the copied words' partial
  // sum from the parser plus version/IHL/TOS and the two addresses as they will be sent.
  wire [7:0] new_tos = {low_tos[7:2], p_ce_q ? 2'b11 : low_tos[1:0]};
  wire [31:0] new_src = p_mcast_q ? low_ip : p_oip_q;
  wire [31:0] new_dst = p_mcast_q ? p_gip_q : low_ip;
  wire [18:0] csum_wide = {3'd0, low_part} + {3'd0, 8'h45, new_tos} + {3'd0, new_src[31:16]} +
                          {3'd0, new_src[15:0]} + {3'd0, new_dst[31:16]} + {3'd0, new_dst[15:0]};
  wire [16:0] csum_f1 = {1'b0, csum_wide[15:0]} + {14'd0, csum_wide[18:16]};
  wire [15:0] csum_f2 = csum_f1[15:0] + {15'd0, csum_f1[16]};
  // The copied fields the header patch uses: live in the first read cycle, then held.
  wire [47:0] h_cmac = b_hdr_q ? low_mac : b_cmac_q;
  wire [31:0] h_cip = b_hdr_q ? low_ip : b_cip_q;
  wire [15:0] h_csum = b_hdr_q ? ~csum_f2 : b_csum_q;
  always @(posedge clk) begin
    if (b_hdr_q) begin
      b_cmac_q <= low_mac;
      b_cip_q <= low_ip;
      b_csum_q <= ~csum_f2;
    end
  end

  // ---------------------------------------------------------------- datapath
  // Cycle after a read: the words of every port go into the adder tree; the lowest member's
  // word, with the header bytes rewritten, travels beside the tree for the header beats.
  reg rd_valid_q;
  reg [${NB}-1:0] rd_beat_q;
  reg rd_last_q;
  reg [BB-1:0] rd_keep_q;
  // tkeep of the beat being issued: all ones but on a frame's last beat.
  wire [BB-1:0] issue_keep = (~last_issue | (n_rem_q == {${KW}+1{1'b0}})) ? {BB{1'b1}} : ~({BB{1'b1}} << n_rem_q);
  always @(posedge clk) begin
    if (rst) rd_valid_q <= 1'b0;
    else rd_valid_q <= busy_q;
    rd_beat_q <= b_beat_q;
    rd_last_q <= last_issue;
    rd_keep_q <= issue_keep;
  end
  wire [W-1:0] raw = rd_data[p_low_q*W +: W];
  wire [W-1:0] patched;
${PATCH}
  wire tree_valid;
  wire [W-1:0] tree_sum;
  ${PREFIX}_addtree u_addtree (.clk(clk), .rst(rst), .in_valid(rd_valid_q), .in_mask(p_mask_q),
                               .in_data(rd_data), .out_valid(tree_valid), .out_data(tree_sum));
  // Side pipeline of L stages beside the tree: the patched word, beat index, last flag, tkeep.
  localparam SIDE = W + ${NB} + 1 + BB;
  wire [SIDE*(L+1)-1:0] side;
  assign side[SIDE-1:0] = {rd_keep_q, rd_last_q, rd_beat_q, patched};
  generate
    for (g = 0; g < L; g = g + 1) begin : g_side
      reg [SIDE-1:0] stage_q;
      always @(posedge clk) stage_q <= side[g*SIDE +: SIDE];
      assign side[(g+1)*SIDE +: SIDE] = stage_q;
    end
  endgenerate
  wire [SIDE-1:0] side_out = side[L*SIDE +: SIDE];
  wire [W-1:0] side_word = side_out[W-1:0];
  wire [${NB}-1:0] out_beat = side_out[W +: ${NB}];
  wire out_last = side_out[W + ${NB}];
  wire [W-1:0] out_word;
${SELECT}
  wire [BB-1:0] out_keep = side_out[W + ${NB} + 1 +: BB];

  // ---------------------------------------------------------------- m_agg FIFO
  reg [W+BB:0] fifo [0:FD-1];
  reg [${FAW}-1:0] f_wp_q, f_rp_q;
  reg [${FCW}-1:0] f_cnt_q;
  // Output register: m_agg is driven by flip-flops only. f_take moves the FIFO's head into it;
  // f_pop is the handshake (the reservation counts a beat until it has left).
  reg [W+BB:0] o_word_q;
  reg o_valid_q;
  wire f_take = (f_cnt_q != {${FCW}{1'b0}}) & (~o_valid_q | m_agg_axis_tready);
  wire f_pop = o_valid_q & m_agg_axis_tready;
  always @(posedge clk) begin
    if (tree_valid) fifo[f_wp_q] <= {out_last, out_keep, out_word};
  end
  always @(posedge clk) begin
    if (rst) begin
      f_wp_q <= {${FAW}{1'b0}};
      f_rp_q <= {${FAW}{1'b0}};
      f_cnt_q <= {${FCW}{1'b0}};
      reserved_q <= {${FCW}{1'b0}};
    end else begin
      if (tree_valid) f_wp_q <= f_wp_q + 1'b1;
      if (f_take) f_rp_q <= f_rp_q + 1'b1;
      f_cnt_q <= f_cnt_q + {{(${FCW}-1){1'b0}}, tree_valid} - {{(${FCW}-1){1'b0}}, f_take};
      reserved_q <= reserved_q + (start_build ? ${BEATS_FCW} : {${FCW}{1'b0}}) -
                    {{(${FCW}-1){1'b0}}, f_pop};
    end
  end
  always @(posedge clk) begin
    if (f_take) o_word_q <= fifo[f_rp_q];
    if (rst) o_valid_q <= 1'b0;
    else o_valid_q <= f_take | (o_valid_q & ~m_agg_axis_tready);
  end
  assign m_agg_axis_tvalid = o_valid_q;
  assign m_agg_axis_tdata = o_word_q[W-1:0];
  assign m_agg_axis_tkeep = o_word_q[W+BB-1:W];
  assign m_agg_axis_tlast = o_word_q[W+BB];
  assign agg_tx_inc = f_pop & m_agg_axis_tlast;

endmodule
)V";

}  // namespace

BufferPlan buffer_plan(const Config& c) {
  BufferPlan b;
  b.byp_beats = static_cast<int>(c.bypass_bytes / c.bus_bytes);
  b.frame_beats = (c.max_frame_bytes + c.bus_bytes - 1) / c.bus_bytes;
  b.contrib_beats = static_cast<int>(c.contribution_bytes / c.bus_bytes);
  // Admitted contributions never hold more than the contribution half (rule 9 accounting); one
  // largest frame more lets the frame being received be written before its admission.
  b.mem_beats = b.contrib_beats + b.frame_beats;
  // A contribution is at least 64 bytes long.
  const int min_beats = (64 + c.bus_bytes - 1) / c.bus_bytes;
  b.descs = std::max(1, b.contrib_beats / min_beats);
  // The whole frame plus the beats in flight behind the reservation: issue, read, tree, FIFO
  // and output registers.
  int need = b.frame_beats + c.addtree_latency + 6;
  b.agg_fifo = 4;
  while (b.agg_fifo < need) b.agg_fifo *= 2;
  return b;
}

std::string emit_port(const Config& c) {
  auto v = common_values(c);
  v["CW1"] = v["CW"] - 1;
  std::ostringstream o;
  const std::string mod = c.module_name("port");
  o << "module " << mod << " (\n"
    << "  input  wire clk,\n"
    << "  input  wire rst,\n"
    << "  // Free-running cycle count (queue head ages for timeouts).\n"
    << "  input  wire [31:0] now,\n"
    << "  input  wire [15:0] agg_port,\n"
    << "  // Context table (the register file), and this port's role in each context.\n"
    << "  input  wire [${C}-1:0] ctx_enable,\n"
    << "  input  wire [${C}*16-1:0] ctx_jid,\n"
    << "  input  wire [${C}*8-1:0] ctx_tid,\n"
    << "  input  wire [${C}-1:0] ctx_member,\n"
    << "  // Context c is in upstream mode and this port is its upstream port.\n"
    << "  input  wire [${C}-1:0] ctx_uplink,\n"
    << "  // Receive (sPP), held ready.\n"
    << "  input  wire [${W}-1:0] s_axis_tdata,\n"
    << "  input  wire [${BB}-1:0] s_axis_tkeep,\n"
    << "  input  wire s_axis_tvalid,\n"
    << "  input  wire s_axis_tlast,\n"
    << "  input  wire s_axis_tuser,\n"
    << "  output wire s_axis_tready,\n"
    << "  // Transmit (mPP): bypass frames and final sums passing through.\n"
    << "  output wire [${W}-1:0] m_axis_tdata,\n"
    << "  output wire [${BB}-1:0] m_axis_tkeep,\n"
    << "  output wire m_axis_tvalid,\n"
    << "  output wire m_axis_tlast,\n"
    << "  output wire m_axis_tuser,\n"
    << "  input  wire m_axis_tready,\n"
    << "  // Queue heads per context, to the scheduler.\n"
    << "  output wire [${C}-1:0] q_valid,\n"
    << "  output wire [${C}*32-1:0] q_vid,\n"
    << "  output wire [${C}*16-1:0] q_count,\n"
    << "  output wire [${C}-1:0] q_fin,\n"
    << "  output wire [${C}-1:0] q_ce,\n"
    << "  // First beat of each head frame.\n"
    << "  output wire [${C}*${BW}-1:0] q_ptr,\n"
    << "  // Cycle at which each head became head.\n"
    << "  output wire [${C}*32-1:0] q_since,\n"
    << "  // Remove the head of context c (its descriptor becomes free; its beats too unless q_hold).\n"
    << "  input  wire [${C}-1:0] q_pop,\n"
    << "  // The frame popped this cycle is a build's: keep its beats until q_release.\n"
    << "  input  wire q_hold,\n"
    << "  // The build's last read is done: free the beats of the frame held.\n"
    << "  input  wire q_release,\n"
    << "  // Header fields of the head of context meta_sel (registered: the cycle after), for the result builder.\n"
    << "  input  wire [${CW}-1:0] meta_sel,\n"
    << "  output wire [47:0] meta_eth_dst,\n"
    << "  output wire [7:0] meta_tos,\n"
    << "  output wire [31:0] meta_ip_dst,\n"
    << "  output wire [15:0] meta_csum_part,\n"
    << "  output wire [7:0] meta_flags,\n"
    << "  // Contribution memory read port, one cycle of latency: the beat at rd_addr and the address\n"
    << "  // of its frame's next beat.\n"
    << "  input  wire [${BW}-1:0] rd_addr,\n"
    << "  output reg  [${W}-1:0] rd_data,\n"
    << "  output reg  [${BW}-1:0] rd_link,\n"
    << "  // Counter pulses, PortCounter order 0..11.\n"
    << "  output wire [11:0] count_inc\n"
    << ");\n";
  std::string body = kPortBody;
  // The prefix is text, not a number: substitute it first.
  replace_all(body, "${PREFIX}", c.in.prefix);
  return subst(o.str(), v) + subst(body, v);
}

namespace {

// Byte o (0..63) of a rebuilt header, given the copied byte r (wire-format.md, "Frames the
// accelerator builds").
std::string patch_byte(int o, const std::string& r) {
  auto mac = [&](const std::string& reg, int i) { return reg + "[" + std::to_string(47 - 8 * i) + " -: 8]"; };
  auto ip = [&](const std::string& reg, int i) { return reg + "[" + std::to_string(31 - 8 * i) + " -: 8]"; };
  if (o <= 5) return "p_mcast_q ? " + mac("p_gmac_q", o) + " : " + r;                          // eth.dst
  if (o <= 11) return "p_mcast_q ? " + mac("h_cmac", o - 6) + " : " + mac("p_omac_q", o - 6);  // eth.src
  if (o == 15) return "{" + r + "[7:2], p_ce_q ? 2'b11 : " + r + "[1:0]}";                     // ECN
  if (o == 24) return "h_csum[15:8]";
  if (o == 25) return "h_csum[7:0]";
  if (o >= 26 && o <= 29) return "p_mcast_q ? " + ip("h_cip", o - 26) + " : " + ip("p_oip_q", o - 26);
  if (o >= 30 && o <= 33) return "p_mcast_q ? " + ip("p_gip_q", o - 30) + " : " + r;
  if (o == 40 || o == 41) return "8'h00";                      // UDP checksum
  if (o == 43) return "{" + r + "[7:2], p_mcast_q, p_fin_q}";  // FLAGS
  if (o == 54 || o == 55) return "8'hff";                      // RANK
  return r;
}

}  // namespace

std::string emit_sched(const Config& c) {
  auto v = common_values(c);
  const int BB = c.bus_bytes;
  v["KW"] = clog2(BB);
  v["NP2"] = 1L << clog2(c.in.ports);
  const int NB = static_cast<int>(v["NB"]);
  std::ostringstream patch, select;
  for (int j = 0; j < BB; ++j) {
    const std::string r = "raw[" + std::to_string(8 * j + 7) + ":" + std::to_string(8 * j) + "]";
    bool header = false;
    for (int b = 0; b * BB + j < 64; ++b) header = true;
    if (!header) {
      patch << "  assign patched[" << 8 * j + 7 << ":" << 8 * j << "] = " << r << ";\n";
      select << "  assign out_word[" << 8 * j + 7 << ":" << 8 * j << "] = tree_sum[" << 8 * j + 7 << ":" << 8 * j
             << "];\n";
      continue;
    }
    patch << "  wire [7:0] rb" << j << " = " << r << ";\n";
    patch << "  reg [7:0] pb" << j << ";\n  always @* begin\n    case (rd_beat_q)\n";
    int thr = 0;
    for (int b = 0; b * BB + j < 64; ++b) {
      patch << "      " << NB << "'d" << b << ": pb" << j << " = " << patch_byte(b * BB + j, "rb" + std::to_string(j))
            << ";\n";
      thr = b + 1;
    }
    patch << "      default: pb" << j << " = rb" << j << ";\n    endcase\n  end\n";
    patch << "  assign patched[" << 8 * j + 7 << ":" << 8 * j << "] = pb" << j << ";\n";
    select << "  assign out_word[" << 8 * j + 7 << ":" << 8 * j << "] = (out_beat < " << NB << "'d" << thr
           << ") ? side_word[" << 8 * j + 7 << ":" << 8 * j << "] : tree_sum[" << 8 * j + 7 << ":" << 8 * j << "];\n";
  }
  std::ostringstream o;
  o << "module " << c.module_name("sched") << " (\n"
    << "  input  wire clk,\n"
    << "  input  wire rst,\n"
    << "  input  wire [31:0] now,\n"
    << "  // Context table.\n"
    << "  input  wire [${C}-1:0] ctx_enable,\n"
    << "  // One-cycle pulse: context c was just enabled (its expected VID starts at 0).\n"
    << "  input  wire [${C}-1:0] ctx_enable_set,\n"
    << "  input  wire [${C}*${N}-1:0] ctx_members,\n"
    << "  input  wire [${C}-1:0] ctx_upstream,\n"
    << "  input  wire [${C}*48-1:0] ctx_group_mac,\n"
    << "  input  wire [${C}*32-1:0] ctx_group_ip,\n"
    << "  input  wire [${C}*48-1:0] ctx_own_mac,\n"
    << "  input  wire [${C}*32-1:0] ctx_own_ip,\n"
    << "  input  wire [${C}*32-1:0] ctx_timeout,\n"
    << "  output wire [${C}*32-1:0] ctx_expected_vid,\n"
    << "  // Queue heads of every port: port p, context c at index p*C + c.\n"
    << "  input  wire [${N}*${C}-1:0] q_valid,\n"
    << "  input  wire [${N}*${C}*32-1:0] q_vid,\n"
    << "  input  wire [${N}*${C}*16-1:0] q_count,\n"
    << "  input  wire [${N}*${C}-1:0] q_fin,\n"
    << "  input  wire [${N}*${C}-1:0] q_ce,\n"
    << "  input  wire [${N}*${C}*${BW}-1:0] q_ptr,\n"
    << "  input  wire [${N}*${C}*32-1:0] q_since,\n"
    << "  // Registered: remove these heads; q_hold: they are a build's (free the beats at q_release).\n"
    << "  output reg  [${N}*${C}-1:0] q_pop,\n"
    << "  output reg  q_hold,\n"
    << "  output reg  q_release,\n"
    << "  // Header fields of each port's head of context meta_sel (registered; answered the cycle after).\n"
    << "  output wire [${CW}-1:0] meta_sel,\n"
    << "  input  wire [${N}*48-1:0] meta_eth_dst,\n"
    << "  input  wire [${N}*8-1:0] meta_tos,\n"
    << "  input  wire [${N}*32-1:0] meta_ip_dst,\n"
    << "  input  wire [${N}*16-1:0] meta_csum_part,\n"
    << "  input  wire [${N}*8-1:0] meta_flags,\n"
    << "  // Contribution memory reads, one per port; beat and link one cycle later.\n"
    << "  output wire [${N}*${BW}-1:0] rd_addr,\n"
    << "  input  wire [${N}*${W}-1:0] rd_data,\n"
    << "  input  wire [${N}*${BW}-1:0] rd_link,\n"
    << "  // Drop counter pulses per port: stale, incomplete, count_mismatch, timeout.\n"
    << "  output reg  [${N}*4-1:0] drop_inc,\n"
    << "  output reg  [${C}-1:0] ctx_completed_inc,\n"
    << "  output reg  [${C}-1:0] ctx_dropped_inc,\n"
    << "  output wire agg_tx_inc,\n"
    << "  // Built frames to the switch chip.\n"
    << "  output wire [${W}-1:0] m_agg_axis_tdata,\n"
    << "  output wire [${BB}-1:0] m_agg_axis_tkeep,\n"
    << "  output wire m_agg_axis_tvalid,\n"
    << "  output wire m_agg_axis_tlast,\n"
    << "  input  wire m_agg_axis_tready\n"
    << ");\n";
  std::string body = kSchedBody;
  auto put = [&](const std::string& key, const std::string& text) { replace_all(body, key, text); };
  const int FCW = static_cast<int>(v["FCW"]);
  put("${BEATS_FCW}", FCW > NB    ? "{{" + std::to_string(FCW - NB) + "{1'b0}}, sel_beats}"
                      : FCW == NB ? std::string("sel_beats")
                                  : "sel_beats[" + std::to_string(FCW - 1) + ":0]");
  put("${PATCH}", patch.str());
  put("${SELECT}", select.str());
  put("${PREFIX}", c.in.prefix);
  return subst(o.str(), v) + subst(body, v);
}

namespace {

// AXI4-Lite connected through by name (the register file in the core, the core in the top).
const char* const kAxilPassThrough =
    R"V(    .s_axil_awaddr(s_axil_awaddr), .s_axil_awprot(s_axil_awprot), .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready), .s_axil_wdata(s_axil_wdata), .s_axil_wstrb(s_axil_wstrb),
    .s_axil_wvalid(s_axil_wvalid), .s_axil_wready(s_axil_wready), .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid), .s_axil_bready(s_axil_bready), .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(s_axil_arprot), .s_axil_arvalid(s_axil_arvalid), .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata), .s_axil_rresp(s_axil_rresp), .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(s_axil_rready))V";

// The core up to its register file's instance (regs_instance_head), fixed but for the ${} values.
const char* const kCoreBodyHead = R"V(
  // ---------------------------------------------------------------- register file
  wire [15:0] agg_port;
  wire [C-1:0] ctx_enable, ctx_enable_set, ctx_upstream;
  wire [C*16-1:0] ctx_jid;
  wire [C*8-1:0] ctx_tid, ctx_upstream_port;
  wire [C*N-1:0] ctx_members;
  wire [C*48-1:0] ctx_group_mac, ctx_own_mac;
  wire [C*32-1:0] ctx_group_ip, ctx_own_ip, ctx_timeout, ctx_expected_vid;
  wire [N*16-1:0] port_count_inc;
  wire [C-1:0] ctx_completed_inc, ctx_dropped_inc;
  wire agg_tx_inc;
)V";

// The register file's instance up to its AXI4-Lite connections, with its parameters (regs_params).
std::string regs_instance_head(const Config& c) {
  std::string s = "  ${PREFIX}_regs #(", line;
  for (const auto& [name, value] : regs_params(c)) {
    const std::string p = "." + name + "(" + std::to_string(value) + ")";
    if (!line.empty() && line.size() + p.size() + 2 > 96) {
      s += "\n    " + line + ",";
      line.clear();
    }
    line += (line.empty() ? "" : ", ") + p;
  }
  return s + "\n    " + line + "\n  ) u_regs (\n    .clk(clk), .rst(rst),\n";
}

// The rest of the core, after the register file's AXI4-Lite connections.
const char* const kCoreBodyTail = R"V(,
    .agg_port(agg_port), .ctx_enable(ctx_enable), .ctx_enable_set(ctx_enable_set), .ctx_jid(ctx_jid),
    .ctx_tid(ctx_tid), .ctx_members(ctx_members), .ctx_upstream(ctx_upstream),
    .ctx_upstream_port(ctx_upstream_port), .ctx_group_mac(ctx_group_mac), .ctx_group_ip(ctx_group_ip),
    .ctx_own_mac(ctx_own_mac), .ctx_own_ip(ctx_own_ip), .ctx_timeout(ctx_timeout),
    .ctx_expected_vid(ctx_expected_vid), .port_count_inc(port_count_inc),
    .ctx_completed_inc(ctx_completed_inc), .ctx_dropped_inc(ctx_dropped_inc), .agg_tx_inc(agg_tx_inc));

  // ---------------------------------------------------------------- ports and scheduler
  wire [N*C-1:0] q_valid, q_fin, q_ce, q_pop;
  wire q_hold, q_release;
  wire [N*C*32-1:0] q_vid, q_since;
  wire [N*C*16-1:0] q_count;
  wire [N*C*${BW}-1:0] q_ptr;
  wire [${CW}-1:0] meta_sel;
  wire [N*48-1:0] meta_eth_dst;
  wire [N*8-1:0] meta_tos, meta_flags;
  wire [N*32-1:0] meta_ip_dst;
  wire [N*16-1:0] meta_csum_part;
  wire [N*${BW}-1:0] rd_addr, rd_link;
  wire [N*W-1:0] rd_data;
  wire [N*4-1:0] drop_inc;
  wire [N*12-1:0] port_inc;
  genvar p;
  generate
    for (p = 0; p < N; p = p + 1) begin : g_port
      wire [C-1:0] member, uplink;
      genvar k;
      for (k = 0; k < C; k = k + 1) begin : g_role
        assign member[k] = ctx_members[k*N + p];
        assign uplink[k] = ctx_upstream[k] & (ctx_upstream_port[k*8 +: 8] == p);
      end
      ${PREFIX}_port u_port (
        .clk(clk), .rst(rst), .now(now_q), .agg_port(agg_port),
        .ctx_enable(ctx_enable), .ctx_jid(ctx_jid), .ctx_tid(ctx_tid), .ctx_member(member), .ctx_uplink(uplink),
        .s_axis_tdata(s_tdata[p*W +: W]), .s_axis_tkeep(s_tkeep[p*BB +: BB]), .s_axis_tvalid(s_tvalid[p]),
        .s_axis_tlast(s_tlast[p]), .s_axis_tuser(s_tuser[p]), .s_axis_tready(s_tready[p]),
        .m_axis_tdata(m_tdata[p*W +: W]), .m_axis_tkeep(m_tkeep[p*BB +: BB]), .m_axis_tvalid(m_tvalid[p]),
        .m_axis_tlast(m_tlast[p]), .m_axis_tuser(m_tuser[p]), .m_axis_tready(m_tready[p]),
        .q_valid(q_valid[p*C +: C]), .q_vid(q_vid[p*C*32 +: C*32]), .q_count(q_count[p*C*16 +: C*16]),
        .q_fin(q_fin[p*C +: C]), .q_ce(q_ce[p*C +: C]), .q_ptr(q_ptr[p*C*${BW} +: C*${BW}]),
        .q_since(q_since[p*C*32 +: C*32]), .q_pop(q_pop[p*C +: C]), .q_hold(q_hold), .q_release(q_release),
        .meta_sel(meta_sel), .meta_eth_dst(meta_eth_dst[p*48 +: 48]), .meta_tos(meta_tos[p*8 +: 8]),
        .meta_ip_dst(meta_ip_dst[p*32 +: 32]), .meta_csum_part(meta_csum_part[p*16 +: 16]),
        .meta_flags(meta_flags[p*8 +: 8]),
        .rd_addr(rd_addr[p*${BW} +: ${BW}]), .rd_data(rd_data[p*W +: W]), .rd_link(rd_link[p*${BW} +: ${BW}]),
        .count_inc(port_inc[p*12 +: 12]));
      assign port_count_inc[p*16 +: 16] = {drop_inc[p*4 +: 4], port_inc[p*12 +: 12]};
    end
  endgenerate

  ${PREFIX}_sched u_sched (
    .clk(clk), .rst(rst), .now(now_q),
    .ctx_enable(ctx_enable), .ctx_enable_set(ctx_enable_set), .ctx_members(ctx_members),
    .ctx_upstream(ctx_upstream), .ctx_group_mac(ctx_group_mac), .ctx_group_ip(ctx_group_ip),
    .ctx_own_mac(ctx_own_mac), .ctx_own_ip(ctx_own_ip), .ctx_timeout(ctx_timeout),
    .ctx_expected_vid(ctx_expected_vid),
    .q_valid(q_valid), .q_vid(q_vid), .q_count(q_count), .q_fin(q_fin), .q_ce(q_ce), .q_ptr(q_ptr),
    .q_since(q_since), .q_pop(q_pop), .q_hold(q_hold), .q_release(q_release),
    .meta_sel(meta_sel), .meta_eth_dst(meta_eth_dst), .meta_tos(meta_tos), .meta_ip_dst(meta_ip_dst),
    .meta_csum_part(meta_csum_part), .meta_flags(meta_flags),
    .rd_addr(rd_addr), .rd_data(rd_data), .rd_link(rd_link), .drop_inc(drop_inc),
    .ctx_completed_inc(ctx_completed_inc), .ctx_dropped_inc(ctx_dropped_inc), .agg_tx_inc(agg_tx_inc),
    .m_agg_axis_tdata(m_agg_axis_tdata), .m_agg_axis_tkeep(m_agg_axis_tkeep),
    .m_agg_axis_tvalid(m_agg_axis_tvalid), .m_agg_axis_tlast(m_agg_axis_tlast),
    .m_agg_axis_tready(m_agg_axis_tready));

endmodule
)V";

// Ports both the core and the top end with: m_agg, then the AXI4-Lite slave.
void agg_and_axil_ports(std::ostringstream& o) {
  o << "  // Frames the accelerator builds, to the switch chip's internal port.\n"
    << "  output wire [${W}-1:0] m_agg_axis_tdata,\n"
    << "  output wire [${BB}-1:0] m_agg_axis_tkeep,\n"
    << "  output wire m_agg_axis_tvalid,\n"
    << "  output wire m_agg_axis_tlast,\n"
    << "  input  wire m_agg_axis_tready,\n"
    << "  // Configuration and counters (regmap.md).\n"
    << axil_slave_ports("${AW}-1") << "  input  wire s_axil_rready\n"
    << ");\n\n";
}

// The top's port list: per port the receive and transmit streams, then m_agg and AXI4-Lite.
void top_ports(std::ostringstream& o, const Config& c) {
  const int N = c.in.ports;
  char pp[16];
  o << "module " << c.module_name("top") << " (\n"
    << "  input  wire clk,\n"
    << "  input  wire rst,\n";
  for (int p = 0; p < N; ++p) {
    std::snprintf(pp, sizeof pp, "%02d", p);
    const std::string s = std::string("s") + pp + "_axis_", m = std::string("m") + pp + "_axis_";
    o << "  // Port " << p << ": from link " << p << ", and on to the switch chip's port " << p << ".\n"
      << "  input  wire [${W}-1:0] " << s << "tdata,\n"
      << "  input  wire [${BB}-1:0] " << s << "tkeep,\n"
      << "  input  wire " << s << "tvalid,\n"
      << "  input  wire " << s << "tlast,\n"
      << "  input  wire " << s << "tuser,\n"
      << "  output wire " << s << "tready,\n"
      << "  output wire [${W}-1:0] " << m << "tdata,\n"
      << "  output wire [${BB}-1:0] " << m << "tkeep,\n"
      << "  output wire " << m << "tvalid,\n"
      << "  output wire " << m << "tlast,\n"
      << "  output wire " << m << "tuser,\n"
      << "  input  wire " << m << "tready,\n";
  }
  agg_and_axil_ports(o);
}

// The top's per-port streams, packed for the core.
void top_streams(std::ostringstream& o, const Config& c) {
  const int N = c.in.ports;
  char pp[16];
  o << "  // Ports, bus bits and bytes.\n"
    << "  localparam N = ${N};\n  localparam W = ${W};\n  localparam BB = ${BB};\n\n";
  o << "  // The per-port streams, packed: port p at [p*W +: W], [p*BB +: BB] and bit p.\n"
    << "  wire [N*W-1:0] s_tdata, m_tdata;\n  wire [N*BB-1:0] s_tkeep, m_tkeep;\n"
    << "  wire [N-1:0] s_tvalid, s_tlast, s_tuser, s_tready, m_tvalid, m_tlast, m_tuser, m_tready;\n";
  for (int p = 0; p < N; ++p) {
    std::snprintf(pp, sizeof pp, "%02d", p);
    const std::string s = std::string("s") + pp + "_axis_", m = std::string("m") + pp + "_axis_";
    const std::string P = std::to_string(p);
    o << "  assign s_tdata[" << P << "*W +: W] = " << s << "tdata;\n"
      << "  assign s_tkeep[" << P << "*BB +: BB] = " << s << "tkeep;\n"
      << "  assign s_tvalid[" << P << "] = " << s << "tvalid;\n"
      << "  assign s_tlast[" << P << "] = " << s << "tlast;\n"
      << "  assign s_tuser[" << P << "] = " << s << "tuser;\n"
      << "  assign " << s << "tready = s_tready[" << P << "];\n"
      << "  assign " << m << "tdata = m_tdata[" << P << "*W +: W];\n"
      << "  assign " << m << "tkeep = m_tkeep[" << P << "*BB +: BB];\n"
      << "  assign " << m << "tvalid = m_tvalid[" << P << "];\n"
      << "  assign " << m << "tlast = m_tlast[" << P << "];\n"
      << "  assign " << m << "tuser = m_tuser[" << P << "];\n"
      << "  assign m_tready[" << P << "] = " << m << "tready;\n";
  }
}

// The core's instance in the top: every port by name.
const char* const kCoreInstanceHead = R"V(
  ${PREFIX}_core u_core (
    .clk(clk), .rst(rst),
    .s_tdata(s_tdata), .s_tkeep(s_tkeep), .s_tvalid(s_tvalid), .s_tlast(s_tlast), .s_tuser(s_tuser),
    .s_tready(s_tready),
    .m_tdata(m_tdata), .m_tkeep(m_tkeep), .m_tvalid(m_tvalid), .m_tlast(m_tlast), .m_tuser(m_tuser),
    .m_tready(m_tready),
    .m_agg_axis_tdata(m_agg_axis_tdata), .m_agg_axis_tkeep(m_agg_axis_tkeep),
    .m_agg_axis_tvalid(m_agg_axis_tvalid), .m_agg_axis_tlast(m_agg_axis_tlast),
    .m_agg_axis_tready(m_agg_axis_tready),
)V";

// The end of the core's instance.
const char* const kCoreInstanceTail = R"V();

endmodule
)V";

std::map<std::string, long> top_values(const Config& c) {
  auto v = common_values(c);
  v["AW"] = clog2(RegMap::from(c).size);
  return v;
}

std::string with_prefix_subst(const Config& c, std::string text) {
  replace_all(text, "${PREFIX}", c.in.prefix);
  return subst(text, top_values(c));
}

}  // namespace

std::string emit_core(const Config& c) {
  std::ostringstream o;
  o << "module " << c.module_name("core") << " (\n"
    << "  input  wire clk,\n"
    << "  input  wire rst,\n"
    << "  // Port p's streams at [p*W +: W], [p*BB +: BB] and bit p (the top's sPP and mPP).\n"
    << "  input  wire [${N}*${W}-1:0] s_tdata,\n"
    << "  input  wire [${N}*${BB}-1:0] s_tkeep,\n"
    << "  input  wire [${N}-1:0] s_tvalid,\n"
    << "  input  wire [${N}-1:0] s_tlast,\n"
    << "  input  wire [${N}-1:0] s_tuser,\n"
    << "  output wire [${N}-1:0] s_tready,\n"
    << "  output wire [${N}*${W}-1:0] m_tdata,\n"
    << "  output wire [${N}*${BB}-1:0] m_tkeep,\n"
    << "  output wire [${N}-1:0] m_tvalid,\n"
    << "  output wire [${N}-1:0] m_tlast,\n"
    << "  output wire [${N}-1:0] m_tuser,\n"
    << "  input  wire [${N}-1:0] m_tready,\n";
  agg_and_axil_ports(o);
  o << "  // Ports, contexts, bus bits and bytes.\n"
    << "  localparam N = ${N};\n  localparam C = ${C};\n  localparam W = ${W};\n  localparam BB = ${BB};\n\n";
  o << "  // Free-running cycle count: the age of queue heads for timeouts.\n"
    << "  reg [31:0] now_q;\n"
    << "  always @(posedge clk) now_q <= rst ? 32'd0 : now_q + 32'd1;\n";
  o << kCoreBodyHead << regs_instance_head(c) << kAxilPassThrough << kCoreBodyTail;
  return with_prefix_subst(c, o.str());
}

std::string emit_top(const Config& c) {
  std::ostringstream o;
  top_ports(o, c);
  top_streams(o, c);
  o << kCoreInstanceHead << kAxilPassThrough << kCoreInstanceTail;
  return with_prefix_subst(c, o.str());
}

}  // namespace panama
