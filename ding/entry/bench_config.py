"""``ding -m bench -c cfg.py``: which env manager configuration runs the config's own env fastest on this machine.

The config's collector envs are built as ``ding -m serial`` builds them (the user's modules in ``import_names``
included), under each configuration that fits the env count and the machine's cores
(:mod:`~ding.entry.bench_candidates`); each is timed side by side within the budget (:mod:`~ding.entry.bench_measure`);
the table and the recommendation (:mod:`~ding.entry.bench_choice`) are printed, and ``--write NEW.py`` writes a new
config file that reads the user's and sets the chosen manager (:mod:`~ding.entry.bench_write`).
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable

from ding.config import compile_config, read_config
from ding.entry.bench_candidates import candidates
from ding.entry.bench_choice import recommend, result_table
from ding.entry.bench_measure import measure
from ding.entry.bench_write import checked_target, write_choice
from ding.envs.from_config import role_env_fns, role_manager_config
from ding.errors import ConfigError

DEFAULT_SECONDS = 30.0
"""The default time budget of a measurement, start-ups included."""
MAX_SECONDS = 3600.0
BUSY_CORES = 0.25
"""Above this much background load (cores busy with other processes) the report warns that the ratios are noisy."""


def check_seconds(value: float) -> float:
    """The budget in seconds, refused unless a finite number in (0, :data:`MAX_SECONDS`].

    >>> check_seconds(5)
    5.0
    >>> check_seconds(0)
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: --seconds must be a number of seconds > 0 and <= 3600, got 0
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"--seconds must be a number of seconds > 0 and <= {MAX_SECONDS:.0f}, got {value!r}")
    if not 0 < value <= MAX_SECONDS:
        raise ConfigError(f"--seconds must be a number of seconds > 0 and <= {MAX_SECONDS:.0f}, got {value!r}")
    return float(value)


@dataclasses.dataclass(frozen=True)
class BenchReport:
    """What ``-m bench`` prints: the lines, and the chosen settings (None when nothing could be measured)."""

    lines: list[str]
    settings: dict[str, object] | None


def bench_config(
    config_path: str,
    seconds: float = DEFAULT_SECONDS,
    write: str | None = None,
    log: Callable[[str], None] | None = None,
) -> BenchReport:
    """Measure the config's collector envs under every fitting manager configuration (see the module)."""
    seconds = check_seconds(seconds)
    if write is not None:
        checked_target(write)  # before the measurement, not after it
    main_config, create_config = read_config(config_path)
    cfg = compile_config(main_config, create_config, require_policy=False)
    env_fns = role_env_fns(cfg.env, "collector")
    manager = role_manager_config(cfg.env, "collector")
    cores = len(os.sched_getaffinity(0))
    found, skipped = candidates(len(env_fns), cores, manager)
    if log is not None:
        log(f"measuring {len(found)} manager configurations for {len(env_fns)} envs on {cores} cores, ~{seconds:g} s")
    measurement = measure(env_fns, found, manager, seconds, int(cfg.seed), log=log)
    choice = recommend(measurement.results)
    settings = dict(choice.chosen.candidate.settings)
    lines = [
        f"{len(env_fns)} collector envs ({cfg.env.type}) on {cores} cores; env steps/s through the collector's "
        f"step(), median of the repeats (± half their range):",
        "",
        result_table(measurement.results, skipped, choice),
        "",
        *background_lines(measurement.background_cores, cores),
        f"recommended: {choice.why}",
        "in the config: " + ", ".join(manager_keys(settings)),
    ]
    if write is not None:
        written, removed = write_choice(config_path, settings, write)
        gone = "".join(f", without main_config.env.manager.{key}" for key in removed if key != "type")
        lines.append(f"wrote {written}: reads {config_path} and sets these keys{gone}")
    return BenchReport(lines, settings)


def background_lines(background_cores: float, cores: int) -> list[str]:
    """A warning when other processes kept more than :data:`BUSY_CORES` cores busy during the measurement.

    >>> background_lines(0.1, 2)
    []
    >>> background_lines(1.25, 2)  # doctest: +ELLIPSIS
    ['other processes kept 1.2 of the 2 cores busy during the measurement: ...']
    """
    if background_cores <= BUSY_CORES:
        return []
    return [
        f"other processes kept {background_cores:.1f} of the {cores} cores busy during the measurement: the ratios "
        "are less reliable (measure again on a quieter machine)"
    ]


def manager_keys(settings: dict[str, object]) -> list[str]:
    """Where each chosen key goes in a config.

    >>> manager_keys({'type': 'subprocess', 'envs_per_worker': 2})
    ["create_config.env_manager.type = 'subprocess'", 'main_config.env.manager.envs_per_worker = 2']
    """
    return [
        f"create_config.env_manager.type = {value!r}" if key == "type" else f"main_config.env.manager.{key} = {value!r}"
        for key, value in settings.items()
    ]


__all__ = ["DEFAULT_SECONDS", "BenchReport", "bench_config", "check_seconds", "manager_keys"]
