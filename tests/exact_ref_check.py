#!/usr/bin/env python3
"""Checks the tests' exact-sum reference (testbench/exact_ref.h, through exact_ref_tool) against
rational arithmetic (fractions.Fraction) on the edge cases of numerics.md's exact-sum mode:
massive cancellation, ties at every bit position, subnormal results, overflow to infinity,
all -0.0 inputs, NaN and infinity combinations, ftz boundaries, plus random sums.

usage: exact_ref_check.py TOOL [CASES_PER_FORMAT [TOOL_ARG...]]
(TOOL_ARGs go to TOOL: `host_treesum exact` answers the same questions with the host's own
exact accumulator.)"""
import random
import subprocess
import sys
from fractions import Fraction

FMTS = {"fp32": (8, 23, 0x7FC00000), "bf16": (8, 7, 0x7FC0), "fp16": (5, 10, 0x7E00)}


def decode(x, E, F, ftz):
    """(kind, sign, Fraction) with kind in nan, inf, num; ftz flushes subnormals."""
    W = 1 + E + F
    s = (x >> (W - 1)) & 1
    e = (x >> F) & ((1 << E) - 1)
    m = x & ((1 << F) - 1)
    bias = (1 << (E - 1)) - 1
    if e == (1 << E) - 1:
        return ("nan" if m else "inf", s, None)
    if e == 0:
        v = Fraction(0) if ftz else Fraction(m) * Fraction(2) ** (1 - bias - F)
    else:
        v = Fraction((1 << F) | m) * Fraction(2) ** (e - bias - F)
    return ("num", s, -v if s else v)


def oracle(fmt, ftz, leaves, member):
    E, F, qnan = FMTS[fmt]
    W = 1 + E + F
    bias = (1 << (E - 1)) - 1
    emin = 1 - bias
    total = Fraction(0)
    nan = pinf = ninf = False
    all_neg_zero = True
    for x, mem in zip(leaves, member):
        if not mem:
            continue
        kind, s, v = decode(x, E, F, ftz)
        if kind == "nan":
            nan = True
        elif kind == "inf":
            if s:
                ninf = True
            else:
                pinf = True
        else:
            total += v
        if not (kind == "num" and v == 0 and s == 1):
            all_neg_zero = False
    inf = ((1 << E) - 1) << F
    if nan or (pinf and ninf):
        return qnan
    if pinf:
        return inf
    if ninf:
        return (1 << (W - 1)) | inf
    if total == 0:
        return (1 << (W - 1)) if all_neg_zero else 0
    sg = (1 << (W - 1)) if total < 0 else 0
    a = abs(total)
    e = 0  # floor(log2 a)
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    q_exp = e - F if (ftz or e >= emin) else emin - F
    q = a / Fraction(2) ** q_exp
    r = int(q)  # round half to even
    frac = q - r
    if frac > Fraction(1, 2) or (frac == Fraction(1, 2) and r % 2 == 1):
        r += 1
    v = Fraction(r) * Fraction(2) ** q_exp
    if v >= Fraction(2) ** (bias + 1):  # beyond the largest finite: infinity
        return sg | inf
    if v < Fraction(2) ** emin:
        if ftz:
            return sg
        return sg | int(v / Fraction(2) ** (emin - F))
    ee = e
    while Fraction(2) ** (ee + 1) <= v:
        ee += 1
    sig = int(v / Fraction(2) ** (ee - F))
    return sg | ((ee + bias) << F) | (sig & ((1 << F) - 1))


