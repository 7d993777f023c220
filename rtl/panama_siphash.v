// SPDX-License-Identifier: MIT
// panama_siphash: SipHash-2-4 (Aumasson and Bernstein, 2012) of a byte message under a 128-bit
// key, one SipRound per cycle. The keyed MAC that authenticates management requests
// (docs/mgmt.md): small (four 64-bit registers and one round of adders) and fast enough for a
// request rate far below the line rate.
//
// The message arrives as 64-bit words, byte 0 in s_data[7:0] (SipHash reads little-endian words);
// s_nbytes says how many bytes of the word are valid (8 except on the last word, 0..8 there; an
// empty message is one last word with s_nbytes = 0). A word of n bytes takes 2 cycles, the
// padding block (when the length is a multiple of 8) 2 more, finalisation 4. The hash is held in
// m_hash, m_valid high for one cycle when it is ready.
`timescale 1ns / 1ps
`default_nettype none

module panama_siphash (
  input  wire         clk,
  input  wire         rst,
  input  wire [127:0] key,       // k0 = key[63:0], k1 = key[127:64] (bytes 0-7 and 8-15, LE)
  input  wire [63:0]  s_data,
  input  wire [3:0]   s_nbytes,
  input  wire         s_last,
  input  wire         s_valid,
  output wire         s_ready,
  output reg  [63:0]  m_hash,
  output reg          m_valid
);

  localparam [1:0] S_IDLE = 2'd0, S_COMP = 2'd1, S_FIN = 2'd2;

  reg  [1:0]  state_q;
  reg  [63:0] v0_q, v1_q, v2_q, v3_q, m_q;
  reg  [1:0]  round_q;     // rounds done in this compression / finalisation
  reg         in_msg_q;    // a message has started (v holds its state)
  reg  [7:0]  len_q;       // message length mod 256
  reg         final_q;     // the block being compressed is the last one
  reg         pad_q;       // the padding block still follows

  function [63:0] rotl(input [63:0] x, input integer n);
    rotl = (x << n) | (x >> (64 - n));
  endfunction

  // One SipRound on {v0, v1, v2, v3}.
  function [255:0] sipround(input [63:0] a0, input [63:0] a1, input [63:0] a2, input [63:0] a3);
    reg [63:0] b0, b1, b2, b3;
    begin
      b0 = a0 + a1;  b1 = rotl(a1, 13) ^ b0;  b0 = rotl(b0, 32);
      b2 = a2 + a3;  b3 = rotl(a3, 16) ^ b2;
      b0 = b0 + b3;  b3 = rotl(b3, 21) ^ b0;
      b2 = b2 + b1;  b1 = rotl(b1, 17) ^ b2;  b2 = rotl(b2, 32);
      sipround = {b0, b1, b2, b3};
    end
  endfunction

  wire [63:0] k0 = key[63:0];
  wire [63:0] k1 = key[127:64];
  wire [63:0] init0 = k0 ^ 64'h736f6d6570736575;   // "somepseudorandomlygeneratedbytes"
  wire [63:0] init1 = k1 ^ 64'h646f72616e646f6d;
  wire [63:0] init2 = k0 ^ 64'h6c7967656e657261;
  wire [63:0] init3 = k1 ^ 64'h7465646279746573;

  wire [255:0] r = sipround(v0_q, v1_q, v2_q, v3_q);
  wire [63:0] r0 = r[255:192], r1 = r[191:128], r2 = r[127:64], r3 = r[63:0];

  // The block a word makes: a full word as is; a short last word masked, with the length byte.
  wire [7:0]  len_next = len_q + {4'd0, s_nbytes};
  wire        short_last = s_last && s_nbytes != 4'd8;
  reg  [63:0] mask;
  integer i;
  always @* begin
    for (i = 0; i < 8; i = i + 1) mask[i*8 +: 8] = (i < s_nbytes) ? 8'hff : 8'h00;
  end
  wire [63:0] block = short_last ? ((s_data & mask) | {len_next, 56'd0}) : s_data;

  assign s_ready = state_q == S_IDLE;
  wire take = s_valid && s_ready;

  always @(posedge clk) begin
    if (rst) begin
      state_q <= S_IDLE;
      in_msg_q <= 1'b0;
      len_q <= 8'd0;
      round_q <= 2'd0;
      final_q <= 1'b0;
      pad_q <= 1'b0;
      m_valid <= 1'b0;
      m_hash <= 64'd0;
      v0_q <= 64'd0;
      v1_q <= 64'd0;
      v2_q <= 64'd0;
      v3_q <= 64'd0;
      m_q <= 64'd0;
    end else begin
      m_valid <= 1'b0;
      case (state_q)
        S_IDLE: if (take) begin
          v0_q <= in_msg_q ? v0_q : init0;
          v1_q <= in_msg_q ? v1_q : init1;
          v2_q <= in_msg_q ? v2_q : init2;
          v3_q <= (in_msg_q ? v3_q : init3) ^ block;
          m_q <= block;
          len_q <= len_next;
          in_msg_q <= !s_last;
          final_q <= short_last;
          pad_q <= s_last && !short_last;
          round_q <= 2'd0;
          state_q <= S_COMP;
        end
        S_COMP: begin
          round_q <= round_q + 2'd1;
          {v0_q, v1_q, v2_q, v3_q} <= r;
          if (round_q == 2'd1) begin
            // c = 2 rounds done: v0 ^= m, then the next block or finalisation.
            v0_q <= r0 ^ m_q;
            round_q <= 2'd0;
            if (final_q) begin
              v2_q <= r2 ^ 64'hff;
              state_q <= S_FIN;
            end else if (pad_q) begin
              v3_q <= r3 ^ {len_q, 56'd0};
              m_q <= {len_q, 56'd0};
              pad_q <= 1'b0;
              final_q <= 1'b1;
            end else begin
              state_q <= S_IDLE;
            end
          end
        end
        S_FIN: begin
          round_q <= round_q + 2'd1;
          {v0_q, v1_q, v2_q, v3_q} <= r;
          if (round_q == 2'd3) begin
            // d = 4 rounds done.
            m_hash <= r0 ^ r1 ^ r2 ^ r3;
            m_valid <= 1'b1;
            len_q <= 8'd0;
            state_q <= S_IDLE;
          end
        end
        default: state_q <= S_IDLE;
      endcase
    end
  end

endmodule

`default_nettype wire
