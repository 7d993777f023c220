"""What panama_torch's testbed scripts share (run by `scripts/testbed --torch`, docs/torch.md "Tests").

The expected sums come from the project's reference tools (host_treesum, torch_ref_sum: the
tree order of numerics.md with the host CPU's own addition, numerics/ref_float.h), run by rank 0
on every rank's input written to the run's directory (shared by every worker namespace).
"""
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.distributed as dist

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
BITS = {torch.float32: torch.int32, torch.bfloat16: torch.int16, torch.float16: torch.int16}


def design():
    """The design's config.json (PANAMA_DESIGN, set by the testbed)."""
    with open(os.path.join(os.environ["PANAMA_DESIGN"], "config.json")) as f:
        return json.load(f)


def ports():
    """The accelerator port of every rank (TESTBED_PORTS)."""
    return [int(p) for p in os.environ["TESTBED_PORTS"].split(",")]


def bits(t):
    """The tensor's elements as little-endian bytes (a contiguous copy)."""
    return t.detach().contiguous().view(BITS[t.dtype]).numpy().tobytes()


def from_bits(b, dtype):
    return torch.frombuffer(bytearray(b), dtype=BITS[dtype]).view(dtype).clone()


def random_tensor(n, dtype, seed):
    """Random values with the specials of a format now and then (inf, -0, NaN, subnormals, the largest)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, generator=g, dtype=torch.float64) * torch.pow(10.0, torch.randint(-3, 3, (n,), generator=g))
    t = x.to(dtype)
    info = torch.finfo(dtype)
    specials = torch.tensor([float("inf"), -0.0, float("nan"), info.tiny / 4, info.max, -info.max], dtype=dtype)
    pick = torch.randint(0, 60, (n,), generator=g)
    mask = pick < len(specials)
    t[mask] = specials[pick[mask]]
    return t


def reference(tag, t, fmt):
    """Every rank calls this with its input t (before the all-reduce): the expected sum, from rank 0."""
    rank, world = dist.get_rank(), dist.get_world_size()
    d = design()
    with open(f"in.{tag}.{rank}.bin", "wb") as f:
        f.write(bits(t))
    dist.barrier()
    if rank == 0:
        build = os.environ["TESTBED_BUILD"]
        args = [f"in.{tag}.{r}.bin:{p}" for r, p in enumerate(ports())]
        if d.get("sum", "tree") == "exact":
            assert fmt == "fp32", "host_treesum's exact sum is fp32"
            tool = [os.path.join(build, "host_driver", "host_treesum"), "sum", "--sum", "exact"]
        else:
            tool = [os.path.join(build, "torch_ext", "tests", "torch_ref_sum"), "--format", fmt]
        subprocess.run(tool + ["--subnormals", d.get("subnormals", "ieee"), str(d["ports"]), f"ref.{tag}.bin"] + args,
                       check=True)
    dist.barrier()
    with open(f"ref.{tag}.bin", "rb") as f:
        ref = from_bits(f.read(), t.dtype).view(t.shape) if t.numel() else t.clone()
    if d.get("sum", "tree") == "tree" and d.get("subnormals", "ieee") == "ieee" and t.numel():
        # A second reference that shares no code with the tools (nor with the soft stand-in, whose
        # addition is the tools' numerics/ref_float.h): PyTorch's own CPU addition in the same tree
        # order. For bf16 and fp16 it adds in float32 and rounds to nearest even, which is the
        # correctly rounded 16-bit sum (float32 has at least 2p + 2 bits for p = 8 and 11).
        own = tree_sum_torch({p: from_bits(open(f"in.{tag}.{r}.bin", "rb").read(), t.dtype).view(-1)
                              for r, p in enumerate(ports())}, d["ports"]).view(t.shape)
        both_nan = torch.isnan(ref) & torch.isnan(own)
        differ = int(((ref.contiguous().view(BITS[t.dtype]) != own.contiguous().view(BITS[t.dtype])) & ~both_nan).sum())
        nan_mismatch = int((torch.isnan(ref) != torch.isnan(own)).sum())
        assert differ == 0 and nan_mismatch == 0, (
            f"{tag}: the reference tool and PyTorch's own addition disagree on {differ} elements")
    return ref


def tree_order(by_port, nports, pad, add):
    """numerics.md's tree order: leaves over the design's ports padded to a power of two with pad
    (-0.0), pairwise up with add. by_port: {port: leaf}."""
    size = 1
    while size < nports:
        size *= 2
    level = [by_port[p] if p in by_port else pad for p in range(size)]
    while len(level) > 1:
        level = [add(level[2 * k], level[2 * k + 1]) for k in range(len(level) // 2)]
    return level[0]


def tree_sum_torch(by_port, nports):
    """The tree order with PyTorch's CPU addition in the tensors' own dtype. by_port: {port: tensor}."""
    return tree_order(by_port, nports, torch.full_like(next(iter(by_port.values())), -0.0), torch.add)


def gloo_use(channel, what):
    """[] when every request of the channel went through the accelerator, else the one failure:
    some fell back to Gloo (a fallback's sum of whole numbers or of two leaves would be the same
    bits, and hide it)."""
    st = channel.stats()
    if st["fallbacks"] == 0 and st["gloo_requests"] == 0 and not st["on_gloo"]:
        return []
    return [f"{what}: {st['fallbacks']} fallback(s), {st['gloo_requests']} request(s) on Gloo"]


def mismatches(got, want):
    """Elements whose bits differ."""
    return int((got.contiguous().view(BITS[got.dtype]) != want.contiguous().view(BITS[want.dtype])).sum())


def tree_sum_np(by_port, nports):
    """The tree order for fp32 with the CPU's addition (numpy float32). by_port: {port: np.float32 array}."""
    pad = np.full(next(iter(by_port.values())).shape, -0.0, dtype=np.float32)
    return tree_order(by_port, nports, pad, lambda a, b: np.add(a, b, dtype=np.float32))


