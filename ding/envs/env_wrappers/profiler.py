"""``profiler``: how long an env's ``reset``, ``step`` and ``render`` take, and optionally where the time goes.

Every call is timed with ``time.perf_counter``; :meth:`ProfilerWrapper.timing_stats` gives, per kind of call,
its count, total, mean, median (p50), 95th percentile (p95) and maximum in seconds (each call's duration is kept,
8 bytes a call, so the percentiles are exact). ``close()`` logs :meth:`ProfilerWrapper.report` on the
``ding.profiler`` logger (level INFO) and, with ``profile_path``, writes a cProfile dump of every timed call
(read it with ``python -m pstats <path>`` or snakeviz).
"""

from __future__ import annotations

import cProfile
import dataclasses
import logging
import os
import pathlib
import time
from array import array
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers.base import DingWrapper, SpaceTriple, register_wrapper
from ding.errors import ConfigError

logger = logging.getLogger("ding.profiler")
CALLS = ("reset", "step", "render")
R = TypeVar("R")


@dataclasses.dataclass(frozen=True)
class CallStats:
    """Timing statistics of one kind of call, in seconds."""

    count: int
    total: float
    mean: float
    p50: float
    p95: float
    max: float

    @classmethod
    def of(cls, durations: array[float]) -> CallStats:
        """The statistics of ``durations`` (all zeros when there are none)."""
        if not durations:
            return cls(0, 0.0, 0.0, 0.0, 0.0, 0.0)
        values = np.frombuffer(durations, dtype=np.float64)
        p50, p95 = np.percentile(values, [50, 95])
        total = float(values.sum())
        return cls(len(values), total, total / len(values), float(p50), float(p95), float(values.max()))


@register_wrapper("profiler")
class ProfilerWrapper(DingWrapper):
    """Time every ``reset``, ``step`` and ``render``; spaces unchanged.

    ``profile_path`` (None: no cProfile) is where ``close()`` writes the cProfile dump; ``{pid}`` in it is
    replaced by the process id, so envs in several worker processes write separate files. ``log_at_close``
    logs the timing report when the env closes.

    Example:
        >>> from gymnasium.envs.classic_control import CartPoleEnv
        >>> env = ProfilerWrapper(CartPoleEnv(), log_at_close=False)
        >>> _ = env.reset(seed=0)
        >>> for _ in range(3):
        ...     _ = env.step(0)
        >>> stats = env.timing_stats()
        >>> stats['step'].count, stats['reset'].count, stats['render'].count
        (3, 1, 0)
        >>> stats['step'].p50 <= stats['step'].p95 <= stats['step'].max
        True
    """

    @staticmethod
    def space_rule(
        obs_space: spaces.Space[Any],
        act_space: spaces.Space[Any],
        rew_space: spaces.Space[Any],
        *,
        profile_path: str | None = None,
        log_at_close: bool = True,
    ) -> SpaceTriple:
        if profile_path is not None and not profile_path.strip():
            raise ConfigError("profiler: profile_path must be a file path or None; got an empty string")
        return obs_space, act_space, rew_space

    def _setup(self) -> None:
        self._durations: dict[str, array[float]] = {call: array("d") for call in CALLS}
        self._profile = cProfile.Profile() if self.profile_path is not None else None
        self._closed = False

    def _timed(self, call: str, fn: Callable[[], R]) -> R:
        profile = self._profile
        start = time.perf_counter()
        if profile is not None:
            profile.enable()
        try:
            return fn()
        finally:
            if profile is not None:
                profile.disable()
            self._durations[call].append(time.perf_counter() - start)

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        return self._timed("reset", lambda: self.env.reset(**kwargs))

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        return self._timed("step", lambda: self.env.step(action))

    def render(self) -> Any:
        return self._timed("render", self.env.render)

    def timing_stats(self) -> dict[str, CallStats]:
        """Per kind of call (``reset``, ``step``, ``render``): its :class:`CallStats` so far."""
        return {call: CallStats.of(durations) for call, durations in self._durations.items()}

    def report(self) -> str:
        """The timing statistics as a table, in milliseconds."""
        lines = [f"{'call':<8}{'count':>10}{'mean ms':>12}{'p50 ms':>12}{'p95 ms':>12}{'max ms':>12}"]
        for call, s in self.timing_stats().items():
            ms = [f"{v * 1e3:>12.4f}" for v in (s.mean, s.p50, s.p95, s.max)]
            lines.append(f"{call:<8}{s.count:>10}{''.join(ms)}")
        return "\n".join(lines)

    def profile_file(self) -> pathlib.Path | None:
        """The path of the cProfile dump in this process (None without ``profile_path``)."""
        if self.profile_path is None:
            return None
        return pathlib.Path(self.profile_path.replace("{pid}", str(os.getpid())))

    def dump_profile(self) -> pathlib.Path | None:
        """Write the cProfile statistics gathered so far to :meth:`profile_file`; returns that path."""
        path = self.profile_file()
        if path is None or self._profile is None:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        self._profile.dump_stats(str(path))
        return path

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            if self.log_at_close:
                logger.info("env timings of %s:\n%s", self.env, self.report())
            self.dump_profile()
        super().close()
