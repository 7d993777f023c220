// SPDX-License-Identifier: MIT
// The per-port receive parser (docs/rtl.md, "Parser"): watches one AXI-Stream receive port, keeps
// the few header bytes that classification, validation and the scheduler need as they pass (they
// span up to seven beats on a 64-bit bus, or all sit in the first beat from 512 bits on), counts
// the length, and DESC_STAGES cycles after the last beat emits a descriptor.
`timescale 1ns / 1ps
`default_nettype none

module panama_parser #(
  // Bus width in bits: a power of two, 64..4096.
  parameter DATA_W = 64,
  // Cycles from a frame's last beat to its descriptor: 1, or 2 for faster clocks (panama-gen
  // chooses: docs/rtl.md, "Receive stages"), where the checks read the kept header bytes and
  // the registered length instead of the live beat.
  parameter DESC_STAGES = 1,
  // Bytes per element: 4 (fp32) or 2 (bf16, fp16).
  parameter ELEM_BYTES = 4,
  // Largest valid COUNT (elements per frame).
  parameter MAX_ELEMS = 362
) (
  input  wire clk,
  input  wire rst,
  // The configured aggregation UDP destination port; sampled on the last beat of a frame.
  input  wire [15:0] agg_port,
  // One receive port (accelerator.md sPP_axis_*): byte 0 in tdata[7:0] of the first beat,
  // tkeep all ones except on the last beat (contiguous from bit 0), tuser = 1 on the last
  // beat marks an FCS error. Idle cycles may occur inside a frame. Every beat is accepted:
  // tready is the top's (held high).
  input  wire [DATA_W-1:0] s_axis_tdata,
  input  wire [DATA_W/8-1:0] s_axis_tkeep,
  input  wire s_axis_tvalid,
  input  wire s_axis_tlast,
  input  wire s_axis_tuser,
  // One-cycle pulse, DESC_STAGES cycles after the last beat was accepted. desc_len ..
  // desc_malformed hold until the next pulse; the header fields (desc_flags .. desc_csum_part)
  // are the header bytes the parser keeps anyway, valid in the pulse's cycle only (the next
  // frame's bytes replace them from the cycle after on).
  output reg  desc_valid,
  // Frame length in bytes, 65535 for every longer frame (then desc_too_long = 1).
  output reg  [15:0] desc_len,
  output reg  desc_too_long,
  // CLASS_RUNT (< 14 bytes), CLASS_BYPASS or CLASS_AGG (wire-format.md classification).
  output reg  [1:0] desc_class,
  // tuser of the last beat (any class).
  output reg  desc_rx_error,
  // The frame broke the tkeep contract on some beat (docs/rtl.md, "tkeep outside the
  // contract"): a beat that is not last with a byte not kept (tkeep = 0 included), or a last
  // beat with a hole (a kept byte above one that is not; a last beat with tkeep = 0 is a null
  // beat that ends the frame, as AXI4-Stream allows, and no hole). Any class.
  output reg  desc_keep_bad,
  // An aggregation frame that is not well-formed (0 for other classes).
  output reg  desc_malformed,
  // Header fields; meaningful for aggregation frames of at least 64 bytes.
  output wire [7:0] desc_flags,
  output wire [15:0] desc_jid,
  output wire [7:0] desc_tid,
  output wire [15:0] desc_count,
  output wire [31:0] desc_vid,
  output wire [15:0] desc_rank,
  // IPv4 ECN (the low two bits of the TOS byte).
  output wire [1:0] desc_ecn,
  // For rebuilding the header: eth.dst (byte 0 in [47:40]), the TOS byte, ipv4.dst, and the
  // ones'-complement sum (folded, not inverted) of the IPv4 header words that a rebuilt
  // header copies unchanged: total length, identification, flags/fragment, TTL/protocol.
  output wire [47:0] desc_eth_dst,
  output wire [7:0] desc_tos,
  output wire [31:0] desc_ip_dst,
  output wire [15:0] desc_csum_part,
  // JID and TID as they stand during the frame's last beat (live when that beat carries them):
  // the port compares its contexts with them then.
  output wire [15:0] hdr_jid,
  output wire [7:0] hdr_tid,
  // Bytes in the beat on the bus (tkeep's top set bit + 1; 0 when bit 0 is clear), for the
  // port's bypass FIFO.
  output wire [$clog2(DATA_W/8):0] beat_bytes
);

