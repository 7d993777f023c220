#!/usr/bin/env python3
"""board_check.py STUB_OUT NETLIST.json [OUT_DIR]: the board shell's constraints against its netlist.

STUB_OUT is what board_vivado_stub.tcl printed (ports, locations and clocks the XDCs name);
NETLIST.json is Yosys's flattened netlist of the board top (core and vendor IP as black boxes).
Checks, each failure one line:
  - every port the XDC names exists on the board top, and every top-level port is placed
    (the N side of a differential pair follows its P side);
  - every clock in the design - the clock of every flip-flop and memory, and every clock input
    of the core and of the vendor IP - is traced through buffers to its source, and that source
    is constrained: a top-level port with create_clock, an MMCM output with
    create_generated_clock (whose input is itself constrained), or a clock output of a vendor
    IP whose reference clock input is constrained (the IP's own XDC creates that clock).
  - (with OUT_DIR) every module the constraints find cells of by REF_NAME is in the output, and
    every register they name in it is one of its regs.
Prints the clock domains found."""
import json
import re
import sys

stub_lines = open(sys.argv[1]).read().splitlines()
net = json.load(open(sys.argv[2]))
errors = []

top_name = next(l.split()[1] for l in stub_lines if l.startswith("top "))
mod = net["modules"][top_name]

# Port bits of the top.
port_bits = {}      # net bit -> port name (constant-driven outputs have no net bit)
port_names = []     # every port bit by name
for name, p in mod["ports"].items():
    for i, b in enumerate(p["bits"]):
        n = name if len(p["bits"]) == 1 else f"{name}[{i}]"
        port_names.append(n)
        if isinstance(b, int):
            port_bits[b] = n

# ---- ports named by the XDC exist; every top-level port is placed ----
def expand(pattern):
    rx = re.compile("^" + re.escape(pattern).replace(r"\*", ".*") + "$")
    return [n for n in port_names if rx.match(n)]

for l in stub_lines:
    if l.startswith("port "):
        pat = l.split(" ", 1)[1]
        if pat != "get_ports" and not expand(pat):
            errors.append(f"XDC names port {pat}, which {top_name} does not have")
located = {n for l in stub_lines if l.startswith("loc ") for n in expand(l.split(" ", 1)[1])}
for n in sorted(set(port_names)):
    if n in located:
        continue
    pside = re.sub(r"_n(\[\d+\])?$", r"_p\1", n)
    if pside != n and pside in located:
        continue
    errors.append(f"port {n} has no PACKAGE_PIN in the XDC")

# ---- clocks ----
xdc_clocks = {}     # ('port', name) or ('pin', path) -> clock name
for l in stub_lines:
    if l.startswith("clock "):
        _, cname, kind, what = l.split(" ", 3)
        xdc_clocks[(kind, what)] = cname

drivers = {}        # bit -> (cell name, cell, port)
for cname, cell in mod["cells"].items():
    for pname, dirn in cell.get("port_directions", {}).items():
        if dirn == "output":
            for b in cell["connections"][pname]:
                drivers[b] = (cname, cell, pname)

def short(cname):
    return cname.lstrip("\\")

BUFFERS = {"BUFG": "I", "BUFGCE": "I", "IBUFDS": "I", "IBUFDS_GTE2": "I", "IBUFDS_GTE4": "I",
           "IBUF": "I", "BUFG_GT": "I"}
MMCMS = {"MMCME2_BASE", "MMCME2_ADV", "MMCME4_BASE", "MMCME4_ADV", "PLLE2_BASE", "PLLE4_BASE"}
IP_REFCLK = re.compile(r"^(refclk_p|gt_ref_clk_p)$")

