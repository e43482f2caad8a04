"""Seeds from one run seed: per role and env when a run starts, per episode at each reset.

Everything comes from ``numpy.random.SeedSequence``, so one int reproduces a whole run:

- :func:`role_seeds` gives every env of a run its seed, one stream per role (collector, evaluator)
  and one child per env; the seeds are distinct across both roles.
- :class:`EpisodeSeeds` is an env's episode stream: an env seeded ``s`` with ``dynamic_seed`` draws
  each reset's seed from it, over the full range ``[0, 2**32)``.

Streams are independent: two seeds of a run meet only as any two draws of 32 bits would (a chance of
about one in four billion per pair).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ding.errors import ConfigError

ROLES = ("collector", "evaluator")
"""The roles whose envs get their own seed stream, in the order their seeds are drawn."""

SEED_BOUND = 2**32
"""Seeds lie in ``[0, SEED_BOUND)``: what every simulator takes (gymnasium, ALE, MuJoCo)."""


def role_seeds(seed: int, env_nums: Mapping[str, int]) -> dict[str, list[int]]:
    """The seed of each env of each role named in ``env_nums`` (role -> number of envs), from the run's ``seed``.

    Env ``i`` of a role takes child ``i`` of the role's stream (skipping a value another env already
    has, so no two envs of the run share a seed). A role's seeds do not depend on the other roles'
    env numbers except through that skip.

    Example:
        >>> seeds = role_seeds(0, {'collector': 2, 'evaluator': 1})
        >>> len(seeds['collector']), len(set(seeds['collector'] + seeds['evaluator']))
        (2, 3)
        >>> role_seeds(0, {'collector': 3})['collector'][:2] == seeds['collector']
        True
    """
    _check_seed(seed)
    unknown = sorted(set(env_nums) - set(ROLES))
    if unknown:
        raise ConfigError(f"unknown roles {unknown}; roles: {list(ROLES)}")
    taken: set[int] = set()
    out: dict[str, list[int]] = {}
    for index, role in enumerate(ROLES):
        if role not in env_nums:
            continue
        count = env_nums[role]
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise ConfigError(f"env_nums[{role!r}] must be an int >= 0, got {count!r}")
        seeds: list[int] = []
        child = 0
        while len(seeds) < count:
            value = int(np.random.SeedSequence(seed, spawn_key=(index, child)).generate_state(1, np.uint32)[0])
            child += 1
            if value not in taken:
                taken.add(value)
                seeds.append(value)
        out[role] = seeds
    return out


class EpisodeSeeds:
    """The episode seeds of an env seeded ``seed``: a reproducible stream over ``[0, 2**32)``.

    Example:
        >>> a, b = EpisodeSeeds(0), EpisodeSeeds(0)
        >>> seeds = [a.draw() for _ in range(3)]
        >>> seeds == [b.draw() for _ in range(3)], len(set(seeds)), all(0 <= s < 2**32 for s in seeds)
        (True, 3, True)
    """

    def __init__(self, seed: int) -> None:
        _check_seed(seed)
        self.seed = int(seed)
        self._rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))

    def draw(self) -> int:
        """The next episode's seed."""
        return int(self._rng.integers(SEED_BOUND, dtype=np.uint64))


def _check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"a seed must be an int >= 0, got {seed!r}")
