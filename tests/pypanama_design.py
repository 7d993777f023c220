"""scripts/pypanama/design.py against a design panama-gen writes, and its refusals (one line each)."""
import json
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "scripts"))
from pypanama.design import DesignError, load_design  # noqa: E402

gen = sys.argv[1]
failed = []


def check(what, ok):
    if not ok:
        failed.append(what)
        print("FAIL:", what)


with tempfile.TemporaryDirectory() as t:
    d = os.path.join(t, "bf16")
    subprocess.run([gen, "--ports", "3", "--gbps", "10", "--mhz", "200", "--format", "bf16", "--out", d],
                   check=True, capture_output=True)
    g = load_design(d)
    check("ports", g.ports == 3)
    check("format", g.format == "bf16")
    check("elem_bytes", g.elem_bytes == 2 and g["elem_bytes"] == 2)
    check("max_elems", g.max_elems == g["max_elems"] > 0)
    check("sum", g.sum == "tree" and not g.exact)
    check("field", g.field("resources.luts") == g["resources"]["luts"])
    out = subprocess.run([sys.executable, os.path.join(here, "..", "scripts", "pypanama", "design.py"), d,
                          "ports", "format", "elem_bytes"], capture_output=True, text=True)
    check("command line", out.returncode == 0 and out.stdout == "3 bf16 2\n")
    for name, edit, want in [("missing", None, "no config.json there"),
                             ("fp8", {"format": "fp8"}, "unknown format 'fp8' (expected fp32, bf16 or fp16)"),
                             ("notjson", "{", "config.json: ")]:
        b = os.path.join(t, name)
        os.mkdir(b)
        if isinstance(edit, dict):
            with open(os.path.join(b, "config.json"), "w") as f:
                json.dump(dict(g, **edit), f)
        elif edit is not None:
            with open(os.path.join(b, "config.json"), "w") as f:
                f.write(edit)
        try:
            load_design(b)
            check(name + ": refused", False)
        except DesignError as e:
            check(name + ": " + str(e), want in str(e) and str(e).startswith(b) and "\n" not in str(e))

print("pypanama_design: " + ("FAIL" if failed else "PASS"))
sys.exit(1 if failed else 0)
