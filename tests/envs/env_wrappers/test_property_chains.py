"""Random wrapper chains on real and synthetic envs: every prediction is the wrapped env's spaces, and every value
the chain produces lies in them.

Hypothesis draws an env, then up to six wrappers with keyword arguments (``fields`` and ``channel_order``
included) from :mod:`.chain_strategies`; a step the ahead-of-time rule rejects is left out. For the chain that
remains: ``update_shape`` equals the shapes of ``update_space``, which equals the spaces of the wrapped env
(bounds compared exactly); the wrapped env is reset with a seed and stepped with random actions across episode
ends, and every observation (exact dtype) and reward (as float32) lies in the declared spaces.

Construction may refuse only what spaces cannot tell: ``ram`` on a non-ALE image, ``time_limit(None)`` or
``random_first_episode_length(None)`` without a spec limit, ``noop_reset`` with an action that is not NOOP;
the error must name the wrapper. CI runs a fixed set of examples (``derandomize``); set
``DING_HYPOTHESIS_SEED`` (and ``DING_HYPOTHESIS_EXAMPLES``) to explore others.
"""

from __future__ import annotations

import os
from typing import Any

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from ding.envs.env_wrappers import WRAPPER_REGISTRY, apply_wrappers, update_shape, update_space
from ding.envs.values.spaces import EnvSpaces, reward_space_of
from ding.errors import ConfigError, ShapeRuleError
from tests.envs.env_wrappers.chain_envs import AVAILABLE, CHAIN_ENVS, raw_env
from tests.envs.env_wrappers.chain_strategies import IMAGE_WRAPPERS, KWARGS
from tests.envs.env_wrappers.checks import assert_matches_space, assert_reward_matches, assert_same_space

MAX_WRAPPERS = 8
WEIGHTS = {w: 4 for w in IMAGE_WRAPPERS}
#: Wrappers whose requirement only the built env can tell; their error names them, at construction.
BUILD_TIME = ("ram", "time_limit", "random_first_episode_length", "noop_reset")

_SEED = os.environ.get("DING_HYPOTHESIS_SEED")
_EXAMPLES = os.environ.get("DING_HYPOTHESIS_EXAMPLES")


def _settings(examples: int) -> Any:
    chosen = int(_EXAMPLES) if _EXAMPLES else examples
    common = settings(
        max_examples=chosen,
        deadline=None,
        derandomize=_SEED is None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
        print_blob=True,
        database=None,  # nothing written to the work tree; a failure prints its reproducer
    )
    if _SEED is None:
        return common
    return lambda test: seed(int(_SEED))(common(test))


@st.composite
def chains(draw: st.DrawFn) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    """An env name and a chain its spaces accept, step by step."""
    name = draw(st.sampled_from(AVAILABLE))
    env = raw_env(name)
    current = EnvSpaces(env.observation_space, env.action_space, reward_space_of(env))
    chain: list[tuple[str, dict[str, Any]]] = []
    for _ in range(draw(st.integers(0, MAX_WRAPPERS))):
        options = {w: rule(current, CHAIN_ENVS[name]) for w, rule in KWARGS.items()}
        # image wrappers apply to fewer envs: weigh them up where they apply
        weighted = [w for w, kwargs in sorted(options.items()) if kwargs is not None for _ in range(WEIGHTS.get(w, 1))]
        wrapper = draw(st.sampled_from(weighted))
        kwargs = draw(options[wrapper])  # type: ignore[arg-type]
        try:
            current = update_space(*current, [(wrapper, kwargs)])
        except ShapeRuleError:
            continue  # rejected ahead of time: not part of a chain to prove
        chain.append((wrapper, kwargs))
    return name, chain


class OwnSpaceGuard(gym.Wrapper[Any, Any, Any, Any]):
    """Notes when the raw env itself leaves its declared observation space (LunarLander does, slightly):
    what wrappers make of such a value is not theirs to answer for."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self.strayed = False

    def _note(self, obs: Any) -> Any:
        self.strayed = self.strayed or not self.env.observation_space.contains(obs)
        return obs

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        return self._note(obs), info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, *rest = self.env.step(action)
        return self._note(obs), *rest  # type: ignore[return-value]


def prove_chain(name: str, chain: list[tuple[str, dict[str, Any]]], run_seed: int) -> None:
    """The chain's predictions are the wrapped env's spaces, and every value it produces is inside them."""
    env = OwnSpaceGuard(raw_env(name))
    base = EnvSpaces(env.observation_space, env.action_space, reward_space_of(env))
    predicted = update_space(*base, chain)
    assert update_shape(*base.shapes, chain) == predicted.shapes
    try:
        wrapped = apply_wrappers(env, chain)
    except ConfigError as err:
        assert any(str(err).startswith(w) for w in BUILD_TIME), f"built chain {chain} fails: {err}"
        return
    assert_same_space(wrapped.observation_space, predicted.observation, "observation space")
    assert_same_space(wrapped.action_space, predicted.action, "action space")
    assert_same_space(reward_space_of(wrapped), predicted.reward, "reward space")

    obs, _ = wrapped.reset(seed=run_seed)
    if env.strayed:
        return
    assert_matches_space(obs, predicted.observation, "obs after reset")
    wrapped.action_space.seed(run_seed)
    for t in range(CHAIN_ENVS[name].steps):
        obs, reward, terminated, truncated, _ = wrapped.step(wrapped.action_space.sample())
        if env.strayed:
            return
        assert_matches_space(obs, predicted.observation, f"obs at step {t}")
        assert_reward_matches(reward, predicted.reward, f"reward at step {t}")
        if terminated or truncated:
            obs, _ = wrapped.reset()
            if env.strayed:
                return
            assert_matches_space(obs, predicted.observation, f"obs after the reset at step {t}")


def test_every_registered_wrapper_has_a_strategy() -> None:
    assert set(KWARGS) == set(WRAPPER_REGISTRY)


@_settings(300)
@given(drawn=chains(), run_seed=st.integers(0, 2**16))
def test_random_chains_keep_their_spaces(drawn: tuple[str, list[tuple[str, dict[str, Any]]]], run_seed: int) -> None:
    prove_chain(*drawn, run_seed)


@pytest.mark.slow
@_settings(3000)
@given(drawn=chains(), run_seed=st.integers(0, 2**16))
def test_many_random_chains_keep_their_spaces(
    drawn: tuple[str, list[tuple[str, dict[str, Any]]]], run_seed: int
) -> None:
    prove_chain(*drawn, run_seed)
