"""What the benches read about their own process."""

from __future__ import annotations


def rss_mb() -> float:
    """This process's resident set (VmRSS) in MiB; NaN where /proc is not there."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")
