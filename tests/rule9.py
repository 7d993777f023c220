"""Rule 9 of accelerator.md computed from the spec alone, and the pcap and CTX.json reading the
buffer checks need (rtl_buffer_fill.sh, rtl_buffer_refill.sh)."""
import json
import struct


class Rule9:
    """A port's contribution half: each context owns one frame of S (rounded up to W/8 bytes),
    the rest is a pool all contexts share; a frame occupies its length rounded up to W/8."""

    def __init__(self, cfg):
        self.bb = cfg["bus_bits"] // 8
        self.C = cfg["contexts"]
        self.S = S = 64 + cfg["elem_bytes"] * cfg["max_elems"]
        self.half = cfg["buffer_bytes"] - cfg["buffer_bytes"] // 2  # bypass_bytes = buffer_bytes / 2
        self.reserve = self.occ(S)
        self.pool = self.half - self.C * self.reserve

    def occ(self, n):
        return -(-n // self.bb) * self.bb

    def over(self, u):
        return max(0, u - self.reserve)

    def admit(self, used, k, n):
        """Admits a frame of n bytes for context k into `used` (bytes per context) if it fits."""
        grow = self.over(used[k] + self.occ(n)) - self.over(used[k])
        if grow > self.pool - sum(self.over(u) for u in used):
            return False
        used[k] += self.occ(n)
        return True


def pcap_frames(path):
    """The records of a classic pcap file, in order."""
    raw, out, at = open(path, "rb").read(), [], 24
    while at < len(raw):
        incl = struct.unpack("<I", raw[at + 8:at + 12])[0]
        out.append(raw[at + 16:at + 16 + incl])
        at += 16 + incl
    return out


def contexts(work):
    return json.load(open(work + "/traffic/ctx.json"))["contexts"]


def context_of(frame, ctx):
    """The index in CTX.json of an aggregation frame's (JID, TID)."""
    jid, tid = struct.unpack(">H", frame[44:46])[0], frame[46]
    return [i for i, e in enumerate(ctx) if e["jid"] == jid and e["tid"] == tid][0]
