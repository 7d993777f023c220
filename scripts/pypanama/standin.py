"""The stand-in (`panama-host switch`): its context files, its start, its final counters."""

import json
import os
import re

# A stand-in whose AF_XDP links the kernel or the build refuses (the run is skipped, not failed).
XDP_REFUSED = re.compile(
    r"^panama-host: xdp: (loading|attaching|binding|mapping|creating the UMEM|this panama-host was built without)")

GROUP_MAC = "01:00:5e:01:01:01"
GROUP_IP = "239.1.1.1"
AGG_PORT = 9056


def multicast_contexts(path, trees, workers, timeout_cycles=None):
    """A contexts file: job 1, trees 0..T-1, every one a multicast context over ports 0..W-1."""
    ctx = []
    for t in range(trees):
        c = {"jid": 1, "tid": t, "members": list(range(workers)), "mode": "multicast",
             "group_mac": GROUP_MAC, "group_ip": GROUP_IP}
        if timeout_cycles is not None:
            c["timeout_cycles"] = timeout_cycles
        ctx.append(c)
    with open(path, "w") as f:
        json.dump({"agg_port": AGG_PORT, "contexts": ctx}, f)


def first_match(path, regex):
    """The first line of a file that regex matches (search), or None."""
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if regex.search(line):
                    return line.rstrip("\n")
    except OSError:
        pass
    return None


def file_has(path, text):
    try:
        with open(path, errors="replace") as f:
            return text in f.read()
    except OSError:
        return False


def check_final_counters(name, path, acc_path, mport, standalone, ecn_k, two_level, sw_threads=1, torch=False):
    """The stand-in's final counters (its stdout JSON at stop): the lines to print and the failure
    message (None: complete, per-context counters present, a vector completed, ...)."""
    out = []
    try:
        with open(path) as f:
            j = json.loads(f.read())
        shell = None
        if os.path.exists(acc_path):  # --shell: the stand-in reports the shell; the core's counters came over management
            shell = j["accelerator"]
            with open(acc_path) as f:
                j["accelerator"] = json.loads(f.read())
    except (OSError, ValueError) as e:
        return out, f"FAIL: stand-in {name}: no final counters ({type(e).__name__}: {str(e)[:80]})"
    if not j.get("complete"):
        return out, f"FAIL: stand-in {name}: final counters incomplete: {j.get('error', 'no completion flag')}"
    try:
        sw = {k: sum(p[k] for p in j["switch_ports"]) for k in ("rx_frames", "tx_frames", "injected_drops",
                                                              "injected_dups", "ce_marked", "queue_drops",
                                                              "recalled", "relayed")}
        acc = {k: sum(p[k] for p in j["accelerator"]["ports"]) for k in ("agg_admitted", "result_passed", "stale",
                                                                      "incomplete", "overflow", "no_context",
                                                                      "not_member")}
        ctx = [(c.get("index", i), c["jid"], c["tid"], c["vectors_completed"], c["vectors_dropped"])  # soft: no index
               for i, c in enumerate(j["accelerator"]["contexts"])]
    except (KeyError, TypeError) as e:
        return out, f"FAIL: stand-in {name}: counters lack {e}"
    if not ctx:
        return out, f"FAIL: stand-in {name}: no per-context counters"
    if not any(c[3] > 0 for c in ctx) and not torch:  # a Gloo-only script sums nothing here
        return out, f"FAIL: stand-in {name}: no context completed a vector"
    # --switch-threads: a context's counters are its own loop's, the one its TID is steered to.
    if sw_threads != 1 and not all(c[3] > 0 for c in ctx):
        return out, f"FAIL: stand-in {name}: a context completed no vector in the loop its TID is steered to"
    out.append(f"stand-in {name}: {sw} accelerator: {acc}")
    out.append(f"stand-in {name}: contexts (index, jid, tid, completed, dropped): {ctx}")
    if shell is not None:
        m = j["accelerator"].get("management", {})
        out.append(f"stand-in {name}: board shell {shell}")
        if any(m.get(k, 1) for k in ("bad_port", "malformed", "bad_tag", "replay")) or not m.get("accepted"):
            return out, f"FAIL: stand-in {name}: management counters {m}: every request should have been accepted"
    if standalone:
        s = j["accelerator"].get("switch")
        if s is None:
            return out, f"FAIL: stand-in {name}: a standalone board without switch counters"
        out.append(f"stand-in {name}: board switch {s}")
        if s["ecn_k"] != ecn_k:
            return out, f"FAIL: stand-in {name}: ECN threshold reads {s['ecn_k']}, {ecn_k} was programmed"
        # What the board's switch sent on a port is what left that link, but for the management
        # responses merged after it on the management port. (Not on two levels: the other boards'
        # counters are read through this one after its own were.)
        for p, (bs, cs) in enumerate(zip(s["ports"], j["switch_ports"])):
            if not two_level and p != mport and bs["tx_frames"] != cs["tx_frames"]:
                return out, (f"FAIL: stand-in {name}: port {p}: the board's switch sent {bs['tx_frames']} frames, "
                             f"the link {cs['tx_frames']}")
    return out, None
