"""How much memory this machine has available: what memory checks (replay buffers, models) compare with."""

from __future__ import annotations

import pathlib


def mem_available(meminfo: str | pathlib.Path = "/proc/meminfo") -> int | None:
    """``MemAvailable`` in bytes (the kernel's estimate of what can be allocated without swapping), or None where
    the kernel does not report it."""
    try:
        lines = pathlib.Path(meminfo).read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return None
