// SPDX-License-Identifier: MIT
// The register file (docs/rtl.md, "Register file"): an AXI4-Lite slave implementing the register
// map (regmap.json, gen/config/regmap.h) exactly as the SystemC model's RegFile does, the per-context
// configuration outputs the datapath reads, and every 64-bit saturating counter of accelerator.md
// rule 10, held in block RAM behind a read-modify-write pipeline. Every address and offset comes
// from panama_defs.vh, written from the C++ RegMap; panama-gen checks that the map holds exactly
// the registers this module implements (regs_params, gen/config/regs_rtl.cpp).
`timescale 1ns / 1ps
`default_nettype none

module panama_regs #(
  // Ports N, 2..256: sixteen counters each, one member bit per context.
  parameter PORTS = 4,
  // Contexts C: one configuration block and two counters (completed, dropped) each.
  parameter CONTEXTS = 8,
  // Address bits: the register map spans 2^ADDR_W bytes (RM_AW).
  parameter ADDR_W = 14,
  // Bits of each counter's pending count: enough for NCNT pulses (one round of the flush).
  parameter PEND_W = 7,
  // The value read from BUS_BITS (the data bus width W).
  parameter BUS_BITS = 64,
  // The value read from MAX_ELEMS (the largest COUNT accepted).
  parameter MAX_ELEMS = 362,
  // The value read from FORMAT ([1:0] format, [8] FTZ, [9] exact sum; regmap.json).
  parameter FORMAT = 0,
  // The value read from BUFFER_BYTES (buffer bytes per port).
  parameter BUFFER_BYTES = 65536
) (
  input  wire clk,
  input  wire rst,
  // AXI4-Lite slave (32-bit data, byte addresses; docs/rtl.md "Register file"). Every
  // response is OKAY; wstrb and the prot signals are ignored (writes are whole words).
  input  wire [ADDR_W-1:0] s_axil_awaddr,
  input  wire [2:0] s_axil_awprot,
  input  wire s_axil_awvalid,
  output wire s_axil_awready,
  input  wire [31:0] s_axil_wdata,
  input  wire [3:0] s_axil_wstrb,
  input  wire s_axil_wvalid,
  output wire s_axil_wready,
  output wire [1:0] s_axil_bresp,
  output wire s_axil_bvalid,
  input  wire s_axil_bready,
  input  wire [ADDR_W-1:0] s_axil_araddr,
  input  wire [2:0] s_axil_arprot,
  input  wire s_axil_arvalid,
  output wire s_axil_arready,
  output wire [31:0] s_axil_rdata,
  output wire [1:0] s_axil_rresp,
  output wire s_axil_rvalid,
  input  wire s_axil_rready,
  // The aggregation UDP destination port (AGG_PORT).
  output wire [15:0] agg_port,
  // Context c's configuration at [c*16 +: 16] (likewise for every width below).
  output wire [CONTEXTS-1:0] ctx_enable,
  // One-cycle pulse with the rising edge of ctx_enable[c]: the datapath sets E := 0.
  output wire [CONTEXTS-1:0] ctx_enable_set,
  // ~ctx_enable | ctx_enable_set, as a register of its own (the scheduler drops the looks of
  // such a context; its fan-out starts from flip-flops).
  output wire [CONTEXTS-1:0] ctx_kill,
  output wire [CONTEXTS*16-1:0] ctx_jid,
  output wire [CONTEXTS*8-1:0] ctx_tid,
  // Member bitmap of context c at [c*N +: N], bit i = port i.
  output wire [CONTEXTS*PORTS-1:0] ctx_members,
  // Mode: 1 upstream, 0 multicast (root).
  output wire [CONTEXTS-1:0] ctx_upstream,
  output wire [CONTEXTS*8-1:0] ctx_upstream_port,
  // The header fields of context hdr_ctx, read from distributed RAM without a clock:
  // {group MAC, own MAC, group IP, own IP}. MACs: byte 0 (first on the wire) in bits [47:40];
  // IPv4 a.b.c.d = {a, b, c, d}. The RAM is cleared in the 2^clog2(C) cycles after reset.
  input  wire [(CONTEXTS > 1 ? $clog2(CONTEXTS) : 1)-1:0] hdr_ctx,
  output wire [159:0] ctx_hdr,
  // Timeout in cycles, 0 = never.
  output wire [CONTEXTS*32-1:0] ctx_timeout,
  // The datapath's expected VID of each context, read through CTX_EXPECTED_VID.
  input  wire [CONTEXTS*32-1:0] ctx_expected_vid,
  // One-cycle +1 pulses: port p's counter k (regmap.h PortCounter order) at bit p*16+k.
  input  wire [PORTS*16-1:0] port_count_inc,
  input  wire [CONTEXTS-1:0] ctx_completed_inc,
  input  wire [CONTEXTS-1:0] ctx_dropped_inc,
  input  wire agg_tx_inc
);

