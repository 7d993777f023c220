// SPDX-License-Identifier: MIT
// panama_u250_top: board shell for the Xilinx Alveo U250 (xcu250-figd2104-2L-e), two QSFP28 cages
// at 100 Gbit/s. Each cage is an UltraScale+ integrated 100G MAC (CMAC, cmac_usplus IP) with a
// 512-bit AXI-Stream user interface at its transmit user clock (322.265625 MHz; receive is clocked
// by the same clock through rx_clk); the core (panama_top, --ports 2 --gbps 100 --mhz 250) runs
// at 250 MHz from the 300 MHz board oscillator through an MMCM, which also gives the 125 MHz CMAC
// init / DRP clock. Between each MAC and the core, panama_port_cdc holds two frame-safe
// asynchronous FIFOs. The frames the core builds (m_agg) leave on port AGG_PORT, interleaved frame
// by frame with that port's own traffic, towards the switch that multicasts them. Servers reach
// the register file through management over Ethernet (panama_mgmt_eth in the shell, docs/mgmt.md)
// on the ports MGMT_PORTS.
`timescale 1ns / 1ps
`default_nettype none
`include "panama_proto.vh"

module panama_u250_top #(
  // Port (0 or 1, QSFP28 cage qsfp{AGG_PORT}) that carries the built frames.
  parameter AGG_PORT = 1,
  // The core's contexts and register-file address bits (regmap.json's size), and the standalone
  // switch functions (panama_l2sw in the shell instead of the switch beside the board): set by
  // panama-gen (--contexts, --standalone).
  parameter CONTEXTS = 8,  // panama-gen: contexts
  parameter ADDR_W = 14,  // panama-gen: addr-bits
  parameter STANDALONE = 0,  // panama-gen: standalone
  // Management over Ethernet (docs/mgmt.md): the values on the marked lines are set by panama-gen
  // (--mgmt-ports, --mgmt-key, --mgmt-mac, --mgmt-ip, --mgmt-udp-port).
  parameter [1:0] MGMT_PORTS = 2'b01,  // panama-gen: mgmt-ports
  parameter [127:0] MGMT_KEY = 128'h0f0e0d0c0b0a09080706050403020100,  // panama-gen: mgmt-key
  parameter [47:0] MGMT_MAC = 48'h02504e4d0001,  // panama-gen: mgmt-mac
  parameter [31:0] MGMT_IP = 32'h0a0000fe,  // panama-gen: mgmt-ip
  parameter [15:0] MGMT_UDP_PORT = `PANAMA_MGMT_UDP_PORT_DEFAULT  // panama-gen: mgmt-udp-port
) (
  input  wire       clk_300mhz_p,      // board oscillator, 300 MHz LVDS (DDR4 bank 0 clock)
  input  wire       clk_300mhz_n,
  input  wire       qsfp0_refclk_p,    // 156.25 MHz, Si570 via the clock buffer, MGTREFCLK0_231
  input  wire       qsfp0_refclk_n,
  input  wire [3:0] qsfp0_rx_p,
  input  wire [3:0] qsfp0_rx_n,
  output wire [3:0] qsfp0_tx_p,
  output wire [3:0] qsfp0_tx_n,
  input  wire       qsfp1_refclk_p,    // 156.25 MHz, MGTREFCLK0_230
  input  wire       qsfp1_refclk_n,
  input  wire [3:0] qsfp1_rx_p,
  input  wire [3:0] qsfp1_rx_n,
  output wire [3:0] qsfp1_tx_p,
  output wire [3:0] qsfp1_tx_n,
  output wire [1:0] qsfp_resetl,       // module reset, active low: held high (running)
  output wire [1:0] qsfp_lpmode,       // low-power mode: held low
  output wire [1:0] qsfp_modsell,      // module select for the management bus: held low
  output wire [2:0] led                // 0: core out of reset, 1/2: qsfp0/1 receive aligned
);

  // Short names used below.
  localparam C = CONTEXTS;
  localparam AW = ADDR_W;

  localparam N = 2;
  localparam W = 512;

  assign qsfp_resetl = 2'b11;
  assign qsfp_lpmode = 2'b00;
  assign qsfp_modsell = 2'b00;

  // ---------------- core clock: 300 MHz -> MMCM (VCO 1500 MHz) -> 250 MHz core, 125 MHz init ---
  wire clk_300_ibuf, mmcm_fb, mmcm_locked, clk_core_mmcm, clk_init_mmcm;
  wire core_clk, init_clk;

  IBUFDS u_clk300_ibuf (.I(clk_300mhz_p), .IB(clk_300mhz_n), .O(clk_300_ibuf));

  MMCME4_BASE #(
    .CLKIN1_PERIOD(3.333), .CLKFBOUT_MULT_F(5.000), .DIVCLK_DIVIDE(1),
    .CLKOUT0_DIVIDE_F(6.000), .CLKOUT1_DIVIDE(12)
  ) u_mmcm (
    .CLKIN1(clk_300_ibuf), .CLKFBIN(mmcm_fb), .CLKFBOUT(mmcm_fb), .CLKFBOUTB(),
    .CLKOUT0(clk_core_mmcm), .CLKOUT0B(), .CLKOUT1(clk_init_mmcm), .CLKOUT1B(),
    .CLKOUT2(), .CLKOUT2B(), .CLKOUT3(), .CLKOUT3B(), .CLKOUT4(), .CLKOUT5(), .CLKOUT6(),
    .LOCKED(mmcm_locked), .PWRDWN(1'b0), .RST(1'b0));
  BUFG u_core_bufg (.I(clk_core_mmcm), .O(core_clk));
  BUFG u_init_bufg (.I(clk_init_mmcm), .O(init_clk));

  // The card has no user reset button: the MMCM's lock is the reset source.
  wire arst = !mmcm_locked;
  wire core_rst;
  panama_reset_sync u_core_rst (.clk(core_clk), .rst_in(arst), .rst_out(core_rst));

  // ---------------- MACs ----------------
  wire [N-1:0]     mac_clk, mac_usr_tx_reset, mac_usr_rx_reset, mac_rst, rx_aligned;
  wire [N*W-1:0]   mac_rx_tdata, mac_tx_tdata;
  wire [N*W/8-1:0] mac_rx_tkeep, mac_tx_tkeep;
  wire [N-1:0]     mac_rx_tvalid, mac_rx_tlast, mac_rx_tuser;
  wire [N-1:0]     mac_tx_tvalid, mac_tx_tlast, mac_tx_tuser, mac_tx_tready;
  // CMAC bring-up (PG203): receive enabled; until the receiver is aligned the transmitter sends
  // remote-fault indications, then it is enabled. Registered in the MAC clock domain.
  reg  [N-1:0]     tx_enable_q, tx_send_rfi_q;

  // Per-port MAC reset: CMAC user resets or the shell reset, synchronised to the MAC clock.
  genvar p;
  generate
    for (p = 0; p < N; p = p + 1) begin : g_mac_rst
      panama_reset_sync u_rs (.clk(mac_clk[p]),
        .rst_in(arst || mac_usr_tx_reset[p] || mac_usr_rx_reset[p]), .rst_out(mac_rst[p]));
      always @(posedge mac_clk[p]) begin
        if (mac_rst[p]) begin
          tx_enable_q[p] <= 1'b0;
          tx_send_rfi_q[p] <= 1'b1;
        end else begin
          tx_enable_q[p] <= rx_aligned[p];
          tx_send_rfi_q[p] <= !rx_aligned[p];
        end
      end
    end
  endgenerate

  // Port i's clocking, reset, DRP, data and control connections, the same for both cages.
  `define PANAMA_CMAC_PORT(i) \
    .gt_txusrclk2(mac_clk[i]), .gt_rxusrclk2(), .gt_ref_clk_out(), .gt_rxrecclkout(),            \
    .gt_powergoodout(), .gt_loopback_in(12'd0),                                                  \
    .gtwiz_reset_tx_datapath(1'b0), .gtwiz_reset_rx_datapath(1'b0),                              \
    .sys_reset(arst), .init_clk(init_clk), .rx_clk(mac_clk[i]),                                  \
    .usr_rx_reset(mac_usr_rx_reset[i]), .usr_tx_reset(mac_usr_tx_reset[i]),                      \
    .core_rx_reset(1'b0), .core_tx_reset(1'b0), .core_drp_reset(1'b0), .drp_clk(init_clk),       \
    .drp_addr(10'd0), .drp_di(16'd0), .drp_en(1'b0), .drp_we(1'b0), .drp_do(), .drp_rdy(),       \
    .rx_axis_tvalid(mac_rx_tvalid[i]), .rx_axis_tdata(mac_rx_tdata[(i)*W +: W]),                 \
    .rx_axis_tlast(mac_rx_tlast[i]), .rx_axis_tkeep(mac_rx_tkeep[(i)*W/8 +: W/8]),               \
    .rx_axis_tuser(mac_rx_tuser[i]),                                                             \
    .tx_axis_tready(mac_tx_tready[i]), .tx_axis_tvalid(mac_tx_tvalid[i]),                        \
    .tx_axis_tdata(mac_tx_tdata[(i)*W +: W]), .tx_axis_tlast(mac_tx_tlast[i]),                   \
    .tx_axis_tkeep(mac_tx_tkeep[(i)*W/8 +: W/8]), .tx_axis_tuser(mac_tx_tuser[i]),               \
    .tx_ovfout(), .tx_unfout(), .tx_preamblein(56'd0),                                           \
    .ctl_rx_enable(1'b1), .ctl_rx_force_resync(1'b0), .ctl_rx_test_pattern(1'b0),                \
    .ctl_tx_enable(tx_enable_q[i]), .ctl_tx_send_idle(1'b0), .ctl_tx_send_rfi(tx_send_rfi_q[i]), \
    .ctl_tx_send_lfi(1'b0), .ctl_tx_test_pattern(1'b0),                                          \
    .ctl_rsfec_ieee_error_indication_mode(1'b0), .ctl_rx_rsfec_enable(1'b1),                     \
    .ctl_rx_rsfec_enable_correction(1'b1), .ctl_rx_rsfec_enable_indication(1'b1),                \
    .ctl_tx_rsfec_enable(1'b1),                                                                  \
    .stat_rx_aligned(rx_aligned[i]), .stat_rx_aligned_err(), .stat_rx_status(),                  \
    .stat_rx_local_fault(), .stat_rx_remote_fault(), .stat_rx_bad_fcs(), .stat_tx_local_fault()

  cmac_usplus_0 u_cmac0 (
    .gt_ref_clk_p(qsfp0_refclk_p), .gt_ref_clk_n(qsfp0_refclk_n),
    .gt_rxp_in(qsfp0_rx_p), .gt_rxn_in(qsfp0_rx_n), .gt_txp_out(qsfp0_tx_p), .gt_txn_out(qsfp0_tx_n),
    `PANAMA_CMAC_PORT(0));

  cmac_usplus_1 u_cmac1 (
    .gt_ref_clk_p(qsfp1_refclk_p), .gt_ref_clk_n(qsfp1_refclk_n),
    .gt_rxp_in(qsfp1_rx_p), .gt_rxn_in(qsfp1_rx_n), .gt_txp_out(qsfp1_tx_p), .gt_txn_out(qsfp1_tx_n),
    `PANAMA_CMAC_PORT(1));
  `undef PANAMA_CMAC_PORT

  // ---------------- clock-domain crossing and the core ----------------
  // CMAC sets tuser on the last beat of a bad frame: the core's convention already. 64-byte
  // beats: 64 beats hold a 1518-byte frame twice over.
  panama_board_shell #(.PORTS(N), .DATA_W(W), .CONTEXTS(C), .ADDR_W(AW), .AGG_PORT(AGG_PORT), .STANDALONE(STANDALONE),
    .FIFO_ADDR_W(6), .MGMT_PORTS(MGMT_PORTS), .MGMT_KEY(MGMT_KEY), .MGMT_MAC(MGMT_MAC), .MGMT_IP(MGMT_IP),
    .MGMT_UDP_PORT(MGMT_UDP_PORT)) u_shell (
    .core_clk(core_clk), .core_rst(core_rst), .mac_clk(mac_clk), .mac_rst(mac_rst),
    .mac_rx_tdata(mac_rx_tdata), .mac_rx_tkeep(mac_rx_tkeep), .mac_rx_tvalid(mac_rx_tvalid),
    .mac_rx_tlast(mac_rx_tlast), .mac_rx_tuser(mac_rx_tuser),
    .mac_tx_tdata(mac_tx_tdata), .mac_tx_tkeep(mac_tx_tkeep), .mac_tx_tvalid(mac_tx_tvalid),
    .mac_tx_tlast(mac_tx_tlast), .mac_tx_tuser(mac_tx_tuser), .mac_tx_tready(mac_tx_tready),
    .rx_drop(), .mgmt_accepted(), .mgmt_bad_port(), .mgmt_malformed(), .mgmt_bad_tag(), .mgmt_replay(),
    .mgmt_rx_busy());

  // Status LEDs, registered in the core domain (the alignment bits are quasi-static levels).
  reg [2:0] led_q;
  always @(posedge core_clk) led_q <= {rx_aligned, !core_rst};
  assign led = led_q;


endmodule

`default_nettype wire