`include "panama_defs.vh"
`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W <= 4096 && (DATA_W & (DATA_W - 1)) == 0,
                  "panama_parser: DATA_W must be a power of two, 64..4096")
  `PANAMA_REQUIRE(g_req_desc_stages, DESC_STAGES == 1 || DESC_STAGES == 2,
                  "panama_parser: DESC_STAGES must be 1 or 2")
  `PANAMA_REQUIRE(g_req_elem_bytes, ELEM_BYTES == 2 || ELEM_BYTES == 4,
                  "panama_parser: ELEM_BYTES must be 2 or 4")
  `PANAMA_REQUIRE(g_req_max_elems, MAX_ELEMS >= 1,
                  "panama_parser: MAX_ELEMS must be at least 1")

  // Bytes per beat.
  localparam BB = DATA_W / 8;
  // Bits of a byte index within a beat.
  localparam KIW = $clog2(BB);
  // Header bytes kept: offsets 0 .. HB-1 (the last one is RANK's low byte). Bytes no output
  // depends on (eth.src, the checksum, ipv4.src, the UDP source port and checksum, RESERVED) are
  // removed by synthesis.
  localparam HB = OFF_RANK + 2;
  // Header bytes lie in beats 0..BEAT_SAT-1; the beat counter stops at BEAT_SAT.
  localparam BEAT_SAT = (HB - 1) / BB + 1;
  localparam BEAT_W = BEAT_SAT < 2 ? 1 : $clog2(BEAT_SAT + 1);
  // Length counter width: 17 bits hold every length a well-formed frame can have
  // (up to 64 + 65485 bytes); it saturates, so a longer frame never wraps.
  localparam LEN_W = 17;
  localparam [15:0] MAX_COUNT = MAX_ELEMS[15:0];
  // Constants sized to what they are compared with or added to.
  localparam [LEN_W:0] BEAT_BYTES = BB;
  localparam [LEN_W-1:0] LEN_ETH_HDR = OFF_IP[LEN_W-1:0];
  localparam [LEN_W-1:0] LEN_MIN_CLASSIFY = MIN_CLASSIFY_BYTES[LEN_W-1:0];
  localparam integer UDP_LEN_FIXED_I = HDR_BYTES - OFF_UDP_SPORT;
  localparam [18:0] UDP_LEN_FIXED = UDP_LEN_FIXED_I[18:0];
  localparam [18:0] FRAME_LEN_FIXED = HDR_BYTES[18:0];
  // log2 of the element size: the payload is COUNT << ES_SHIFT bytes.
  localparam ES_SHIFT = ELEM_BYTES == 4 ? 2 : 1;

  // Position in the current frame: beats seen so far (saturating at BEAT_SAT) and bytes in
  // the beats before this one (saturating at all ones). Both return to 0 after a last beat.
  reg [BEAT_W-1:0] beat_q;
  reg [LEN_W-1:0] len_q;
  wire beat = s_axis_tvalid;
  wire last_beat = s_axis_tvalid & s_axis_tlast;
  wire [LEN_W:0] len_step = {1'b0, len_q} + BEAT_BYTES;
  always @(posedge clk) begin
    if (rst) begin
      beat_q <= {BEAT_W{1'b0}};
      len_q <= {LEN_W{1'b0}};
    end else if (last_beat) begin
      beat_q <= {BEAT_W{1'b0}};
      len_q <= {LEN_W{1'b0}};
    end else if (beat) begin
      if (beat_q != BEAT_SAT[BEAT_W-1:0]) beat_q <= beat_q + 1'b1;
      len_q <= len_step[LEN_W] ? {LEN_W{1'b1}} : len_step[LEN_W-1:0];
    end
  end

  // Bytes in this beat: tkeep is contiguous from bit 0, so its top set bit, found without a
  // carry chain (keep_top is one-hot), encodes the count minus one by OR trees.
  wire [BB-1:0] keep_top = s_axis_tkeep & ~{1'b0, s_axis_tkeep[BB-1:1]};
  // Bit 0 has index 0: no OR tree reads it.
  wire unused_keep_top = keep_top[0];
  wire [KIW-1:0] keep_idx;
  genvar j, b;
  generate
    for (j = 0; j < KIW; j = j + 1) begin : g_kidx
      wire [BB-1:0] sel;
      for (b = 0; b < BB; b = b + 1) begin : g_b
        if (((b >> j) & 1) == 1) begin : g_on
          assign sel[b] = keep_top[b];
        end else begin : g_off
          assign sel[b] = 1'b0;
        end
      end
      assign keep_idx[j] = |sel;
    end
  endgenerate
  assign beat_bytes = s_axis_tkeep[0] ? {1'b0, keep_idx} + 1'b1 : {(KIW+1){1'b0}};
  wire [LEN_W:0] len_sum = {1'b0, len_q} + {{(LEN_W-KIW){1'b0}}, beat_bytes};

  // tkeep against the contract, per beat and then over the frame: no carry chain (a hole is a
  // kept byte right above one not kept). keep_bad_q: an earlier beat of this frame broke it.
  wire keep_hole = |(s_axis_tkeep[BB-1:1] & ~s_axis_tkeep[BB-2:0]);
  wire beat_keep_bad = s_axis_tlast ? keep_hole : ~&s_axis_tkeep;
  reg keep_bad_q;
  always @(posedge clk) begin
    if (rst || last_beat) keep_bad_q <= 1'b0;
    else if (beat && beat_keep_bad) keep_bad_q <= 1'b1;
  end
  wire frame_keep_bad = keep_bad_q | beat_keep_bad;  // read on the last beat
  // The whole frame's length on its last beat, saturating.
  wire [LEN_W-1:0] len_total = len_sum[LEN_W] ? {LEN_W{1'b1}} : len_sum[LEN_W-1:0];

  // Header bytes: each is captured from the beat that carries it; on the last beat the live
  // byte is used when that beat carries it (a frame may end in the beat of its header). Bytes
  // past a short frame's end are stale, but no decision reads them: classification needs
  // 42 bytes, and a shorter-than-64-byte aggregation frame is malformed whatever they hold.
  // They need no reset. Byte k at hdr[8*k +: 8].
  reg [8*HB-1:0] hdr_q;
  wire [8*HB-1:0] hdr;
  genvar k;
  generate
    for (k = 0; k < HB; k = k + 1) begin : g_hdr
      // The beat that carries byte k.
      localparam integer KBI = k / BB;
      localparam [BEAT_W-1:0] KB = KBI[BEAT_W-1:0];
      wire [7:0] live = s_axis_tdata[8*(k % BB) +: 8];
      always @(posedge clk) begin
        if (beat && beat_q == KB) hdr_q[8*k +: 8] <= live;
      end
      assign hdr[8*k +: 8] = beat_q == KB ? live : hdr_q[8*k +: 8];
    end
  endgenerate
  // What the checks read: with one stage, the live view and length of the last beat; with
  // two, in the cycle after it, the kept bytes (every header byte of the frame is in hdr_q then:
  // the next frame's first beat is written into it at the end of that cycle at the earliest)
  // and the length registered.
  localparam PIPE = DESC_STAGES > 1;
  wire [8*HB-1:0] chk;
  wire [LEN_W-1:0] chk_len;
  wire chk_last, chk_user, chk_keep_bad;
  wire [15:0] chk_port;
  generate
    if (PIPE) begin : g_stage1
      reg [LEN_W-1:0] len1_q;
      reg v1_q, user1_q, keep1_q;
      reg [15:0] port1_q;
      always @(posedge clk) begin
        if (rst) v1_q <= 1'b0;
        else v1_q <= last_beat;
        len1_q <= len_total;
        user1_q <= s_axis_tuser;
        keep1_q <= frame_keep_bad;
        port1_q <= agg_port;
      end
      assign chk = hdr_q;
      assign chk_len = len1_q;
      assign chk_last = v1_q;
      assign chk_user = user1_q;
      assign chk_keep_bad = keep1_q;
      assign chk_port = port1_q;
      wire unused_view = ^hdr;  // the live view: only hdr_jid and hdr_tid read it
    end else begin : g_live
      assign chk = hdr;
      assign chk_len = len_total;
      assign chk_last = last_beat;
      assign chk_user = s_axis_tuser;
      assign chk_keep_bad = frame_keep_bad;
      assign chk_port = agg_port;
    end
  endgenerate
  // The rest of the data bus is not inspected (it goes to the buffer, not here), nor are the
  // header bytes no decision or output reads.
  wire unused_tdata = ^s_axis_tdata;
  wire unused_hdr = ^{chk[8*OFF_ETH_SRC +: 48], chk[8*OFF_IP_CSUM +: 48], chk[8*OFF_UDP_SPORT +: 16],
                      chk[8*OFF_UDP_CSUM +: 16], chk[8*(OFF_TID+1) +: 8]};
  // Bytes the descriptor takes from the kept bytes (below), not from what the checks read:
  // eth.dst, the identification and TTL (checksum words), ipv4.dst, FLAGS, VID, RANK, the TOS
  // byte's ECN; DF with the reserved bit, which no check reads; JID and TID (hdr_jid, hdr_tid
  // are the live view's).
  wire unused_live = ^{chk[8*OFF_ETH_DST +: 48], chk[8*(OFF_IP_TOTAL_LEN+2) +: 16], chk[8*(OFF_IP_PROTO-1) +: 8],
                       chk[8*OFF_IP_DST +: 32], chk[8*OFF_FLAGS +: 8], chk[8*OFF_VID +: 32], chk[8*OFF_RANK +: 16],
                       chk[8*OFF_IP_TOS +: 2], chk[8*OFF_IP_FRAG+6 +: 2], chk[8*OFF_JID +: 16], chk[8*OFF_TID +: 8]};

  // Byte k of the frame.
  `define PANAMA_PARSER_BYTE(k) chk[8*(k) +: 8]
  wire [15:0] eth_type = {`PANAMA_PARSER_BYTE(OFF_ETH_TYPE), `PANAMA_PARSER_BYTE(OFF_ETH_TYPE+1)};
  wire [7:0] ver_ihl = `PANAMA_PARSER_BYTE(OFF_IP);
  wire [5:0] dscp = chk[8*OFF_IP_TOS+2 +: 6];
  wire [15:0] ip_total_len = {`PANAMA_PARSER_BYTE(OFF_IP_TOTAL_LEN), `PANAMA_PARSER_BYTE(OFF_IP_TOTAL_LEN+1)};
  // MF and the offset; DF (bit 14) and the reserved bit are not looked at.
  wire [13:0] ip_frag = {chk[8*OFF_IP_FRAG +: 6], `PANAMA_PARSER_BYTE(OFF_IP_FRAG+1)};
  wire [7:0] ip_proto = `PANAMA_PARSER_BYTE(OFF_IP_PROTO);
  wire [15:0] udp_dport = {`PANAMA_PARSER_BYTE(OFF_UDP_DPORT), `PANAMA_PARSER_BYTE(OFF_UDP_DPORT+1)};
  wire [15:0] udp_len = {`PANAMA_PARSER_BYTE(OFF_UDP_LEN), `PANAMA_PARSER_BYTE(OFF_UDP_LEN+1)};
  wire [15:0] count = {`PANAMA_PARSER_BYTE(OFF_COUNT), `PANAMA_PARSER_BYTE(OFF_COUNT+1)};
  assign hdr_jid = {hdr[8*OFF_JID +: 8], hdr[8*(OFF_JID+1) +: 8]};
  assign hdr_tid = hdr[8*OFF_TID +: 8];
  // wire-format.md classification: at least 42 bytes, eth.type 0x0800 (no VLAN tag), IPv4
  // without options (0x45), DSCP 56, not a fragment (MF = 0, offset 0; DF ignored), UDP to the
  // aggregation port.
  wire is_runt = chk_len < LEN_ETH_HDR;
  wire is_agg = chk_len >= LEN_MIN_CLASSIFY && eth_type == ETHERTYPE_IPV4 && ver_ihl == IPV4_VER_IHL &&
                dscp == AGG_DSCP && ip_frag == 14'd0 && ip_proto == IP_PROTO_UDP &&
                udp_dport == chk_port;

  // Well-formedness: VER 1, 1 <= COUNT <= MAX_ELEMS, UDP length = 30 + ES*COUNT, IPv4 total
  // length = length - 14, length = 64 + ES*COUNT; exact, as the 17-bit length saturates only
  // far above the longest well-formed frame (65548 bytes).
  wire [17:0] payload_bytes = {2'b00, count} << ES_SHIFT;
  wire bad_ver = `PANAMA_PARSER_BYTE(OFF_VER) != AGG_VERSION;
  wire bad_count = count == 16'd0 || count > MAX_COUNT;
  wire bad_udp_len = {3'b000, udp_len} != {1'b0, payload_bytes} + UDP_LEN_FIXED;
  wire bad_ip_len = {1'b0, ip_total_len} != chk_len - LEN_ETH_HDR;
  wire bad_frame_len = {2'b00, chk_len} != {1'b0, payload_bytes} + FRAME_LEN_FIXED;
  wire malformed = bad_ver | bad_count | bad_udp_len | bad_ip_len | bad_frame_len;

  always @(posedge clk) begin
    if (rst) desc_valid <= 1'b0;
    else desc_valid <= chk_last;
  end

  // Descriptor fields need no reset: desc_valid qualifies them.
  always @(posedge clk) begin
    if (chk_last) begin
      desc_len <= chk_len[LEN_W-1] ? 16'hffff : chk_len[15:0];
      desc_too_long <= chk_len[LEN_W-1];
      desc_class <= is_runt ? CLASS_RUNT : is_agg ? CLASS_AGG : CLASS_BYPASS;
      desc_rx_error <= chk_user;
      desc_keep_bad <= chk_keep_bad;
      desc_malformed <= is_agg & malformed;
    end
  end
  `undef PANAMA_PARSER_BYTE

  // The header fields of the descriptor, from the kept bytes (hdr_q has every header byte of
  // the frame from the cycle after its last beat until the next frame's beat carrying it). With
  // two stages the descriptor is a cycle later, when the next frame's first beat may already
  // be in hdr_q: the bytes of beat 0 come from a copy taken the cycle before (hdr0_q); the
  // next frame's second beat is written at the end of the descriptor's cycle at the earliest.
  localparam B0 = HB < BB ? HB : BB;
  // Only the descriptor's fields are read from it.
  /* verilator lint_off UNUSEDSIGNAL */
  wire [8*HB-1:0] kept;
  /* verilator lint_on UNUSEDSIGNAL */
  generate
    if (PIPE) begin : g_kept2
      reg [8*B0-1:0] hdr0_q;
      always @(posedge clk) if (chk_last) hdr0_q <= hdr_q[8*B0-1:0];
      if (HB > B0) begin : g_rest
        assign kept = {hdr_q[8*HB-1:8*B0], hdr0_q};
      end else begin : g_all
        assign kept = hdr0_q;
      end
    end else begin : g_kept1
      assign kept = hdr_q;
    end
  endgenerate
  `define PANAMA_PARSER_KEPT(k) kept[8*(k) +: 8]
  assign desc_flags = `PANAMA_PARSER_KEPT(OFF_FLAGS);
  assign desc_jid = {`PANAMA_PARSER_KEPT(OFF_JID), `PANAMA_PARSER_KEPT(OFF_JID+1)};
  assign desc_tid = `PANAMA_PARSER_KEPT(OFF_TID);
  assign desc_count = {`PANAMA_PARSER_KEPT(OFF_COUNT), `PANAMA_PARSER_KEPT(OFF_COUNT+1)};
  // Multi-byte fields are big-endian on the wire: byte OFF first, i.e. most significant.
  assign desc_vid = {`PANAMA_PARSER_KEPT(OFF_VID), `PANAMA_PARSER_KEPT(OFF_VID+1), `PANAMA_PARSER_KEPT(OFF_VID+2),
                     `PANAMA_PARSER_KEPT(OFF_VID+3)};
  assign desc_rank = {`PANAMA_PARSER_KEPT(OFF_RANK), `PANAMA_PARSER_KEPT(OFF_RANK+1)};
  assign desc_tos = `PANAMA_PARSER_KEPT(OFF_IP_TOS);
  assign desc_ecn = desc_tos[1:0];
  assign desc_eth_dst = {`PANAMA_PARSER_KEPT(OFF_ETH_DST), `PANAMA_PARSER_KEPT(OFF_ETH_DST+1),
                         `PANAMA_PARSER_KEPT(OFF_ETH_DST+2), `PANAMA_PARSER_KEPT(OFF_ETH_DST+3),
                         `PANAMA_PARSER_KEPT(OFF_ETH_DST+4), `PANAMA_PARSER_KEPT(OFF_ETH_DST+5)};
  assign desc_ip_dst = {`PANAMA_PARSER_KEPT(OFF_IP_DST), `PANAMA_PARSER_KEPT(OFF_IP_DST+1),
                        `PANAMA_PARSER_KEPT(OFF_IP_DST+2), `PANAMA_PARSER_KEPT(OFF_IP_DST+3)};
  // RFC 1071 arithmetic: a 16-bit ones'-complement sum is the binary sum with its carries
  // folded back in. The words a rebuilt header copies unchanged: total length, identification,
  // flags/fragment, TTL/protocol.
  wire [17:0] csum_wide = {2'b00, `PANAMA_PARSER_KEPT(OFF_IP_TOTAL_LEN), `PANAMA_PARSER_KEPT(OFF_IP_TOTAL_LEN+1)} +
                          {2'b00, `PANAMA_PARSER_KEPT(OFF_IP_TOTAL_LEN+2), `PANAMA_PARSER_KEPT(OFF_IP_TOTAL_LEN+3)} +
                          {2'b00, `PANAMA_PARSER_KEPT(OFF_IP_FRAG), `PANAMA_PARSER_KEPT(OFF_IP_FRAG+1)} +
                          {2'b00, `PANAMA_PARSER_KEPT(OFF_IP_PROTO-1), `PANAMA_PARSER_KEPT(OFF_IP_PROTO)};
  wire [16:0] csum_fold1 = {1'b0, csum_wide[15:0]} + {15'd0, csum_wide[17:16]};
  assign desc_csum_part = csum_fold1[15:0] + {15'd0, csum_fold1[16]};
  `undef PANAMA_PARSER_KEPT

endmodule

`default_nettype wire