`include "panama_defs.vh"
`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_ports, PORTS >= 2 && PORTS <= 256,
                  "panama_regs: PORTS must be 2..256")
  `PANAMA_REQUIRE(g_req_contexts, CONTEXTS >= 1 && CONTEXTS <= 256,
                  "panama_regs: CONTEXTS must be 1..256")
  `PANAMA_REQUIRE(g_req_addr_w, ADDR_W == RM_AW,
                  "panama_regs: ADDR_W must be the register map's RM_AW")
  `PANAMA_REQUIRE(g_req_pend_w, PEND_W >= 1,
                  "panama_regs: PEND_W must be at least 1")

  // Ports and contexts (RM_MEMBER_WORDS member bitmap words per context).
  localparam N = PORTS;
  localparam C = CONTEXTS;
  localparam MW = RM_MEMBER_WORDS;
  localparam AW = ADDR_W;
  // Context blocks are 256 bytes (address bits [7:0] are the offset, the bits above the
  // context), port blocks 128 bytes (bits [6:0]: sixteen counters of 8 bytes).
  localparam CXW = AW - 8;
  localparam PXW = AW - 7;
  // Counters, 64 bits each, in one flat array: port p's counter k at p*16+k, then
  // vectors_completed of each context, vectors_dropped of each context, agg_tx_frames.
  localparam NCNT = 16 * N + 2 * C + 1;
  localparam CIW = $clog2(NCNT);
  localparam integer CNT_COMPLETED_I = 16 * N;
  localparam integer CNT_DROPPED_I = 16 * N + C;
  localparam integer CNT_AGG_TX_I = 16 * N + 2 * C;
  localparam [CIW-1:0] CNT_COMPLETED = CNT_COMPLETED_I[CIW-1:0];
  localparam [CIW-1:0] CNT_DROPPED = CNT_DROPPED_I[CIW-1:0];
  localparam [CIW-1:0] CNT_AGG_TX = CNT_AGG_TX_I[CIW-1:0];
  // Context blocks [CTX_BASE, CTX_END), port blocks [PORT_BASE, PORT_END). The ends are AW+1
  // bits wide: PORT_END may be the map's size.
  localparam integer CTX_END_I = RM_CTX_BASE + C * RM_CTX_STRIDE;
  localparam integer PORT_END_I = RM_PORT_BASE + N * RM_PORT_STRIDE;
  localparam [AW-1:0] CTX_BASE = RM_CTX_BASE[AW-1:0];
  localparam [AW:0] CTX_END = CTX_END_I[AW:0];
  localparam [AW-1:0] PORT_BASE = RM_PORT_BASE[AW-1:0];
  localparam [AW:0] PORT_END = PORT_END_I[AW:0];
  // Global registers (regmap.json "global").
  localparam [AW-1:0] A_ID = RM_A_ID[AW-1:0];
  localparam [AW-1:0] A_VERSION = RM_A_VERSION[AW-1:0];
  localparam [AW-1:0] A_PORTS = RM_A_PORTS[AW-1:0];
  localparam [AW-1:0] A_CONTEXTS = RM_A_CONTEXTS[AW-1:0];
  localparam [AW-1:0] A_BUS_BITS = RM_A_BUS_BITS[AW-1:0];
  localparam [AW-1:0] A_MAX_ELEMS = RM_A_MAX_ELEMS[AW-1:0];
  localparam [AW-1:0] A_FORMAT = RM_A_FORMAT[AW-1:0];
  localparam [AW-1:0] A_BUFFER_BYTES = RM_A_BUFFER_BYTES[AW-1:0];
  localparam [AW-1:0] A_AGG_PORT = RM_A_AGG_PORT[AW-1:0];
  localparam [AW-1:0] A_CLEAR_COUNTERS = RM_A_CLEAR_COUNTERS[AW-1:0];
  localparam [AW-1:0] A_AGG_TX_FRAMES_LO = RM_A_AGG_TX_FRAMES_LO[AW-1:0];
  localparam [AW-1:0] A_AGG_TX_FRAMES_HI = RM_A_AGG_TX_FRAMES_HI[AW-1:0];
  // The read values of the constant global registers.
  localparam [31:0] PORTS_WORD = N;
  localparam [31:0] CONTEXTS_WORD = C;
  localparam [31:0] BUS_BITS_WORD = BUS_BITS;
  localparam [31:0] MAX_ELEMS_WORD = MAX_ELEMS;
  localparam [31:0] FORMAT_WORD = FORMAT;
  localparam [31:0] BUFFER_BYTES_WORD = BUFFER_BYTES;
  // Context block offsets (regmap.json "context_block"); member word k at O_CTX_MEMBERS0 + 4k.
  localparam [7:0] O_CTX_CTRL = RM_O_CTX_CTRL[7:0];
  localparam [7:0] O_CTX_STATUS = RM_O_CTX_STATUS[7:0];
  localparam [7:0] O_CTX_JID = RM_O_CTX_JID[7:0];
  localparam [7:0] O_CTX_TID = RM_O_CTX_TID[7:0];
  localparam [7:0] O_CTX_MODE = RM_O_CTX_MODE[7:0];
  localparam [7:0] O_CTX_UPSTREAM_PORT = RM_O_CTX_UPSTREAM_PORT[7:0];
  localparam [7:0] O_CTX_GROUP_MAC_HI = RM_O_CTX_GROUP_MAC_HI[7:0];
  localparam [7:0] O_CTX_GROUP_MAC_LO = RM_O_CTX_GROUP_MAC_LO[7:0];
  localparam [7:0] O_CTX_GROUP_IP = RM_O_CTX_GROUP_IP[7:0];
  localparam [7:0] O_CTX_OWN_MAC_HI = RM_O_CTX_OWN_MAC_HI[7:0];
  localparam [7:0] O_CTX_OWN_MAC_LO = RM_O_CTX_OWN_MAC_LO[7:0];
  localparam [7:0] O_CTX_OWN_IP = RM_O_CTX_OWN_IP[7:0];
  localparam [7:0] O_CTX_TIMEOUT = RM_O_CTX_TIMEOUT[7:0];
  localparam [7:0] O_CTX_EXPECTED_VID = RM_O_CTX_EXPECTED_VID[7:0];
  localparam [7:0] O_CTX_VECTORS_COMPLETED_LO = RM_O_CTX_VECTORS_COMPLETED_LO[7:0];
  localparam [7:0] O_CTX_VECTORS_COMPLETED_HI = RM_O_CTX_VECTORS_COMPLETED_HI[7:0];
  localparam [7:0] O_CTX_VECTORS_DROPPED_LO = RM_O_CTX_VECTORS_DROPPED_LO[7:0];
  localparam [7:0] O_CTX_VECTORS_DROPPED_HI = RM_O_CTX_VECTORS_DROPPED_HI[7:0];
  localparam integer O_CTX_MEMBERS0_I = RM_O_CTX_MEMBERS0;
  // CTX_STATUS error bits 12..8, kept as err[4:0]: write while enabled, upstream port out
  // of range, duplicate (JID, TID), upstream port is a member, no members.
  localparam [8:0] N_9 = N;

  // Write channel: the address and the data are each taken into a one-entry holding
  // register as soon as they come (in either order or together); the write is done in the
  // second cycle after both are held (wr_arm_q: the enable checks of the addressed context are
  // taken from registers, ws_*_q, and their verdict is registered again, en_err_q) when no
  // response is pending, and the response is held until bready.
  reg aw_full_q;
  reg [AW-1:0] aw_addr_q;
  reg w_full_q;
  reg [31:0] w_data_q;
  reg bvalid_q;
  reg wr_arm1_q, wr_arm_q;
  wire clr_busy;  // the header-field RAM is being cleared after reset (below)
  wire wr_fire = aw_full_q & w_full_q & ~bvalid_q & wr_arm_q & ~clr_busy;
  assign s_axil_awready = ~aw_full_q;
  assign s_axil_wready = ~w_full_q;
  assign s_axil_bvalid = bvalid_q;
  assign s_axil_bresp = 2'b00;
  always @(posedge clk) begin
    if (rst) begin
      aw_full_q <= 1'b0;
      w_full_q <= 1'b0;
      bvalid_q <= 1'b0;
      wr_arm1_q <= 1'b0;
      wr_arm_q <= 1'b0;
    end else begin
      // Only a write changes what the checks read, and one is in flight at a time: the
      // registered checks of the cycles before the write are those of the write's cycle.
      wr_arm1_q <= aw_full_q & w_full_q & ~wr_fire;
      wr_arm_q <= wr_arm1_q & aw_full_q & w_full_q & ~wr_fire;
      if (wr_fire) begin
        aw_full_q <= 1'b0;
        w_full_q <= 1'b0;
      end else begin
        if (s_axil_awvalid) aw_full_q <= 1'b1;
        if (s_axil_wvalid) w_full_q <= 1'b1;
      end
      if (wr_fire) bvalid_q <= 1'b1;
      else if (s_axil_bready) bvalid_q <= 1'b0;
    end
  end
  // The holding registers need no reset: the full flags qualify them.
  always @(posedge clk) begin
    if (s_axil_awvalid & ~aw_full_q) aw_addr_q <= s_axil_awaddr;
    if (s_axil_wvalid & ~w_full_q) w_data_q <= s_axil_wdata;
  end

  // Read channel (docs/rtl.md "Register file", "Counters in block RAM"): the address is
  // held; D: it is decoded into registers (rd_fire, one read in flight at a time); S0: the
  // read samples the state (rd_smp; a counter LO read waits for its counter's slot in the
  // counter pipeline); S1..S3: the counter's sum comes out of the pipeline; then rdata_q and
  // rvalid_q are registered and held until rready. A new address may be taken meanwhile.
  reg ar_full_q;
  reg [AW-1:0] ar_addr_q;
  reg rvalid_q;
  reg [31:0] rdata_q;
  // A read between D and its rvalid; the decoded read waiting for its S0.
  reg rd_busy_q;
  reg rd_dec_q;
  reg [AW-1:0] rd_addr_q;
  reg rd_lo_q;
  reg rd_hi_q;
  reg [CIW-1:0] rd_idx_q;
  wire rd_fire = ar_full_q & ~rd_busy_q & ~rvalid_q & ~clr_busy;
  wire rd_smp;
  reg [2:0] rd_stage_q;  // the read in S1, S2, S3
  assign s_axil_arready = ~ar_full_q;
  assign s_axil_rvalid = rvalid_q;
  assign s_axil_rdata = rdata_q;
  assign s_axil_rresp = 2'b00;
  always @(posedge clk) begin
    if (s_axil_arvalid & ~ar_full_q) ar_addr_q <= s_axil_araddr;
  end
  // Protection and byte strobes carry nothing this slave uses (docs/rtl.md).
  wire unused_axil = ^{s_axil_awprot, s_axil_arprot, s_axil_wstrb};

  // Write decode. Addresses are compared in full (byte addresses), so an unaligned address
  // hits no register, as in the model.
  wire wr_in_ctx = aw_addr_q >= CTX_BASE && {1'b0, aw_addr_q} < CTX_END;
  wire [CXW-1:0] wr_ctx = aw_addr_q[AW-1:8] - CTX_BASE[AW-1:8];
  wire [7:0] wr_off = aw_addr_q[7:0];
  wire [C-1:0] wr_ctx_hit;
  wire wr_ctrl = wr_off == O_CTX_CTRL;
  // Writes the model treats as context field writes (refused while enabled): every offset
  // but CTRL, STATUS, EXPECTED_VID and the counter words.
  wire wr_field = !wr_ctrl && wr_off != O_CTX_STATUS && wr_off != O_CTX_EXPECTED_VID &&
                  !(wr_off >= O_CTX_VECTORS_COMPLETED_LO && wr_off <= O_CTX_VECTORS_DROPPED_HI);
  wire wr_agg_port = wr_fire && aw_addr_q == A_AGG_PORT;
  wire wr_clear = wr_fire && aw_addr_q == A_CLEAR_COUNTERS && w_data_q[0];
  // Which member bitmap word the write (wr_off) and the read (rd_off) address.
  wire [7:0] rd_off;
  wire [MW-1:0] wr_mem_word, rd_mem_word;
  genvar g;
  generate
    for (g = 0; g < MW; g = g + 1) begin : g_mem_word
      localparam integer OFF_I = O_CTX_MEMBERS0_I + 4 * g;
      localparam [7:0] OFF = OFF_I[7:0];
      assign wr_mem_word[g] = wr_off == OFF;
      assign rd_mem_word[g] = rd_off == OFF;
    end
  endgenerate

  // Context configuration, context c's fields at [c*width +: width].
  reg [C-1:0] en_q;
  reg [C-1:0] en_set_q;
  reg [C-1:0] kill_q;  // ~en_q | en_set_q, loaded with their next values
  reg [C*5-1:0] err_q;
  reg [C*16-1:0] jid_q;
  reg [C*8-1:0] tid_q;
  reg [C*N-1:0] mem_q;
  reg [C-1:0] up_q;
  reg [C*8-1:0] up_port_q;
  reg [C*32-1:0] tmo_q;
  assign ctx_enable = en_q;
  assign ctx_enable_set = en_set_q;
  assign ctx_kill = kill_q;
  assign ctx_jid = jid_q;
  assign ctx_tid = tid_q;
  assign ctx_members = mem_q;
  assign ctx_upstream = up_q;
  assign ctx_upstream_port = up_port_q;
  assign ctx_timeout = tmo_q;

  // The enable checks look at the context being written (one multiplexer for all contexts).
  // Each context ANDs its fields with its hit bit; the ORs below combine them.
  wire [C*N-1:0] ws_mem_m;
  wire [C-1:0] ws_up_m;
  wire [C*8-1:0] ws_up_port_m;
  wire [C*16-1:0] ws_jid_m;
  wire [C*8-1:0] ws_tid_m;
  reg [N-1:0] ws_mem;
  reg [7:0] ws_up_port;
  reg [15:0] ws_jid;
  reg [7:0] ws_tid;
  integer i;
  always @* begin
    ws_mem = {N{1'b0}};
    ws_up_port = 8'd0;
    ws_jid = 16'd0;
    ws_tid = 8'd0;
    for (i = 0; i < C; i = i + 1) begin
      ws_mem = ws_mem | ws_mem_m[i*N +: N];
      ws_up_port = ws_up_port | ws_up_port_m[i*8 +: 8];
      ws_jid = ws_jid | ws_jid_m[i*16 +: 16];
      ws_tid = ws_tid | ws_tid_m[i*8 +: 8];
    end
  end
  wire ws_up = |ws_up_m;
  // The addressed context's fields, registered for the enable checks (see wr_arm_q).
  reg [N-1:0] ws_mem_q;
  reg ws_up_q;
  reg [7:0] ws_up_port_q;
  reg [15:0] ws_jid_q;
  reg [7:0] ws_tid_q;
  always @(posedge clk) begin
    ws_mem_q <= ws_mem;
    ws_up_q <= ws_up;
    ws_up_port_q <= ws_up_port;
    ws_jid_q <= ws_jid;
    ws_tid_q <= ws_tid;
  end
  // Another enabled context with the same (JID, TID). The context being enabled is itself
  // disabled, so it never matches itself.
  wire [C-1:0] dup_hit;
  wire up_range = ws_up_q && {1'b0, ws_up_port_q} >= N_9;
  wire [N-1:0] up_onehot = {{(N-1){1'b0}}, 1'b1} << ws_up_port_q;
  wire up_member = ws_up_q && !up_range && |(ws_mem_q & up_onehot);
  wire [4:0] en_err_d = {1'b0, up_range, |dup_hit, up_member, ~|ws_mem_q};
  reg [4:0] en_err_q;
  always @(posedge clk) en_err_q <= en_err_d;

  // Per context: CTRL writes (enable with the checks, disable, clear the error bits) and
  // field writes, which only a disabled context takes (else ERR_WRITE_ENABLED).
  generate
    for (g = 0; g < C; g = g + 1) begin : g_ctx
      assign wr_ctx_hit[g] = wr_in_ctx && wr_ctx == g;
      assign ws_mem_m[g*N +: N] = mem_q[g*N +: N] & {N{wr_ctx_hit[g]}};
      assign ws_up_m[g] = up_q[g] & wr_ctx_hit[g];
      assign ws_up_port_m[g*8 +: 8] = up_port_q[g*8 +: 8] & {8{wr_ctx_hit[g]}};
      assign ws_jid_m[g*16 +: 16] = jid_q[g*16 +: 16] & {16{wr_ctx_hit[g]}};
      assign ws_tid_m[g*8 +: 8] = tid_q[g*8 +: 8] & {8{wr_ctx_hit[g]}};
      assign dup_hit[g] = en_q[g] && jid_q[g*16 +: 16] == ws_jid_q && tid_q[g*8 +: 8] == ws_tid_q;
      wire wsel = wr_fire & wr_ctx_hit[g];
      integer j;
      always @(posedge clk) begin
        if (rst) begin
          en_q[g] <= 1'b0;
          en_set_q[g] <= 1'b0;
          kill_q[g] <= 1'b1;
          err_q[g*5 +: 5] <= 5'd0;
          jid_q[g*16 +: 16] <= 16'd0;
          tid_q[g*8 +: 8] <= 8'd0;
          mem_q[g*N +: N] <= {N{1'b0}};
          up_q[g] <= 1'b0;
          up_port_q[g*8 +: 8] <= 8'd0;
          tmo_q[g*32 +: 32] <= 32'd0;
        end else begin
          en_set_q[g] <= 1'b0;
          kill_q[g] <= ~en_q[g];
          if (wsel && wr_ctrl) begin
            if (!w_data_q[0]) begin
              en_q[g] <= 1'b0;
              kill_q[g] <= 1'b1;
              err_q[g*5 +: 5] <= 5'd0;
            end else if (en_q[g]) begin
              err_q[g*5 +: 5] <= 5'd0;
            end else if (en_err_q == 5'd0) begin
              en_q[g] <= 1'b1;
              en_set_q[g] <= 1'b1;
              kill_q[g] <= 1'b1;
              err_q[g*5 +: 5] <= 5'd0;
            end else begin
              err_q[g*5 +: 5] <= en_err_q;
            end
          end else if (wsel && wr_field) begin
            if (en_q[g]) begin
              err_q[g*5+4] <= 1'b1;
            end else begin
              case (wr_off)
                O_CTX_JID: jid_q[g*16 +: 16] <= w_data_q[15:0];
                O_CTX_TID: tid_q[g*8 +: 8] <= w_data_q[7:0];
                O_CTX_MODE: up_q[g] <= w_data_q[0];
                O_CTX_UPSTREAM_PORT: up_port_q[g*8 +: 8] <= w_data_q[7:0];
                O_CTX_TIMEOUT: tmo_q[g*32 +: 32] <= w_data_q[31:0];
                default: ;
              endcase
              // Member word k holds ports 32k..32k+31 (bits of ports >= N do not exist).
              for (j = 0; j < N; j = j + 1)
                if (wr_mem_word[j/32]) mem_q[g*N+j] <= w_data_q[j%32];
            end
          end
        end
      end
    end
  endgenerate

  // The header fields (group MAC, group IP, own MAC, own IP: 160 bits per context) only the
  // result builder and register reads use, one context at a time, so they live in distributed
  // RAM (one per register word, HC = 2^clog2(C) words) instead of flip-flops: one write port (a
  // field write, as above), two read ports without a clock (the builder's context hdr_ctx and
  // the register read's). RAM has no reset: in the HC cycles after reset every word is written
  // with 0 (clr_busy; register reads and writes wait), so that a field reads 0 until written.
  localparam HA = C > 1 ? $clog2(C) : 1;
  localparam integer HC = 1 << HA;
  localparam integer HC_LAST_I = HC - 1;
  localparam [HA-1:0] HC_LAST = HC_LAST_I[HA-1:0];
  reg clr_busy_q;
  reg [HA-1:0] clr_a_q;
  assign clr_busy = clr_busy_q;
  always @(posedge clk) begin
    if (rst) begin
      clr_busy_q <= 1'b1;
      clr_a_q <= {HA{1'b0}};
    end else if (clr_busy_q) begin
      clr_busy_q <= clr_a_q != HC_LAST;
      clr_a_q <= clr_a_q + {{(HA-1){1'b0}}, 1'b1};
    end
  end
  // The written context (its low HA bits: wr_in_ctx makes it < C) and the read's.
  wire [HA-1:0] wr_ctx_h, rd_ctx_h;
  wire [CXW-1:0] rd_ctx;
  generate
    if (CXW >= HA) begin : g_hcut
      assign wr_ctx_h = wr_ctx[HA-1:0];
      assign rd_ctx_h = rd_ctx[HA-1:0];
    end else begin : g_hext
      assign wr_ctx_h = {{(HA-CXW){1'b0}}, wr_ctx};
      assign rd_ctx_h = {{(HA-CXW){1'b0}}, rd_ctx};
    end
  endgenerate
  wire hf_wr = wr_fire & wr_field & |(wr_ctx_hit & ~en_q);
  wire [HA-1:0] hf_a = clr_busy_q ? clr_a_q : wr_ctx_h;
  wire [31:0] hf_d = clr_busy_q ? 32'd0 : w_data_q;
  (* ram_style = "distributed" *) reg [15:0] gmh_mem [0:HC-1];
  (* ram_style = "distributed" *) reg [31:0] gml_mem [0:HC-1];
  (* ram_style = "distributed" *) reg [31:0] gip_mem [0:HC-1];
  (* ram_style = "distributed" *) reg [15:0] omh_mem [0:HC-1];
  (* ram_style = "distributed" *) reg [31:0] oml_mem [0:HC-1];
  (* ram_style = "distributed" *) reg [31:0] oip_mem [0:HC-1];
  always @(posedge clk) begin
    if (clr_busy_q | (hf_wr & (wr_off == O_CTX_GROUP_MAC_HI))) gmh_mem[hf_a] <= hf_d[15:0];
    if (clr_busy_q | (hf_wr & (wr_off == O_CTX_GROUP_MAC_LO))) gml_mem[hf_a] <= hf_d;
    if (clr_busy_q | (hf_wr & (wr_off == O_CTX_GROUP_IP))) gip_mem[hf_a] <= hf_d;
    if (clr_busy_q | (hf_wr & (wr_off == O_CTX_OWN_MAC_HI))) omh_mem[hf_a] <= hf_d[15:0];
    if (clr_busy_q | (hf_wr & (wr_off == O_CTX_OWN_MAC_LO))) oml_mem[hf_a] <= hf_d;
    if (clr_busy_q | (hf_wr & (wr_off == O_CTX_OWN_IP))) oip_mem[hf_a] <= hf_d;
  end
  assign ctx_hdr = {gmh_mem[hdr_ctx], gml_mem[hdr_ctx], omh_mem[hdr_ctx], oml_mem[hdr_ctx], gip_mem[hdr_ctx],
                    oip_mem[hdr_ctx]};
  // AGG_PORT: writes are ignored while any context is enabled (live traffic would be
  // classified by two ports).
  reg [15:0] agg_port_q;
  assign agg_port = agg_port_q;
  always @(posedge clk) begin
    if (rst) agg_port_q <= RM_AGG_PORT_RESET;
    else if (wr_agg_port && ~|en_q) agg_port_q <= w_data_q[15:0];
  end

  // Counters (docs/rtl.md, "Counters in block RAM"): 64-bit, saturating at all ones, held
  // in a RAM of NCNT words. Each counter's +1 pulses go into a small pending count (PW bits)
  // in flip-flops; one pipelined read-modify-write per cycle adds one counter's pending count
  // to its RAM word, round-robin over all counters. S0: take the pending count (the counter
  // restarts from this cycle's pulse) and read the RAM; S1: RAM data; S2: saturating add; S3:
  // the sum is written back. A LO read waits for its counter's turn (its S0 is the read's S0)
  // and its value is that S3 sum: at most NCNT cycles of waiting, and no multiplexer of the
  // pending counts beside the round robin's. A counter comes round again only NCNT >= 4 cycles
  // later, so every read of the RAM sees the counter's last write. A valid bit per counter
  // makes CLEAR_COUNTERS a one-cycle operation (an invalid word reads as 0), and the clear
  // cancels the write-back of every flush in flight. CLEAR_COUNTERS wins over a same-cycle
  // pulse.
  localparam PW = PEND_W;
  localparam integer NCNT_LAST_I = NCNT - 1;
  localparam [CIW-1:0] NCNT_LAST = NCNT_LAST_I[CIW-1:0];
  wire [NCNT-1:0] cnt_inc = {agg_tx_inc, ctx_dropped_inc, ctx_completed_inc, port_count_inc};
  reg [NCNT*PW-1:0] pend_q;
  reg [NCNT-1:0] vld_q;
  // The round-robin pointer: the counter in S0, as an index (the RAM address, the read's
  // compare) and as a one-hot ring (which counter restarts, which valid bit S3 sets: the
  // counter in S3 is the one three places behind, NCNT >= 4).
  reg [CIW-1:0] rr_q;
  reg [NCNT-1:0] rr_oh_q;
  // Flushes in S1, S2, S3: counter, write-back enable (cleared by CLEAR_COUNTERS).
  reg [CIW-1:0] s1_a, s2_a, s3_a;
  reg s1_we, s2_we, s3_we;
  reg [PW-1:0] s1_p, s2_p;
  reg s1_vld;
  reg [63:0] s2_d;
  reg [63:0] s3_sum;
  reg [63:0] ram_q;
  wire [63:0] sum;
  wire sum_c;
  // A LO read samples in its counter's S0.
  assign rd_smp = rd_dec_q & ~(rd_lo_q & (rd_idx_q != rr_q));
  wire [CIW-1:0] a0 = rr_q;
  // The pending count and valid bit of the round-robin counter: AND-OR multiplexers on the
  // ring.
  reg [PW-1:0] p_rr;
  wire v_rr = |(vld_q & rr_oh_q);
  always @* begin
    p_rr = {PW{1'b0}};
    for (i = 0; i < NCNT; i = i + 1) p_rr = p_rr | (pend_q[i*PW +: PW] & {PW{rr_oh_q[i]}});
  end
  // Per counter: the pending count (restarted by the slot) and the valid bit (set by the
  // write-back, cleared by CLEAR_COUNTERS).
  generate
    for (g = 0; g < NCNT; g = g + 1) begin : g_cnt
      wire take = rr_oh_q[g];
      // The counter in S3 is three places behind the one in S0.
      localparam integer G3 = (g + 3) % NCNT;
      always @(posedge clk) begin
        if (rst || wr_clear) pend_q[g*PW +: PW] <= {PW{1'b0}};
        else if (take) pend_q[g*PW +: PW] <= {{(PW-1){1'b0}}, cnt_inc[g]};
        else pend_q[g*PW +: PW] <= pend_q[g*PW +: PW] + {{(PW-1){1'b0}}, cnt_inc[g]};
        if (rst || wr_clear) vld_q[g] <= 1'b0;
        else if (s3_we && rr_oh_q[G3]) vld_q[g] <= 1'b1;
      end
    end
  endgenerate
  always @(posedge clk) begin
    if (rst) begin
      rr_q <= {CIW{1'b0}};
      rr_oh_q <= {{(NCNT-1){1'b0}}, 1'b1};
      s1_we <= 1'b0;
      s2_we <= 1'b0;
      s3_we <= 1'b0;
    end else begin
      rr_q <= rr_q == NCNT_LAST ? {CIW{1'b0}} : rr_q + {{(CIW-1){1'b0}}, 1'b1};
      rr_oh_q <= {rr_oh_q[NCNT-2:0], rr_oh_q[NCNT-1]};
      s1_we <= ~wr_clear;
      s2_we <= s1_we & ~wr_clear;
      s3_we <= s2_we & ~wr_clear;
    end
  end
  // The pipeline's data needs no reset: the write enables qualify it.
  always @(posedge clk) begin
    s1_a <= a0;
    s1_p <= p_rr;
    s1_vld <= v_rr;
    s2_a <= s1_a;
    s2_p <= s1_p;
    s2_d <= s1_vld ? ram_q : 64'd0;
    s3_a <= s2_a;
    s3_sum <= sum_c ? {64{1'b1}} : sum;
  end
  // The counter RAM: one read (S0) and one write (S3) port, read-first.
  (* ram_style = "block" *) reg [63:0] cnt_mem [0:NCNT-1];
  always @(posedge clk) begin
    if (s3_we) cnt_mem[s3_a] <= s3_sum;
    ram_q <= cnt_mem[a0];
  end
  // S2: the saturating add (a carry out means the sum passed 2^64 - 1).
  assign {sum_c, sum} = {1'b0, s2_d} + {{(65-PW){1'b0}}, s2_p};

  // Read decode: d_* from the held address (D: which counter, LO or HI), rd_* from the
  // decoded read's address (S0: the word of a configuration register).
  wire d_in_ctx = ar_addr_q >= CTX_BASE && {1'b0, ar_addr_q} < CTX_END;
  wire [CXW-1:0] d_ctx = ar_addr_q[AW-1:8] - CTX_BASE[AW-1:8];
  wire [7:0] d_off = ar_addr_q[7:0];
  wire d_in_port = ar_addr_q >= PORT_BASE && {1'b0, ar_addr_q} < PORT_END;
  wire [PXW-1:0] d_port = ar_addr_q[AW-1:7] - PORT_BASE[AW-1:7];
  wire [6:0] d_poff = ar_addr_q[6:0];
  wire rd_in_ctx = rd_addr_q >= CTX_BASE && {1'b0, rd_addr_q} < CTX_END;
  assign rd_ctx = rd_addr_q[AW-1:8] - CTX_BASE[AW-1:8];
  assign rd_off = rd_addr_q[7:0];
  // The read's context fields: the addressed context's by index first (one multiplexer per
  // field bit, not one word per context), then the word for rd_off; used only inside the
  // context blocks (rd_in_ctx), where the index is below C. A context's row of fields:
  // {expected VID, timeout, upstream port, TID, JID, error bits, mode, enable, members}.
  localparam ROW_W = 32 + 32 + 8 + 8 + 16 + 5 + 1 + 1 + N;
  wire [ROW_W-1:0] row_a [0:C-1];
  generate
    for (g = 0; g < C; g = g + 1) begin : g_rd
      assign row_a[g] = {ctx_expected_vid[g*32 +: 32], tmo_q[g*32 +: 32], up_port_q[g*8 +: 8], tid_q[g*8 +: 8],
                         jid_q[g*16 +: 16], err_q[g*5 +: 5], up_q[g], en_q[g], mem_q[g*N +: N]};
    end
  endgenerate
  wire [ROW_W-1:0] r_row = row_a[rd_ctx_h];
  wire [31:0] r_evid, r_tmo;
  wire [7:0] r_upp, r_tid;
  wire [15:0] r_jid;
  wire [4:0] r_err;
  wire r_up, r_en;
  wire [N-1:0] r_mem;
  assign {r_evid, r_tmo, r_upp, r_tid, r_jid, r_err, r_up, r_en, r_mem} = r_row;
  // The header fields' words come from their RAMs' read port.
  wire [15:0] rd_gmh = gmh_mem[rd_ctx_h];
  wire [31:0] rd_gml = gml_mem[rd_ctx_h];
  wire [31:0] rd_gip = gip_mem[rd_ctx_h];
  wire [15:0] rd_omh = omh_mem[rd_ctx_h];
  wire [31:0] rd_oml = oml_mem[rd_ctx_h];
  wire [31:0] rd_oip = oip_mem[rd_ctx_h];
  // rd_ctx's bits above rd_ctx_h are zero inside the context blocks, the only place it is used.
  wire unused_rd_ctx = ^rd_ctx;
  reg [31:0] ctx_rword;
  integer j;
  always @* begin
    case (rd_off)
      O_CTX_CTRL: ctx_rword = {31'd0, r_en};
      O_CTX_STATUS: ctx_rword = {19'd0, r_err, 7'd0, r_en};
      O_CTX_JID: ctx_rword = {16'd0, r_jid};
      O_CTX_TID: ctx_rword = {24'd0, r_tid};
      O_CTX_MODE: ctx_rword = {31'd0, r_up};
      O_CTX_UPSTREAM_PORT: ctx_rword = {24'd0, r_upp};
      O_CTX_TIMEOUT: ctx_rword = r_tmo;
      O_CTX_EXPECTED_VID: ctx_rword = r_evid;
      O_CTX_GROUP_MAC_HI: ctx_rword = {16'd0, rd_gmh};
      O_CTX_GROUP_MAC_LO: ctx_rword = rd_gml;
      O_CTX_GROUP_IP: ctx_rword = rd_gip;
      O_CTX_OWN_MAC_HI: ctx_rword = {16'd0, rd_omh};
      O_CTX_OWN_MAC_LO: ctx_rword = rd_oml;
      O_CTX_OWN_IP: ctx_rword = rd_oip;
      default: ctx_rword = 32'd0;
    endcase
    // Member word k: ports 32k..32k+31, bits of ports >= N read 0.
    for (j = 0; j < N; j = j + 1)
      if (rd_mem_word[j/32]) ctx_rword[j%32] = r_mem[j];
  end

  // D: which counter the held address reads (LO or HI word), registered with the address.
  // The context and port indices sized to a counter index (d_port < N fits whenever
  // d_in_port, so its high bits are then zero).
  wire [CIW-1:0] d_ctx_i;
  wire [CIW-5:0] d_port_i;
  generate
    if (CXW >= CIW) begin : g_ctx_cut
      assign d_ctx_i = d_ctx[CIW-1:0];
    end else begin : g_ctx_ext
      assign d_ctx_i = {{(CIW-CXW){1'b0}}, d_ctx};
    end
    if (PXW > CIW - 4) begin : g_port_cut
      assign d_port_i = d_port[CIW-5:0];
      wire unused_d_port = ^d_port[PXW-1:CIW-4];
    end else if (PXW == CIW - 4) begin : g_port_same
      assign d_port_i = d_port;
    end else begin : g_port_ext
      assign d_port_i = {{(CIW-4-PXW){1'b0}}, d_port};
    end
  endgenerate
  reg d_cnt_lo;
  reg d_cnt_hi;
  reg [CIW-1:0] d_cnt_idx;
  always @* begin
    d_cnt_lo = 1'b0;
    d_cnt_hi = 1'b0;
    d_cnt_idx = CNT_AGG_TX;
    if (ar_addr_q == A_AGG_TX_FRAMES_LO) d_cnt_lo = 1'b1;
    if (ar_addr_q == A_AGG_TX_FRAMES_HI) d_cnt_hi = 1'b1;
    if (d_in_ctx) begin
      case (d_off)
        O_CTX_VECTORS_COMPLETED_LO: begin d_cnt_lo = 1'b1; d_cnt_idx = CNT_COMPLETED + d_ctx_i; end
        O_CTX_VECTORS_COMPLETED_HI: d_cnt_hi = 1'b1;
        O_CTX_VECTORS_DROPPED_LO: begin d_cnt_lo = 1'b1; d_cnt_idx = CNT_DROPPED + d_ctx_i; end
        O_CTX_VECTORS_DROPPED_HI: d_cnt_hi = 1'b1;
        default: ;
      endcase
    end
    // Port p's counter k: LO at 8k, HI at 8k+4.
    if (d_in_port && d_poff[1:0] == 2'd0) begin
      d_cnt_lo = !d_poff[2];
      d_cnt_hi = d_poff[2];
      d_cnt_idx = {d_port_i, d_poff[6:3]};
    end
  end
  // S0: the word of a configuration register or constant (0 for a counter word).
  reg [31:0] rd_word;
  always @* begin
    rd_word = 32'd0;
    case (rd_addr_q)
      A_ID: rd_word = RM_ID_VALUE;
      A_VERSION: rd_word = RM_VERSION_VALUE;
      A_PORTS: rd_word = PORTS_WORD;
      A_CONTEXTS: rd_word = CONTEXTS_WORD;
      A_BUS_BITS: rd_word = BUS_BITS_WORD;
      A_MAX_ELEMS: rd_word = MAX_ELEMS_WORD;
      A_FORMAT: rd_word = FORMAT_WORD;
      A_BUFFER_BYTES: rd_word = BUFFER_BYTES_WORD;
      A_AGG_PORT: rd_word = {16'd0, agg_port_q};
      default: ;
    endcase
    if (rd_in_ctx) rd_word = rd_word | ctx_rword;
  end
  // Counter LO words return the counter's value from the pipeline (S3) and copy its high
  // half into the one shadow that every HI word reads.
  reg [31:0] hi_latch_q;
  reg [31:0] rd_held_q;  // S0's word (configuration or shadow)
  always @(posedge clk) begin
    if (rst) begin
      ar_full_q <= 1'b0;
      rvalid_q <= 1'b0;
      rd_busy_q <= 1'b0;
      rd_dec_q <= 1'b0;
      rd_stage_q <= 3'd0;
      hi_latch_q <= 32'd0;
    end else begin
      if (rd_fire) ar_full_q <= 1'b0;
      else if (s_axil_arvalid) ar_full_q <= 1'b1;
      if (rd_fire) rd_busy_q <= 1'b1;
      else if (rd_stage_q[2]) rd_busy_q <= 1'b0;
      if (rd_fire) rd_dec_q <= 1'b1;
      else if (rd_smp) rd_dec_q <= 1'b0;
      rd_stage_q <= {rd_stage_q[1:0], rd_smp};
      if (rd_stage_q[2]) rvalid_q <= 1'b1;
      else if (s_axil_rready) rvalid_q <= 1'b0;
      if (rd_stage_q[2] && rd_lo_q) hi_latch_q <= s3_sum[63:32];
    end
  end
  // The read's registers need no reset: rd_dec_q, rd_stage_q and rvalid_q qualify them.
  always @(posedge clk) begin
    if (rd_fire) begin
      rd_addr_q <= ar_addr_q;
      rd_lo_q <= d_cnt_lo;
      rd_hi_q <= d_cnt_hi;
      rd_idx_q <= d_cnt_idx;
    end
    if (rd_smp) rd_held_q <= rd_hi_q ? hi_latch_q : rd_word;
    if (rd_stage_q[2]) rdata_q <= rd_lo_q ? s3_sum[31:0] : rd_held_q;
  end

endmodule

`default_nettype wire
