// Classic pcap files (LINKTYPE_ETHERNET, no FCS) through libpcap. Every record's incl_len bytes
// are one frame; the timestamp is kept but means nothing to the accelerator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wire.h"

namespace panama::wire {

struct PcapRecord {
  Bytes data;
  uint64_t ts_ns = 0;  // timestamp in nanoseconds since the epoch of the file
};

// Reads every record; throws WireError (one line naming the file) when the file cannot be
// opened, is not a pcap, has another link type, or is corrupt/truncated.
std::vector<PcapRecord> read_pcap(const std::string& path);
// The same from a pcap file's bytes in memory; `name` starts each error line.
std::vector<PcapRecord> read_pcap_bytes(const uint8_t* data, size_t len, const std::string& name);
// Writes a nanosecond-resolution classic pcap (LINKTYPE_ETHERNET). Throws WireError on failure.
void write_pcap(const std::string& path, const std::vector<PcapRecord>& records);

}  // namespace panama::wire
