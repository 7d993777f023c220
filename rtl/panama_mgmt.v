// SPDX-License-Identifier: MIT
// panama_mgmt: the management request engine (docs/mgmt.md). Takes the UDP payload of one
// management request (the frame already matched to the management address and UDP port by the
// receive side), and executes it on the core's AXI4-Lite register file only if
//   - it arrived on a management port (MGMT_PORTS, chosen at generation),
//   - it is well formed (magic, whole 8-byte words, 1..MAX_OPS operations),
//   - its SipHash-2-4 tag under KEY matches, and
//   - its sequence number is above the last accepted one (no replay).
// Anything else is dropped, counted in exactly one counter, and never touches the bus. An
// accepted request's operations (read, write, read-modify-write) run in order, and the response
// (status and value per operation, tagged with SipHash under the same key) leaves on m_axis.
// Request and response are little-endian 64-bit words, byte 0 in tdata[7:0], laid out as the
// MGMT_* constants of panama_defs.vh (wire/protocol.h) say.
`timescale 1ns / 1ps
`default_nettype none
`include "panama_proto.vh"

module panama_mgmt #(
  // Number of Ethernet ports of the core.
  parameter PORTS = 4,
  // Bitmap of the ports requests are accepted from (bit p = port p).
  parameter [PORTS-1:0] MGMT_PORTS = 1,
  // SipHash-2-4 key, set at build time (k0 = bits 63:0).
  parameter [127:0] KEY = 128'h0f0e0d0c0b0a09080706050403020100,
  // Most operations in one request.
  parameter MAX_OPS = `PANAMA_MGMT_MAX_OPS,
  // Address bits of the register file.
  parameter ADDR_W = 14
) (
  input  wire          clk,
  input  wire          rst,
  // request payload
  input  wire [63:0]   s_axis_tdata,
  input  wire [7:0]    s_axis_tkeep,
  input  wire          s_axis_tvalid,
  input  wire          s_axis_tlast,
  input  wire [7:0]    s_port,         // receiving port, held for the whole request
  output wire          s_axis_tready,
  // response payload
  output reg  [63:0]   m_axis_tdata,
  output reg           m_axis_tvalid,
  output reg           m_axis_tlast,
  input  wire          m_axis_tready,
  // AXI4-Lite master to the register file
  output reg  [ADDR_W-1:0] m_axil_awaddr,
  output reg           m_axil_awvalid,
  input  wire          m_axil_awready,
  output reg  [31:0]   m_axil_wdata,
  output reg           m_axil_wvalid,
  input  wire          m_axil_wready,
  input  wire [1:0]    m_axil_bresp,
  input  wire          m_axil_bvalid,
  output wire          m_axil_bready,
  output reg  [ADDR_W-1:0] m_axil_araddr,
  output reg           m_axil_arvalid,
  input  wire          m_axil_arready,
  input  wire [31:0]   m_axil_rdata,
  input  wire [1:0]    m_axil_rresp,
  input  wire          m_axil_rvalid,
  output wire          m_axil_rready,
  // counters (saturating)
  output reg  [31:0]   cnt_accepted,
  output reg  [31:0]   cnt_bad_port,
  output reg  [31:0]   cnt_malformed,
  output reg  [31:0]   cnt_bad_tag,
  output reg  [31:0]   cnt_replay
);