def cases(fmt, rng, count):
    E, F, qnan = FMTS[fmt]
    W = 1 + E + F
    bias = (1 << (E - 1)) - 1
    emax = (1 << E) - 1
    S = 1 << (W - 1)

    def pack(s, e, m):
        return (s << (W - 1)) | (e << F) | m

    def rnd_finite():
        return pack(rng.randrange(2), rng.randrange(emax), rng.randrange(1 << F))

    out = []
    for n in (2, 3, 5, 8, 16):
        out.append([S] * n)                          # all -0.0
        out.append([S] * (n - 1) + [0])              # one +0.0
        out.append([pack(1, 0, 1)] + [S] * (n - 1))  # -smallest subnormal (ftz: -0)
        out.append([pack(0, emax, 0), pack(1, emax, 0)] + [S] * (n - 2))  # inf - inf
        out.append([pack(1, emax, 0)] + [pack(0, emax - 1, (1 << F) - 1)] * (n - 1))
        out.append([pack(0, emax, 1)] + [0] * (n - 1))  # signalling-pattern NaN
        out.append([pack(0, emax - 1, (1 << F) - 1)] * n)  # overflow
        out.append([pack(1, emax - 1, (1 << F) - 1)] * n)
    # Ties at every position: x plus half an ulp of x (and nearby), both signs.
    for k in range(F + 3):
        for odd in (0, 1):
            e = rng.randrange(F + 3, emax - 1)
            x = pack(0, e, (rng.randrange(1 << F) & ~1) | odd)
            # a leaf of exponent e - F - 1 + ... : half ulp of x is 2^(e-bias-F-1)
            he = e - F - 1
            if he >= 1:
                out.append([x, pack(rng.randrange(2), he, 0)])
                out.append([x, pack(0, he, 0), pack(1, max(he - k, 1), 0)])
                out.append([x | S, pack(1, he, 0), S])
    # Massive cancellation, subnormal results, ftz boundary near the smallest normal.
    for _ in range(count):
        n = rng.choice((2, 3, 4, 5, 8, 16))
        kind = rng.randrange(6)
        if kind == 0:
            xs = [rnd_finite() for _ in range(n // 2)]
            leaves = xs + [x ^ S for x in xs]
            leaves += [pack(rng.randrange(2), rng.randrange(0, 3), rng.randrange(1 << F)) for _ in range(n - len(leaves))]
            if len(leaves) < n or rng.randrange(2):
                leaves[-1] = pack(rng.randrange(2), rng.randrange(emax), rng.randrange(1 << F))
        elif kind == 1:  # around the smallest normal
            leaves = [pack(rng.randrange(2), rng.randrange(0, 3), rng.randrange(1 << F)) for _ in range(n)]
        elif kind == 2:  # a big value, its negation nudged by one ulp, and small ones
            x = rnd_finite()
            leaves = [x, (x ^ S) + rng.choice((-1, 1)) if (x & ((1 << (W - 1)) - 1)) > 1 else x ^ S]
            leaves += [pack(rng.randrange(2), rng.randrange(emax), rng.randrange(1 << F)) for _ in range(n - 2)]
        elif kind == 3:  # random bits (NaNs and infinities included)
            leaves = [rng.randrange(1 << W) for _ in range(n)]
        elif kind == 4:  # near-equal exponents
            e = rng.randrange(1, emax - 1)
            leaves = [pack(rng.randrange(2), min(emax - 1, max(0, e + rng.randrange(-2, 3))), rng.randrange(1 << F)) for _ in range(n)]
        else:
            leaves = [rnd_finite() for _ in range(n)]
        leaves = leaves[:n] + [S] * (n - len(leaves[:n]))
        out.append(leaves)
    return out


def main():
    tool = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 3000
    rng = random.Random(14)
    lines, want = [], []
    for fmt in FMTS:
        for mode in ("ieee", "ftz"):
            for leaves in cases(fmt, rng, count):
                member = [rng.randrange(6) != 0 for _ in leaves]
                if rng.randrange(2):
                    member = [True] * len(leaves)
                toks = [("%x" if m else "~%x") % x for x, m in zip(leaves, member)]
                lines.append("%s %s %s" % (fmt, mode, " ".join(toks)))
                want.append(oracle(fmt, mode == "ftz", leaves, member))
    res = subprocess.run([tool] + sys.argv[3:], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    got = [int(t, 16) for t in res.stdout.split()]
    if len(got) != len(want):
        print("exact_ref_check: %d answers for %d cases" % (len(got), len(want)))
        return 1
    bad = [(l, g, w) for l, g, w in zip(lines, got, want) if g != w]
    for l, g, w in bad[:10]:
        print("MISMATCH %s: reference %x, rational %x" % (l, g, w))
    print("exact_ref_check: %d cases, %d mismatches" % (len(want), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