def trace(bit, seen=()):
    """Returns (clock description) or raises ValueError with the reason."""
    if isinstance(bit, str):
        raise ValueError(f"constant {bit}")
    if bit in port_bits:
        name = port_bits[bit]
        if ("port", name) not in xdc_clocks:
            raise ValueError(f"top-level port {name} has no create_clock")
        return xdc_clocks[("port", name)]
    if bit not in drivers:
        raise ValueError("undriven net")
    cname, cell, pname = drivers[bit]
    t = cell["type"]
    if t in BUFFERS:
        return trace(cell["connections"][BUFFERS[t]][0])
    if t in MMCMS:
        pin = f"{short(cname)}/{pname}"
        if ("pin", pin) not in xdc_clocks:
            raise ValueError(f"MMCM output {pin} has no create_generated_clock")
        trace(cell["connections"]["CLKIN1"][0])
        return xdc_clocks[("pin", pin)]
    if not t.startswith("$"):
        # A vendor IP output: its own XDC creates the clock from its reference input.
        refs = [p for p in cell["connections"] if IP_REFCLK.match(p)]
        if not refs:
            raise ValueError(f"clock from {short(cname)}.{pname} ({t}), an IP without a reference clock input")
        src = trace(cell["connections"][refs[0]][0])
        return f"{short(cname)}.{pname} (IP clock from {src})"
    raise ValueError(f"clock made by logic ({t} {short(cname)})")

clock_users = []    # (description, bit)
CLOCK_PORTS = {"CLK", "RD_CLK", "WR_CLK"}
for cname, cell in mod["cells"].items():
    t = cell["type"]
    conns = cell["connections"]
    if t.startswith("$"):
        for p in CLOCK_PORTS & set(conns):
            # A memory port without a clock (asynchronous read feeding a register) has none.
            enable = str(cell.get("parameters", {}).get(p + "_ENABLE", "1"))
            for i, b in enumerate(conns[p]):
                if p != "CLK" and enable[::-1][i:i + 1] == "0":
                    continue
                clock_users.append((f"{t} {short(cname)}", b))
    else:
        dirs = cell.get("port_directions", {})
        for p, bits in conns.items():
            if dirs.get(p) == "input" and not p.startswith("areset") and re.search(r"(^|_)(clk|clk2|coreclk|dclk|init_clk|rx_clk|drp_clk|txusrclk|txusrclk2|CLKIN1|CLKFBIN|I)$", p):
                if t in BUFFERS or (t in MMCMS and p == "CLKFBIN"):
                    continue
                for b in bits:
                    clock_users.append((f"{t} {short(cname)}.{p}", b))

domains = {}
reported = set()
for what, b in clock_users:
    try:
        domains.setdefault(trace(b), set()).add(what.split()[0])
    except ValueError as e:
        key = (str(e))
        if key not in reported:
            reported.add(key)
            errors.append(f"unconstrained clock at {what}: {e}")

# ---- cells the constraints find by module (REF_NAME): the module exists in the output, and each
# register named under it is one of its regs (the stub prints cell @MODULE/REG_reg...).
out_dir = sys.argv[3] if len(sys.argv) > 3 else None
if out_dir:
    import glob
    import os
    sources = {}
    for f in glob.glob(os.path.join(out_dir, "*.v")):
        text = open(f).read()
        for m in re.finditer(r"^module\s+(\w+)(.*?)^endmodule", text, re.S | re.M):
            sources[m.group(1)] = m.group(2)
    refs = [l.split()[1] for l in stub_lines if l.startswith("ref ")]
    for r in refs:
        if r not in sources:
            errors.append(f"the CDC constraints look for module {r}, which the output does not have")
    for l in stub_lines:
        m = re.match(r"^(cell|pin) @(\w+)/(\w+?)_reg", l)
        if m and m.group(2) in sources and not re.search(r"\breg\b[^;]*\b" + m.group(3) + r"\b", sources[m.group(2)]):
            errors.append(f"the CDC constraints name register {m.group(3)} of {m.group(2)}, which has none")
    if not refs:
        errors.append("the CDC constraints find no cell by module (REF_NAME)")

for d in sorted(domains):
    print(f"clock domain: {d}")
for e in errors:
    print(f"board_check: {e}")
sys.exit(1 if errors else 0)