`include "panama_defs.vh"
`include "panama_require.vh"

  // Parameter contract (docs/rtl.md, "Parameter contracts").
  `PANAMA_REQUIRE(g_req_ports, PORTS >= 1 && PORTS <= 256, "panama_mgmt: PORTS must be 1..256")
  `PANAMA_REQUIRE(g_req_max_ops, MAX_OPS >= 1, "panama_mgmt: MAX_OPS must be at least 1")
  `PANAMA_REQUIRE(g_req_addr_w, ADDR_W >= 2 && ADDR_W <= 32, "panama_mgmt: ADDR_W must be 2..32")
  // The framing below counts words as the table does: header and sequence number (the first
  // operation at word 2), two words per operation, one tag word; the fields sit anywhere in them.
  `PANAMA_REQUIRE(g_req_layout, MGMT_WORD_BYTES == 8 && MGMT_WORD_SEQ == 1 && MGMT_WORD_OPS == 2 &&
                  MGMT_OP_WORDS == 2 && MGMT_TAG_WORDS == 1,
                  "panama_mgmt: the request framing differs from the MGMT_* word layout")

  // Short names used below.
  localparam N = PORTS;
  localparam AW = ADDR_W;

  localparam MAX_WORDS = MGMT_WORD_OPS + MGMT_OP_WORDS * MAX_OPS + MGMT_TAG_WORDS;
  localparam [31:0] REQ_MAGIC = MGMT_REQ_MAGIC;  // "PMG1" (wire/protocol.h)
  localparam [31:0] RSP_MAGIC = MGMT_RSP_MAGIC;  // "PMR1"
  localparam [7:0] OP_READ = MGMT_OP_READ, OP_WRITE = MGMT_OP_WRITE, OP_RMW = MGMT_OP_RMW;
  // A 32-bit field at byte `off` of a word: its mask.
  localparam [63:0] MAGIC_MASK = 64'hffffffff << (8 * MGMT_OFF_MAGIC);

  localparam [3:0] S_RX = 4'd0, S_CHECK = 4'd1, S_HASH = 4'd2, S_HASH_WAIT = 4'd3, S_OP = 4'd4,
                   S_RD = 4'd5, S_WR = 4'd6, S_NEXT = 4'd7, S_RHASH = 4'd8, S_RHASH_WAIT = 4'd9,
                   S_TX = 4'd10, S_DROP = 4'd11;

  // Word and operation indices are 6 bits whatever MAX_OPS (<= 30) is: narrower arrays are
  // indexed with them on purpose.
  /* verilator lint_off WIDTH */
  reg  [3:0]  state_q;
  reg  [63:0] buf_q [0:MAX_WORDS-1];
  reg  [63:0] res_q [0:MAX_OPS-1];
  reg  [5:0]  nwords_q;
  reg         bad_form_q;          // a partial word or too many words
  reg  [7:0]  port_q;
  reg  [5:0]  idx_q;               // word fed to the hash / operation / response word
  reg  [63:0] last_seq_q;
  reg  [63:0] tag_q;               // the response tag
  reg  [31:0] old_q;               // value read by a read or read-modify-write
  reg  [7:0]  status_q;
  reg  [2:0]  drop_why_q;          // which counter a dropped request increments

  wire [5:0]  nops = (nwords_q - 6'd3) >> 1;
  wire [N-1:0] port_sel = MGMT_PORTS >> port_q;
  wire        port_ok = ({24'd0, port_q} < N) && port_sel[0];

  // ---- SipHash (requests, then responses) ----
  reg  [63:0] h_data;
  reg         h_last, h_valid;
  wire        h_ready, h_out_valid;
  wire [63:0] h_out;
  panama_siphash u_siphash (
    .clk(clk), .rst(rst), .key(KEY), .s_data(h_data), .s_nbytes(4'd8), .s_last(h_last),
    .s_valid(h_valid), .s_ready(h_ready), .m_hash(h_out), .m_valid(h_out_valid));

  // Response word i: header, sequence, one word per operation.
  reg  [63:0] resp_word;
  always @* begin
    if (idx_q == 6'd0) resp_word = (buf_q[0] & ~MAGIC_MASK) | ({32'd0, RSP_MAGIC} << (8 * MGMT_OFF_MAGIC));
    else if (idx_q == MGMT_WORD_SEQ) resp_word = buf_q[MGMT_WORD_SEQ];
    else resp_word = res_q[idx_q - 6'd2];
  end
  wire [5:0] resp_words = nops + 6'd2;   // without the tag

  // Current operation's fields.
  wire [63:0] op_a = buf_q[6'd2 + {idx_q[4:0], 1'b0}];
  wire [63:0] op_b = buf_q[6'd3 + {idx_q[4:0], 1'b0}];
  wire [7:0]  op_code = op_a[8*MGMT_OP_OFF_CODE +: 8];
  wire [31:0] op_addr = op_a[8*MGMT_OP_OFF_ADDR +: 32];
  wire [31:0] op_mask = op_b[8*MGMT_OP_OFF_MASK +: 32];
  wire [31:0] op_value = op_b[8*MGMT_OP_OFF_VALUE +: 32];

  // Reserved bytes of an operation, and address bits above the register file's.
  wire unused_ok = &{1'b0, op_a[31:8], op_addr[31:AW], port_sel[N-1:1]};

  assign s_axis_tready = state_q == S_RX;
  assign m_axil_bready = 1'b1;
  assign m_axil_rready = 1'b1;

  function [31:0] sat_inc(input [31:0] x);
    sat_inc = (x == 32'hffffffff) ? x : x + 32'd1;
  endfunction

  always @* begin
    h_valid = 1'b0;
    h_last = 1'b0;
    h_data = 64'd0;
    if (state_q == S_HASH) begin
      h_valid = 1'b1;
      h_data = buf_q[idx_q];
      h_last = idx_q == nwords_q - 6'd2;
    end else if (state_q == S_RHASH) begin
      h_valid = 1'b1;
      h_data = resp_word;
      h_last = idx_q == resp_words - 6'd1;
    end
  end

  always @(posedge clk) begin
    if (state_q == S_RX && s_axis_tvalid && nwords_q < MAX_WORDS)
      buf_q[nwords_q] <= s_axis_tdata;
    if (state_q == S_NEXT)
      res_q[idx_q] <= ({32'd0, old_q} << (8 * MGMT_RES_OFF_VALUE)) | ({56'd0, status_q} << (8 * MGMT_RES_OFF_STATUS));
  end

  always @(posedge clk) begin
    if (rst) begin
      state_q <= S_RX;
      nwords_q <= 6'd0;
      bad_form_q <= 1'b0;
      port_q <= 8'd0;
      idx_q <= 6'd0;
      last_seq_q <= 64'd0;
      tag_q <= 64'd0;
      old_q <= 32'd0;
      status_q <= 8'd0;
      drop_why_q <= 3'd0;
      m_axis_tvalid <= 1'b0;
      m_axis_tdata <= 64'd0;
      m_axis_tlast <= 1'b0;
      m_axil_awvalid <= 1'b0;
      m_axil_wvalid <= 1'b0;
      m_axil_arvalid <= 1'b0;
      m_axil_awaddr <= {AW{1'b0}};
      m_axil_araddr <= {AW{1'b0}};
      m_axil_wdata <= 32'd0;
      cnt_accepted <= 32'd0;
      cnt_bad_port <= 32'd0;
      cnt_malformed <= 32'd0;
      cnt_bad_tag <= 32'd0;
      cnt_replay <= 32'd0;
    end else begin
      case (state_q)
        S_RX: if (s_axis_tvalid) begin
          if (nwords_q == 6'd0) port_q <= s_port;
          if (nwords_q < MAX_WORDS) nwords_q <= nwords_q + 6'd1;
          else bad_form_q <= 1'b1;
          if (s_axis_tkeep != 8'hff) bad_form_q <= 1'b1;
          if (s_axis_tlast) state_q <= S_CHECK;
        end
        S_CHECK: begin
          idx_q <= 6'd0;
          if (!port_ok) begin
            drop_why_q <= 3'd1;
            state_q <= S_DROP;
          end else if (bad_form_q || nwords_q < 6'd5 || !nwords_q[0] ||
                       buf_q[0][8*MGMT_OFF_MAGIC +: 32] != REQ_MAGIC) begin
            drop_why_q <= 3'd2;
            state_q <= S_DROP;
          end else begin
            state_q <= S_HASH;
          end
        end
        S_HASH: if (h_ready) begin
          idx_q <= idx_q + 6'd1;
          if (h_last) state_q <= S_HASH_WAIT;
        end
        S_HASH_WAIT: if (h_out_valid) begin
          idx_q <= 6'd0;
          if (h_out != buf_q[nwords_q - 6'd1]) begin
            drop_why_q <= 3'd3;
            state_q <= S_DROP;
          end else if (buf_q[MGMT_WORD_SEQ] <= last_seq_q) begin
            drop_why_q <= 3'd4;
            state_q <= S_DROP;
          end else begin
            last_seq_q <= buf_q[MGMT_WORD_SEQ];
            cnt_accepted <= sat_inc(cnt_accepted);
            state_q <= S_OP;
          end
        end
        S_OP: begin
          status_q <= 8'd0;
          old_q <= 32'd0;
          if (op_code == OP_READ || op_code == OP_RMW) begin
            m_axil_araddr <= op_addr[AW-1:0];
            m_axil_arvalid <= 1'b1;
            state_q <= S_RD;
          end else if (op_code == OP_WRITE) begin
            m_axil_awaddr <= op_addr[AW-1:0];
            m_axil_wdata <= op_value;
            m_axil_awvalid <= 1'b1;
            m_axil_wvalid <= 1'b1;
            old_q <= op_value;
            state_q <= S_WR;
          end else begin
            status_q <= MGMT_STATUS_UNKNOWN_OP;   // unknown operation: skipped
            state_q <= S_NEXT;
          end
        end
        S_RD: begin
          if (m_axil_arready) m_axil_arvalid <= 1'b0;
          if (m_axil_rvalid) begin
            old_q <= m_axil_rdata;
            status_q <= {6'd0, m_axil_rresp};
            if (op_code == OP_RMW && m_axil_rresp == 2'b00) begin
              m_axil_awaddr <= op_addr[AW-1:0];
              m_axil_wdata <= (m_axil_rdata & ~op_mask) | (op_value & op_mask);
              m_axil_awvalid <= 1'b1;
              m_axil_wvalid <= 1'b1;
              state_q <= S_WR;
            end else begin
              state_q <= S_NEXT;
            end
          end
        end
        S_WR: begin
          if (m_axil_awready) m_axil_awvalid <= 1'b0;
          if (m_axil_wready) m_axil_wvalid <= 1'b0;
          if (m_axil_bvalid) begin
            status_q <= {6'd0, m_axil_bresp};
            state_q <= S_NEXT;
          end
        end
        S_NEXT: begin
          if (idx_q + 6'd1 == nops) begin
            idx_q <= 6'd0;
            state_q <= S_RHASH;
          end else begin
            idx_q <= idx_q + 6'd1;
            state_q <= S_OP;
          end
        end
        S_RHASH: if (h_ready) begin
          idx_q <= idx_q + 6'd1;
          if (h_last) state_q <= S_RHASH_WAIT;
        end
        S_RHASH_WAIT: if (h_out_valid) begin
          tag_q <= h_out;
          idx_q <= 6'd0;
          state_q <= S_TX;
        end
        S_TX: if (!m_axis_tvalid || m_axis_tready) begin
          if (m_axis_tvalid && m_axis_tlast) begin
            m_axis_tvalid <= 1'b0;
            m_axis_tlast <= 1'b0;
            nwords_q <= 6'd0;
            bad_form_q <= 1'b0;
            state_q <= S_RX;
          end else begin
            m_axis_tvalid <= 1'b1;
            m_axis_tdata <= idx_q == resp_words ? tag_q : resp_word;
            m_axis_tlast <= idx_q == resp_words;
            idx_q <= idx_q + 6'd1;
          end
        end
        S_DROP: begin
          case (drop_why_q)
            3'd1: cnt_bad_port <= sat_inc(cnt_bad_port);
            3'd2: cnt_malformed <= sat_inc(cnt_malformed);
            3'd3: cnt_bad_tag <= sat_inc(cnt_bad_tag);
            default: cnt_replay <= sat_inc(cnt_replay);
          endcase
          nwords_q <= 6'd0;
          bad_form_q <= 1'b0;
          state_q <= S_RX;
        end
        default: state_q <= S_RX;
      endcase
    end
  end

  /* verilator lint_on WIDTH */

endmodule

`default_nettype wire
