"""init_process_group("panama") refuses bad settings itself, with PanamaError naming the setting,
before it opens anything (ctest torch.python.config; docs/torch.md "Configuration"). One process,
world size 1, a TCP store on 127.0.0.1: no namespaces, no switch.

PANAMA_TEST_DESIGN: a design directory (config.json).
"""
import os
import socket
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import panama_torch
import tblib

design = os.environ["PANAMA_TEST_DESIGN"]
for k in [k for k in os.environ if k.startswith("PANAMA_")]:
    del os.environ[k]
good = {"PANAMA_DESIGN": design, "PANAMA_IFACE": "lo", "PANAMA_AGG_IP": "10.98.0.254",
        "PANAMA_GROUP_IP": "239.1.1.1", "PANAMA_JOB": "1"}
failures = []


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def init_error(settings):
    """init_process_group's error with these PANAMA_* settings (None when it succeeded)."""
    for k in [k for k in os.environ if k.startswith("PANAMA_")]:
        del os.environ[k]
    os.environ.update(settings)
    t0 = time.monotonic()
    try:
        dist.init_process_group("panama", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1,
                                timeout=timedelta(seconds=30))
    except panama_torch.PanamaError as e:
        return str(e), time.monotonic() - t0
    dist.destroy_process_group()
    return None, time.monotonic() - t0


cases = [
    ("PANAMA_DESIGN unset", {k: v for k, v in good.items() if k != "PANAMA_DESIGN"}, "PANAMA_DESIGN is not set"),
    ("PANAMA_JOB unset", {k: v for k, v in good.items() if k != "PANAMA_JOB"}, "PANAMA_JOB is not set"),
    ("no design there", dict(good, PANAMA_DESIGN="/nonexistent"), "PANAMA_DESIGN=/nonexistent: no config.json"),
    ("bad trees", dict(good, PANAMA_TREES="two"), "PANAMA_TREES='two'"),
    ("bad backend", dict(good, PANAMA_BACKEND="rdma"), "PANAMA_BACKEND='rdma': one of udp, tins, dpdk"),
    ("unicast group", dict(good, PANAMA_GROUP_IP="10.1.1.1"), "PANAMA_GROUP_IP='10.1.1.1' is not a multicast"),
    ("no such interface", dict(good, PANAMA_IFACE="nosuch0"), "PANAMA_IFACE=nosuch0"),
    ("MAX_ELEMS above the design", dict(good, PANAMA_MAX_ELEMS="1000"), "exceeds the design's MAX_ELEMS"),
]
for name, settings, want in cases:
    err, took = init_error(settings)
    ok = err is not None and want in err and err.startswith("panama: configuration: ") and "\n" not in err
    print(f"{'ok  ' if ok else 'FAIL'} {name}: {err} ({took:.2f} s)")
    if not ok:
        failures.append(name)
# An unknown PANAMA_* name is logged (once), not fatal: it then fails on the missing switch
# (without the fallback).
with tblib.captured_stderr() as log:
    err, took = init_error(dict(good, PANAMA_TRESS="2", PANAMA_TIMEOUT_MS="300", PANAMA_REPAIR_ROUNDS="0",
                                PANAMA_FALLBACK="off"))
logged = [line for line in log if "PANAMA_TRESS is not a setting" in line]
print(f"{'ok  ' if logged else 'FAIL'} unknown name logged: {logged}")
print(f"     then, with nothing at 10.98.0.254: {err} ({took:.2f} s)")
if not logged:
    failures.append("unknown name")
if err is None or not err.startswith("panama: ") or took > 20:
    failures.append(f"no switch: {err} after {took:.1f} s")
# With the fallback (the default), no switch means the job starts on Gloo: one line, and an
# all_reduce that works.
for k in [k for k in os.environ if k.startswith("PANAMA_")]:
    del os.environ[k]
os.environ.update(dict(good, PANAMA_TIMEOUT_MS="300", PANAMA_REPAIR_ROUNDS="0"))
with tblib.captured_stderr() as log:
    dist.init_process_group("panama", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1,
                            timeout=timedelta(seconds=30))
    t = torch.arange(5.0)
    dist.all_reduce(t)
    on_gloo = dist.distributed_c10d._get_default_group().channel.stats()["on_gloo"]
    dist.destroy_process_group()
said = [line for line in log if "start-up probe (request 0) got no answer" in line]
ok = len(said) == 1 and on_gloo and bool((t == torch.arange(5.0)).all())
print(f"{'ok  ' if ok else 'FAIL'} no switch, fallback: {said}, on Gloo {on_gloo}, all_reduce {t.tolist()}")
if not ok:
    failures.append("no switch with the fallback")
print("variables:", ", ".join(name for name, _ in panama_torch.variables()))
sys.exit(1 if failures else 0)
