"""How a measurement task times a call and reads its process's peak memory."""

from __future__ import annotations

import resource
import time
from typing import Any, Callable


def maxrss_mb() -> float:
    """Peak resident set size of this process so far, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def best_time(fn: Callable[[], Any], reps: int) -> tuple[float, list[float]]:
    """Run fn() reps times (it must block); return (min seconds, all seconds)."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times), times