def exact_sum_np(leaves):
    """numerics.md's exact-sum mode for fp32 (ieee subnormals), finite leaves: the exact real sum
    rounded once to nearest even; an exact zero is -0.0 only when every leaf is -0.0. Shares no
    code with the tools: where the N leaves' exponents span at most 29 - ceil(log2 N) bits their
    float64 sum is exact (24 bits of each, the span, and the carries of N terms fit in 53) and
    numpy's rounding to float32 is the one rounding; elsewhere Python integers in units of 2^-149
    (the float32 grid's step) and round-half-even by hand."""
    x = np.stack([np.asarray(v, dtype=np.float32).reshape(-1) for v in leaves]).astype(np.float64)
    assert np.isfinite(x).all(), "exact_sum_np: finite leaves only"
    out = x.sum(axis=0).astype(np.float32)
    nz = x != 0
    _, e = np.frexp(x)
    big = np.where(nz, e, -10 ** 6).max(axis=0)
    small = np.where(nz, e, 10 ** 6).min(axis=0)
    span = 29 - max(1, math.ceil(math.log2(len(leaves))))
    slow = np.nonzero(nz.any(axis=0) & (big - small > span))[0]
    for i in slow:
        total = sum(int(v * 2.0 ** 149) for v in x[:, i])  # every float32 is an integer number of 2^-149
        mag, sign = abs(total), -1 if total < 0 else 1
        shift = mag.bit_length() - 24
        if shift > 0:
            q, rem, half = mag >> shift, mag & ((1 << shift) - 1), 1 << (shift - 1)
            q += rem > half or (rem == half and q & 1)
            mag = q << shift
        out[i] = np.float32(sign * np.ldexp(float(mag), -149)) if mag < 2 ** 277 else np.float32(sign * np.inf)
    zero = out == 0
    all_neg_zero = (np.signbit(x) & (x == 0)).all(axis=0)
    out[zero] = np.where(all_neg_zero[zero], np.float32(-0.0), np.float32(0.0))
    return out.reshape(np.asarray(leaves[0]).shape)


@contextlib.contextmanager
def captured_stderr():
    """The process's fd 2 (where the C++ backend logs) into a list of lines, for the block's duration."""
    lines = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            tmp.seek(0)
            text = tmp.read().decode(errors="replace")
            lines.extend(text.splitlines())
            sys.stderr.write(text)


def say(msg):
    print(f"rank {dist.get_rank() if dist.is_initialized() else '?'}: {msg}", flush=True)
