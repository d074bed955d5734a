"""The few distribution tails the integrity rules need (normal, binomial, chi-squared), without SciPy.

Each rule's threshold is derived from its null distribution; these give those tails exactly enough
(relative error well under 1e-10) from the standard library alone, so the floor needs no new package.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Final

#: Two-sided 99.9 % quantile of the standard normal: |Z| > this with probability 0.001.
Z_999: Final = 3.2905267314918945


def normal_quantile(p: float) -> float:
    """The z with P(Z <= z) = p, by bisection on ``erf`` (only used to state sample sizes)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a probability strictly between 0 and 1, not {p}")
    low, high = -40.0, 40.0
    for _ in range(200):
        mid = (low + high) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2)) < p:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def binomial_upper_tail(n: int, p: float, k: int) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed term by term in logarithms (no underflow to 0 early)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    log_p, log_q = math.log(p), math.log1p(-p)
    total = 0.0
    for j in range(k, n + 1):
        log_ways = math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1)
        total += math.exp(log_ways + j * log_p + (n - j) * log_q)
    return total


@lru_cache(maxsize=4096)
def binomial_threshold(n: int, p: float, alpha: float) -> int:
    """The least k with P(X >= k) <= ``alpha`` for X ~ Binomial(n, p): a count at or above it is an alarm."""
    k = math.ceil(n * p)
    while binomial_upper_tail(n, p, k) > alpha:
        k += 1
    return k


def chi_squared_upper_tail(statistic: float, dof: int) -> float:
    """P(X >= statistic) for X ~ chi-squared with ``dof`` degrees of freedom: Q(dof/2, statistic/2)."""
    if dof < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {dof}")
    if statistic <= 0:
        return 1.0
    return _gamma_q(dof / 2, statistic / 2)


def _gamma_q(a: float, x: float) -> float:
    """The regularized upper incomplete gamma Q(a, x): a series below a + 1, a continued fraction above."""
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        denom = a
        for _ in range(1000):
            denom += 1
            term *= x / denom
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 1000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-15:
            break
    return math.exp(log_front) * h
