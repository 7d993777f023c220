"""A generated design's folder (panama-gen --out DIR), as the scripts read it.

The Python face of gen/config/design.h: load_design(DIR) reads DIR/config.json and returns it as a
dict with a few convenience fields; one DesignError line for a missing folder, a file that is not
JSON, or a format numerics/format.h does not know. Standard library only.

From a shell script:  python3 scripts/pypanama/design.py DIR FIELD...  prints the fields (dict keys
or the properties below, dotted for nested keys: resources.luts) on one line, blank-separated.
"""

import json
import os
import sys

# numerics/format.h: name -> (element bytes, exponent bits, stored fraction bits, FORMAT code).
FORMATS = {"fp32": (4, 8, 23, 0), "bf16": (2, 8, 7, 1), "fp16": (2, 5, 10, 2)}


class DesignError(Exception):
    """One line, starting with the path."""


def parse_format(name):
    if name not in FORMATS:
        raise DesignError("unknown format %r (expected fp32, bf16 or fp16)" % (name,))
    return name


class Design(dict):
    """config.json's keys, plus the folder and the fields most scripts ask for."""

    def __init__(self, folder, j):
        super().__init__(j)
        self.dir = folder

    @property
    def ports(self):
        return self["ports"]

    @property
    def format(self):
        return self["format"]

    @property
    def elem_bytes(self):
        return FORMATS[self["format"]][0]

    @property
    def max_elems(self):
        return self["max_elems"]

    @property
    def sum(self):
        return self.get("sum", "tree")

    @property
    def exact(self):
        return self.sum == "exact"

    @property
    def subnormals(self):
        return self.get("subnormals", "ieee")

    def field(self, name):
        """A property or a (dotted) key: 'ports', 'elem_bytes', 'resources.luts'."""
        if name in ("ports", "format", "elem_bytes", "max_elems", "sum", "exact", "subnormals"):
            return getattr(self, name)
        v = self
        for part in name.split("."):
            if not isinstance(v, dict) or part not in v:
                raise DesignError("%s: config.json has no %r" % (self.dir, name))
            v = v[part]
        return v


def load_design(folder):
    path = os.path.join(folder, "config.json")
    try:
        with open(path) as f:
            j = json.load(f)
    except FileNotFoundError:
        raise DesignError("%s: no config.json there (not a panama-gen output directory)" % folder) from None
    except (OSError, ValueError) as e:
        raise DesignError("%s: %s" % (path, e)) from None
    if not isinstance(j, dict):
        raise DesignError("%s: not a JSON object" % path)
    try:
        parse_format(j.get("format"))
    except DesignError as e:
        raise DesignError("%s: %s" % (path, e)) from None
    return Design(folder, j)


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: design.py DIR FIELD...\n")
        return 2
    try:
        d = load_design(argv[1])
        vals = [d.field(n) for n in argv[2:]]
    except DesignError as e:
        sys.stderr.write("design: %s\n" % e)
        return 1
    print(" ".join(json.dumps(v) if isinstance(v, (dict, list, bool)) else str(v) for v in vals))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
