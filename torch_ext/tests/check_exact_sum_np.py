"""tblib.exact_sum_np, the determinism case's exact-sum reference, against rational arithmetic
(ctest torch.python.exact_sum_np): random leaves over the whole float32 range, massive
cancellation, ties, all-zero columns, and the case where a float64 sum of four leaves spanning 28
bits rounds a tie away (the fast path's bound). The expected value: the exact sum as a Fraction,
rounded to float32 by choosing the nearest of the float32 neighbours (ties to the even one).
Exit 0 pass, 1 fail, 77 when numpy or torch (tblib imports it) is missing."""
import sys
from fractions import Fraction

try:
    import numpy as np
    import tblib
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)


def rounded(leaves):
    """The exact sum rounded once to float32, by rationals alone."""
    ex = sum(Fraction(float(v)) for v in leaves)
    if ex == 0:
        return np.float32(-0.0) if all(np.signbit(v) for v in leaves) else np.float32(0.0)
    if abs(ex) >= 2 ** 128 - 2 ** 103:  # at or past the midpoint above the largest float32: overflow
        return np.float32(np.inf if ex > 0 else -np.inf)
    f = np.float32(float(ex))  # within an ulp or so of the answer
    cand = {f}
    for _ in range(2):
        cand |= {np.nextafter(c, np.float32(np.inf)) for c in cand} | {np.nextafter(c, np.float32(-np.inf)) for c in cand}
    cand = [c for c in cand if np.isfinite(c)]
    best = min(cand, key=lambda c: (abs(Fraction(float(c)) - ex), int(np.float32(c).view(np.int32)) & 1))
    return best


rng = np.random.default_rng(7)
cases = []
for t in range(4000):
    e = rng.integers(-149, 127, size=4)
    v = (rng.standard_normal(4) * np.ldexp(1.0, e)).astype(np.float32)
    if t % 3 == 0:
        v[1] = -v[0]  # cancellation
    if t % 5 == 0:  # a span the fast path takes (at most 28 bits)
        v = (rng.standard_normal(4) * np.ldexp(1.0, rng.integers(-3, 25, size=4))).astype(np.float32)
    cases.append(v)
f32 = np.float32
cases += [
    # four leaves spanning 28 bits whose float64 sum rounds a tie: the exact 2 + 2^-23 + 2^-52
    # rounds to 2 + 2^-22 (0x40000001); float64 then float32 gives 2.0.
    np.array([1 - 2.0 ** -24, 1 - 2.0 ** -24, 2.0 ** -22 - 2.0 ** -29, 2.0 ** -29 + 2.0 ** -52], dtype=f32),
    np.array([1.0, 2.0 ** -24, 0.0, 0.0], dtype=f32),  # a tie: stays at 1.0 (even)
    np.array([1.0, 2.0 ** -24, 2.0 ** -60, 0.0], dtype=f32),  # just above the tie: up
    np.array([-0.0, -0.0, -0.0, -0.0], dtype=f32),
    np.array([1.0, -1.0, -0.0, -0.0], dtype=f32),
    np.array([np.finfo(f32).max, np.finfo(f32).max, 0.0, 0.0], dtype=f32),  # beyond the largest: inf
]
np.seterr(over="ignore")  # the overflow case's casts
want = [rounded(c) for c in cases]
got = tblib.exact_sum_np([np.array([c[j] for c in cases], dtype=f32) for j in range(4)])
bad = [i for i, (w, g) in enumerate(zip(want, got)) if np.float32(w).view(np.int32) != np.float32(g).view(np.int32)]
for i in bad[:5]:
    print(f"FAIL: leaves {cases[i].tolist()}: exact_sum_np {got[i]!r}, rationals {want[i]!r}")
print(f"{len(cases) - len(bad)} of {len(cases)} sums equal to the rational reference")
sys.exit(1 if bad else 0)
