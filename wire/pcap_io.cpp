#include "pcap_io.h"

#include <pcap/pcap.h>

#include <cstdio>
#include <memory>

namespace panama::wire {

namespace {

// Every record of an opened capture (raw: owned here); `name` starts each error line.
std::vector<PcapRecord> read_records(pcap_t* raw, const std::string& name) {
  std::unique_ptr<pcap_t, void (*)(pcap_t*)> p(raw, pcap_close);
  if (pcap_datalink(raw) != DLT_EN10MB)
    throw WireError(name + ": link type " + std::to_string(pcap_datalink(raw)) + " is not Ethernet (1)");
  std::vector<PcapRecord> out;
  for (;;) {
    pcap_pkthdr* h = nullptr;
    const u_char* d = nullptr;
    const int r = pcap_next_ex(raw, &h, &d);
    if (r == PCAP_ERROR_BREAK) break;  // end of file
    if (r != 1)
      throw WireError(name + ": corrupt pcap after record " + std::to_string(out.size()) + ": " + pcap_geterr(raw));
    PcapRecord rec;
    rec.data.assign(d, d + h->caplen);
    rec.ts_ns = static_cast<uint64_t>(h->ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(h->ts.tv_usec);
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace

std::vector<PcapRecord> read_pcap(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE] = {0};
  // Nanosecond precision so that both pcap magics keep their full timestamps.
  pcap_t* raw = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  if (!raw) throw WireError(path + ": cannot read pcap: " + err);
  return read_records(raw, path);
}

std::vector<PcapRecord> read_pcap_bytes(const uint8_t* data, size_t len, const std::string& name) {
  if (len == 0) throw WireError(name + ": cannot read pcap: the file is empty");
  // fmemopen does not write through a "rb" stream; the cast only satisfies its signature.
  FILE* f = fmemopen(const_cast<uint8_t*>(data), len, "rb");
  if (!f) throw WireError(name + ": cannot read pcap: fmemopen failed");
  char err[PCAP_ERRBUF_SIZE] = {0};
  pcap_t* raw = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, err);
  if (!raw) {
    std::fclose(f);
    throw WireError(name + ": cannot read pcap: " + err);
  }
  return read_records(raw, name);  // pcap_close closes f
}

void write_pcap(const std::string& path, const std::vector<PcapRecord>& records) {
  pcap_t* dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 262144, PCAP_TSTAMP_PRECISION_NANO);
  if (!dead) throw WireError(path + ": cannot create a pcap handle");
  std::unique_ptr<pcap_t, void (*)(pcap_t*)> p(dead, pcap_close);
  pcap_dumper_t* d = pcap_dump_open(dead, path.c_str());
  if (!d) throw WireError(path + ": cannot write pcap: " + pcap_geterr(dead));
  for (const auto& r : records) {
    pcap_pkthdr h{};
    h.ts.tv_sec = static_cast<time_t>(r.ts_ns / 1000000000ull);
    h.ts.tv_usec = static_cast<suseconds_t>(r.ts_ns % 1000000000ull);  // nanoseconds in a nano file
    h.caplen = h.len = static_cast<bpf_u_int32>(r.data.size());
    pcap_dump(reinterpret_cast<u_char*>(d), &h, r.data.data());
  }
  const bool bad = pcap_dump_flush(d) != 0;
  pcap_dump_close(d);
  if (bad) throw WireError(path + ": error writing pcap");
}

}  // namespace panama::wire
