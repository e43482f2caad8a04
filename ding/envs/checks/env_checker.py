"""ding's conformance checks for an env class: what collectors, evaluators and env managers rely on.

:func:`check_ding_env` builds envs from a class and a config and checks that

- the spaces are there before ``reset`` and equal those the config declares (``spaces_from_config``);
- observations after ``reset`` and ``step`` lie in the observation space with its exact shapes and dtypes
  (float arrays float32), rewards in the reward space, ``done`` is a bool and ``info`` a dict;
- ``random_action`` lies in the action space and repeats after the same ``seed``;
- two envs seeded alike play identical episodes, with ``dynamic_seed`` on and off, and a dynamically
  seeded env does not replay its first episode;
- an episode's last step carries ``info['eval_episode_return']``;
- ``close`` may be called twice;
- for envs built on gymnasium (``env.env``), gymnasium's own env checker passes.

Failures raise :class:`~ding.errors.EnvConformanceError` naming the check, the env and the value seen.

Example:
    >>> from ding.envs import DingEnvWrapper
    >>> check_ding_env(DingEnvWrapper, {'env_id': 'CartPole-v1'}, steps=60)
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from ding.envs.base_env import BaseEnv
from ding.envs.conformance import check_value_in_space, episode_end_problem
from ding.errors import EnvConformanceError


def _fail(env: BaseEnv, check: str, detail: str) -> EnvConformanceError:
    return EnvConformanceError(f"{type(env).__name__}: {check}: {detail}")


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return set(a) == set(b) and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.array_equal(np.asarray(a), np.asarray(b)))


def _play(env: BaseEnv, steps: int, action_seed: int) -> tuple[list[Any], list[float], list[dict[str, Any]]]:
    """Reset, then take ``steps`` random actions (resetting at episode ends); check each value on the way."""
    obs_space, rew_space = env.observation_space, env.reward_space
    env.action_space.seed(action_seed)
    observations: list[Any] = [env.reset()]
    rewards: list[float] = []
    ends: list[dict[str, Any]] = []
    reason = check_value_in_space(observations[0], obs_space, "obs after reset")
    if reason:
        raise _fail(env, "observation", reason)
    for t in range(steps):
        action = env.random_action()
        reason = check_value_in_space(action, env.action_space, f"random_action at step {t}")
        if reason:
            raise _fail(env, "random_action", reason)
        ts = env.step(action)
        for value, space, what in ((ts.obs, obs_space, f"obs at step {t}"), (ts.reward, rew_space, f"reward {t}")):
            reason = check_value_in_space(value, space, what)
            if reason:
                raise _fail(env, "step", reason)
        if not isinstance(ts.done, bool) or not isinstance(ts.info, dict):
            raise _fail(env, "step", f"done must be a bool and info a dict; got {ts.done!r}, {type(ts.info)}")
        observations.append(ts.obs)
        rewards.append(float(np.sum(ts.reward)))
        if ts.done:
            ends.append(ts.info)
            observations.append(env.reset())
    return observations, rewards, ends


def check_ding_env(
    env_cls: type[BaseEnv],
    cfg: Mapping[str, Any] | None = None,
    *,
    steps: int = 50,
    seed: int = 0,
    require_episode_end: bool = True,
    check_gymnasium: bool = True,
) -> None:
    """Run ding's env conformance checks on envs of ``env_cls`` made with ``cfg``; raise on the first failure.

    Args:
        env_cls: the env class (a registered ``BaseEnv`` subclass).
        cfg: its config (defaults filled from the class).
        steps: random steps per played run; with ``require_episode_end`` at least one episode must end within them.
        seed: the seed the runs use.
        require_episode_end: check ``info['eval_episode_return']`` at an episode end (needs short episodes).
        check_gymnasium: also run gymnasium's env checker on the wrapped gymnasium env, where there is one.
    """
    cfg = dict(cfg or {})
    declared = env_cls.spaces_from_config(cfg)
    envs = [env_cls(cfg=cfg) for _ in range(3)]
    try:
        first = envs[0]
        built = (first.observation_space, first.action_space, first.reward_space)
        if built != tuple(declared):
            raise _fail(first, "spaces before reset", f"{built} differ from the declaration {tuple(declared)}")
        for dynamic in (False, True):
            runs = []
            for env in envs[:2]:
                env.seed(seed, dynamic_seed=dynamic)
                runs.append(_play(env, steps, action_seed=seed))
            (obs_a, rew_a, ends_a), (obs_b, rew_b, _) = runs
            if not (_equal(obs_a, obs_b) and rew_a == rew_b):
                raise _fail(first, "seeding", f"two envs seeded {seed} (dynamic_seed={dynamic}) played differently")
            if require_episode_end:
                if not ends_a:
                    raise _fail(first, "episode end", f"no episode ended within {steps} steps")
                reason = episode_end_problem(ends_a[0])
                if reason:
                    raise _fail(first, "episode end", reason)
        envs[2].seed(seed)
        sample_a = envs[2].random_action()
        envs[2].seed(seed)
        if not _equal(sample_a, envs[2].random_action()):
            raise _fail(envs[2], "random_action", f"differs after seeding {seed} twice")
        _check_dynamic_seed_varies(envs[2], seed)
        if check_gymnasium:
            _check_gymnasium(envs[2])
    finally:
        for env in envs:
            env.close()
            env.close()


DYNAMIC_RESETS = 8
"""Resets with ``dynamic_seed=True`` of which at least two must start differently."""


def _first_obs(env: BaseEnv, seed: int, dynamic: bool, resets: int) -> list[Any]:
    env.seed(seed, dynamic_seed=dynamic)
    return [env.reset() for _ in range(resets)]


def _check_dynamic_seed_varies(env: BaseEnv, seed: int) -> None:
    """With ``dynamic_seed`` episodes start differently, unless the start does not depend on the seed at all.

    Eight resets: some envs vary their starts little (Pong's first frames hardly depend on the no-op count), so a
    few episodes may start alike by chance.
    """
    dynamic = _first_obs(env, seed, True, DYNAMIC_RESETS)
    if any(not _equal(dynamic[0], other) for other in dynamic[1:]):
        return
    seeded_apart = _first_obs(env, seed, False, 1) + _first_obs(env, seed + 1, False, 1)
    if not _equal(seeded_apart[0], seeded_apart[1]):
        raise _fail(env, "dynamic seed", f"{DYNAMIC_RESETS} resets with dynamic_seed=True started identically")


def _check_gymnasium(env: BaseEnv) -> None:
    inner = getattr(env, "env", None)
    if inner is None:
        return
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(inner, skip_render_check=True, skip_close_check=True)  # ding checks close itself
