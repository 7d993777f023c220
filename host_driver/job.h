// The job's parameters as every front end derives them (panama-host worker, panama_torch): the
// format and element size, COUNT per vector from the link's MTU and the design's MAX_ELEMS, and
// the window defaults. One policy, so that a worker and a PyTorch rank of one job agree.
#pragma once

#include <string>

#include "allreduce.h"
#include "format.h"

namespace panama::host {

// The interface's MTU (/sys/class/net/IFACE/mtu); throws std::runtime_error naming the interface.
int iface_mtu(const std::string& iface);

// The elements per vector without a design's MAX_ELEMS: floor(DEFAULT_PAYLOAD_BYTES / ES).
int default_max_elems(Format f);

// Sets p.format, p.elem_bytes and p.count: COUNT = count_for(MTU, max_elems, ES), max_elems 0
// meaning default_max_elems(f).
void set_vector_shape(JobParams& p, Format f, int mtu, int max_elems);

// The window defaults for p.trees trees: a ceiling <= 0 becomes max(1, floor(12 / T)), an initial
// window <= 0 becomes min(4, ceiling).
void default_window(JobParams& p);

}  // namespace panama::host
