// The accelerator's AXI4-Lite register file and counters (module <prefix>_regs): the fixed block
// rtl/panama_regs.v (docs/generator.md, "Fixed blocks"), which implements RegMap so that the RTL,
// regmap.json and the model's RegFile implement one map (docs/rtl.md, "Register file").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config.h"

namespace panama {

// Index of a counter in the register file's counter RAM (cnt_mem in the RTL, 64 bits each; its
// pending counts pend_q and valid bits vld_q in the same order):
// port p's counter k at p*16+k, then vectors_completed of each context, vectors_dropped of each
// context, agg_tx_frames last. Testbenches that poke counters use it.
int regs_counter_index_completed(const Config& c, int ctx);
int regs_counter_index_dropped(const Config& c, int ctx);
int regs_counter_index_agg_tx(const Config& c);
int regs_counter_count(const Config& c);
// Width of each counter's pending count (pend_q): enough for 2 * regs_counter_count + 1 pulses.
int regs_pending_bits(const Config& c);

// The parameters of rtl/panama_regs.v for c, in its header's order (PORTS, CONTEXTS, ADDR_W,
// PEND_W, then the read values of BUS_BITS, MAX_ELEMS, FORMAT, BUFFER_BYTES from regmap.json):
// the defaults of the emitted block and the #(...) of its instance in the core.
// Throws std::logic_error if the register map is no longer the one the block implements (a
// register added, removed or moved, other block strides, CTX_STATUS bits moved).
std::vector<std::pair<std::string, long>> regs_params(const Config& c);

}  // namespace panama
