#!/usr/bin/env bash
# Measures the RTL's bypass and aggregation latencies (last beat in to first beat out, idle
# transmit port) on single frames and checks them against what config.json reports.
# usage: rtl_latency.sh BUILD_DIR WORK panama-gen-args...
set -euo pipefail
build=$1; work=$2; shift 2
rm -rf "$work"; mkdir -p "$work/in"
"$build/panama-gen" "$@" --out "$work/rtl" >/dev/null
python3 - "$work" <<'PY'
import json, struct, sys
work = sys.argv[1]
cfg = json.load(open(work + "/rtl/config.json"))
es = cfg["elem_bytes"]
def pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for fr in frames:
            f.write(struct.pack("<IIII", 0, 0, len(fr), len(fr))); f.write(fr)
def agg(port, count):
    payload = bytes(es * count)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 56 << 2, 50 + len(payload), 0, 0, 64, 17, 0,
                     bytes([10, 0, 0, port]), bytes([10, 0, 0, 254]))
    udp = struct.pack("!HHHH", 9056, 9056, 30 + len(payload), 0)
    hdr = struct.pack("!BBHBBHIHQ", 1, 0, 7, 0, 0, count, 0, port, 0)
    return bytes([2, 0xAA, 0, 0, 0, 1, 2, 0, 0, 0, 0, port]) + b"\x08\x00" + ip + udp + hdr + payload
count = max(1, min(cfg["max_elems"], 64 // es))
pcap(work + "/in/port00.pcap", [agg(0, count)])
pcap(work + "/in/port01.pcap", [agg(1, count), bytes([2, 0, 0, 0, 0, 9, 2, 0, 0, 0, 0, 8]) + b"\x08\x06" + bytes(50)])
json.dump({"contexts": [{"jid": 7, "tid": 0, "members": [0, 1], "mode": "multicast",
                         "group_mac": "01:00:5e:01:07:00", "group_ip": "239.1.7.0"}]},
          open(work + "/ctx.json", "w"))
PY
start=$(PANAMA_HARNESS_DEBUG=1 "$build/panama-sim" replay --rtl "$work/rtl" --engine rtl --contexts "$work/ctx.json" \
        --in-dir "$work/in" --out-dir "$work/out" 2>&1 | sed -n 's/traffic starts at cycle \([0-9]*\)/\1/p')
python3 - "$work" "$start" <<'PY'
import json, struct, sys
work, start = sys.argv[1], int(sys.argv[2])
cfg = json.load(open(work + "/rtl/config.json"))
bb = cfg["bus_bits"] // 8
def first_cycles(path):
    d = open(path, "rb").read(); off = 24; out = []
    while off < len(d):
        sec, frac, incl, _ = struct.unpack("<IIII", d[off:off + 16]); off += 16 + incl
        out.append(round((sec * 1e9 + frac) * cfg["mhz"] / 1e3))  # nanosecond pcap: ns -> cycles
    return out
beats = lambda n: (n + bb - 1) // bb
es = cfg["elem_bytes"]; count = max(1, min(cfg["max_elems"], 64 // es)); alen = 64 + es * count
agg_last = start + beats(alen) - 1                 # last beat of the contributions
byp_last = agg_last + beats(64)                    # the bypass frame follows on port 1
agg_lat = first_cycles(work + "/out/agg.pcap")[0] - agg_last
byp_lat = first_cycles(work + "/out/port01.pcap")[0] - byp_last
print(f"measured: bypass {byp_lat} cycles (config.json {cfg['bypass_latency']}), "
      f"aggregation {agg_lat} cycles (config.json {cfg['agg_latency']})")
sys.exit(0 if (byp_lat, agg_lat) == (cfg["bypass_latency"], cfg["agg_latency"]) else 1)
PY
