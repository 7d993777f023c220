"""The workers (`panama-host worker`): refusals, progress, the expected result, statistics."""

import json
import re

# A backend the kernel, the driver or the build refuses here (AF_XDP not permitted, built without
# DPDK): the run is skipped with the worker's line, not failed.
BACKEND_REFUSED = re.compile(
    r"^panama-host: (xdp: (loading|attaching|binding|mapping|creating the UMEM|this panama-host was built without)"
    r"|dpdk: (this panama-host was built without|.*the net_af_xdp PMD did not start|rte_eal_init failed.*net_af_xdp))")


def vector_elems(mtu, max_elems, repair):
    """Elements per vector: min(MAX_ELEMS, floor((MTU - 50) / 4)), one fewer with loss repair on."""
    return min((mtu - 50) // 4, max_elems) - (1 if repair else 0)


def splice(tree_files, out_path, vec, trees):
    """The expected result: vector k of a call comes from tree k mod T."""
    t = []
    for p in tree_files:
        with open(p, "rb") as f:
            t.append(f.read())
    out, step = bytearray(len(t[0])), 4 * vec
    for k, off in enumerate(range(0, len(out), step)):
        out[off:off + step] = t[k % trees][off:off + step]
    with open(out_path, "wb") as f:
        f.write(out)


def results_received(progress_csv):
    """Results so far from a worker's --progress CSV (column 5, after the header)."""
    s = 0
    try:
        with open(progress_csv) as f:
            for n, line in enumerate(f):
                if n == 0:
                    continue
                cols = line.split(",")
                try:
                    s += float(cols[4]) if len(cols) > 4 else 0
                except ValueError:
                    pass
    except OSError:
        pass
    return int(s)


def progress_line(got, total, elapsed, vec_bytes):
    f = min(1.0, got / max(1, total))
    rate = got / elapsed if elapsed > 0 else 0
    eta = f"{(total - got) / rate:.0f} s" if rate > 0 and got < total else "-"
    bar = "#" * int(30 * f)
    return f"[{bar:<30}] {100 * f:5.1f} %  {rate * vec_bytes * 8 / 1e6:7.1f} Mbit/s  ETA {eta}"


def stats_line(path):
    """One line of a worker's --stats JSON."""
    with open(path) as f:
        j = json.load(f)
    return (f"worker {j['rank']}: goodput {j['goodput_mbps']:.1f} Mbit/s, vectors {j['vectors_sent']}, "
            f"results {j['results']}, duplicates {j['duplicates']}, lost {j['lost']}, resent {j.get('resent', 0)}, "
            f"repaired {j['repaired']}, results CE {j['results_ce']}, direct calls {j.get('calls_direct', '-')}, "
            f"windows {[round(t['cwnd'], 2) for t in j['trees']]}")
