"""The one place where units are converted.

Bandwidths in files are gigabits per second per direction (`_gbps`), as network people
quote them; nccl-tests and memory people quote gigabytes per second (`_gBps`/`GB/s`).
"""

BITS_PER_BYTE = 8
GIB = 1024**3
US_PER_S = 1e6


def gbps_to_bytes_per_s(gbps: float) -> float:
    """Gigabits per second (10^9 bit/s) to bytes per second."""
    return gbps * 1e9 / BITS_PER_BYTE


def gbps_to_gBps(gbps: float) -> float:
    """Gigabits per second to gigabytes per second (10^9 B/s, nccl-tests' GB/s)."""
    return gbps / BITS_PER_BYTE


def gBps_to_gbps(gBps: float) -> float:
    """Gigabytes per second to gigabits per second."""
    return gBps * BITS_PER_BYTE


def us_to_s(us: float) -> float:
    return us / US_PER_S


def s_to_us(s: float) -> float:
    return s * US_PER_S


def usd_text(v: float) -> str:
    """Dollars as a buyer reads them: $12.3M from a million up, else whole dollars."""
    return f"${v / 1e6:,.1f}M" if v >= 1e6 else f"${v:,.0f}"
