// SPDX-License-Identifier: MIT
// `PANAMA_REQUIRE(label, ok, "what"): a module's parameter contract (docs/rtl.md, "Parameter
// contracts"). Used at module level, once per stated range:
//   `PANAMA_REQUIRE(g_req_data_w, DATA_W >= 64 && DATA_W <= 4096, "panama_x: DATA_W must be 64..4096")
// When `ok` is false:
//  - Verilator and Yosys stop at elaboration with "what" (an elaboration-time $error in the
//    generate block `label`; the builds verilate with -Werror-USERERROR);
//  - other tools (Icarus, Vivado's simulator) report "<instance>.<label>: what" through $error
//    from an initial block, naming the instance (%m), and end the simulation at time 0.
// panama-gen inlines this file where it is included; testbenches compiling rtl/ directly pass
// -I rtl. Include it inside a module body.
`ifndef PANAMA_REQUIRE
`ifdef VERILATOR
`define PANAMA_REQUIRE_AT_ELABORATION
`elsif YOSYS
`define PANAMA_REQUIRE_AT_ELABORATION
`endif
`ifdef PANAMA_REQUIRE_AT_ELABORATION
`define PANAMA_REQUIRE(label, ok, what) if (!(ok)) begin : label $error(what); end
`else
`define PANAMA_REQUIRE(label, ok, what) if (!(ok)) begin : label initial begin $error("%m: %s", what); $finish; end end
`endif
`endif
