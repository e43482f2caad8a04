"""Episodes that begin inside ``step``: what a wrapper puts in the observation follows the episode it belongs to.

``non_episodic`` resets its env inside ``step`` and returns the new episode's first observation; the wrappers
above it that depend on the episode must start afresh there, as at a reset. Hypothesis draws chains on a
multitask env that contain ``non_episodic`` and / or ``random_first_episode_length`` among other wrappers (from
:mod:`.chain_strategies`), then optionally ``action_observation``, ``obs_plus_prev_action_reward`` or
``frame_stack``, and ``task_id`` last; it plays the chain with random actions and checks meanings, not bounds:

- the task code in every observation is the task of the episode that observation belongs to: ``info['task_id']``,
  or at a step (or a reset made of steps, as ``episodic_life``'s) inside which an episode began, that episode's
  (``info['reset_info']['task_id']``);
- ``prev_action`` / ``prev_reward_extrinsic`` are zero with an episode's first observation and the step's own
  action and reward otherwise;
- a frame stack is filled with an episode's first observation and shifts by one frame otherwise.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import given
from hypothesis import strategies as st

from ding.envs.env_wrappers import MultitaskEnv, apply_wrappers, update_space
from ding.envs.env_wrappers.action import zero_action
from ding.envs.env_wrappers.base import episode_began
from ding.envs.env_wrappers.fields import get_field
from ding.envs.values.spaces import EnvSpaces, reward_space_of
from ding.errors import ConfigError, ShapeRuleError
from tests.envs.env_wrappers.catalogue import CatalogueEnv
from tests.envs.env_wrappers.chain_envs import ChainEnv
from tests.envs.env_wrappers.chain_strategies import KWARGS
from tests.envs.env_wrappers.test_property_chains import BUILD_TIME, _settings

TASKS = 2
STEPS = 60
BOUNDARIES = ("non_episodic", "random_first_episode_length")
WATCHERS = (None, "action_observation", "obs_plus_prev_action_reward", "frame_stack")
LEFT_OUT = ("task_id", "curriculum", *BOUNDARIES, *WATCHERS[1:])  # placed by the strategy itself


def multitask() -> MultitaskEnv:
    """Two tasks of different observation lengths (padded) and episode lengths, with lives in their info."""
    long = CatalogueEnv(spaces.Box(-10, 10, (5,), np.float32), spaces.Discrete(3), episode_len=9, lives=3)
    short = CatalogueEnv(spaces.Box(0, 3, (3,), np.float32), spaces.Discrete(3), episode_len=4, lives=3)
    return MultitaskEnv([long, short], ["long", "short"], pad_observation=True)


ENV = ChainEnv(multitask, steps=STEPS, lives=True)


@st.composite
def episode_chains(draw: st.DrawFn) -> list[tuple[str, dict[str, Any]]]:
    """Wrappers the spaces accept, with non_episodic and / or random_first_episode_length among them, then
    maybe a watcher, then task_id."""
    env = multitask()
    current = EnvSpaces(env.observation_space, env.action_space, reward_space_of(env))
    boundaries = draw(st.sampled_from([["non_episodic"], ["random_first_episode_length"], list(BOUNDARIES)]))
    others = draw(st.integers(0, 5))
    places = sorted(draw(st.lists(st.integers(0, others), min_size=len(boundaries), max_size=len(boundaries))))
    chain: list[tuple[str, dict[str, Any]]] = []

    def add(wrapper: str) -> None:
        nonlocal current
        rule = KWARGS[wrapper](current, ENV)
        if rule is None:
            return
        kwargs = draw(rule)  # type: ignore[arg-type]
        try:
            current = update_space(*current, [(wrapper, kwargs)])
        except ShapeRuleError:
            return
        chain.append((wrapper, kwargs))

    candidates = sorted(w for w in KWARGS if w not in LEFT_OUT)
    for position in range(others + 1):
        for _ in range(places.count(position)):
            add(boundaries.pop(0))
        if position < others:
            add(draw(st.sampled_from(candidates)))
    watcher = draw(st.sampled_from(WATCHERS))
    if watcher is not None:
        add(watcher)
    encoding = draw(st.sampled_from(["one_hot", "index", "dict"]))
    try:
        update_space(*current, [("task_id", {"num_tasks": TASKS, "encoding": encoding})])
    except ShapeRuleError:
        encoding = "dict"  # a Dict or non-flat observation takes the task as an entry
    chain.append(("task_id", {"num_tasks": TASKS, "encoding": encoding}))
    return chain


def task_code(obs: Any, encoding: str) -> int:
    if encoding == "dict":
        return int(obs["task_id"])
    if encoding == "index":
        return int(obs[-1])
    code = np.asarray(obs[-TASKS:])
    assert sorted(code.tolist()) == [0] * (TASKS - 1) + [1], code
    return int(np.argmax(code))


def inner(obs: dict[str, Any]) -> Any:
    """The watcher's observation under task_id's ``dict`` entry."""
    return obs["observation"] if "observation" in obs and "task_id" in obs and len(obs) == 2 else obs


class Watch:
    """What the watcher below task_id must show, step by step (``fields``: frame_stack's stacked paths)."""

    def __init__(self, watcher: str | None, act_space: spaces.Space[Any], fields: list[str] | None = None) -> None:
        self.watcher, self.act_space, self.fields = watcher, act_space, fields
        self.last_stacks: list[np.ndarray] | None = None

    def check(self, obs: Any, first: bool, action: Any = None, reward: Any = None, where: str = "") -> None:
        if self.watcher is None:
            return
        seen = inner(obs)
        if self.watcher == "frame_stack":
            stacks = [np.asarray(get_field(seen, f) if f else seen) for f in self.fields or [None]]
            for i, stack in enumerate(stacks):
                if first:
                    assert all(np.array_equal(frame, stack[-1]) for frame in stack), f"{where}: a fresh stack"
                else:
                    assert self.last_stacks is not None
                    assert np.array_equal(stack[:-1], self.last_stacks[i][1:]), f"{where}: the stack shifts by one"
            self.last_stacks = stacks
            return
        prev = seen["prev_action"]
        expected = zero_action(self.act_space) if first else self._recorded(action)
        assert np.array_equal(np.asarray(prev), np.asarray(expected)), f"{where}: prev_action {prev} != {expected}"
        if self.watcher == "obs_plus_prev_action_reward":
            got = np.asarray(seen["prev_reward_extrinsic"], dtype=np.float32).reshape(-1)
            want = np.zeros_like(got) if first else np.asarray(reward, dtype=np.float32).reshape(-1)
            assert np.array_equal(got, want), f"{where}: prev_reward_extrinsic {got} != {want}"

    def _recorded(self, action: Any) -> Any:
        if isinstance(self.act_space, spaces.Box):
            return np.clip(np.asarray(action, dtype=self.act_space.dtype), self.act_space.low, self.act_space.high)
        return action


def play_episode_chain(chain: list[tuple[str, dict[str, Any]]], run_seed: int) -> int:
    """Play ``chain`` on the multitask env, checking every observation's meaning; the episodes begun in steps."""
    try:
        env: gym.Env[Any, Any] = apply_wrappers(multitask(), chain)
    except ConfigError as err:
        assert any(str(err).startswith(w) for w in BUILD_TIME), f"built chain {chain} fails: {err}"
        return 0
    encoding = chain[-1][1]["encoding"]
    watchers = [(w, kwargs) for w, kwargs in chain[-2:-1] if w in WATCHERS]
    watcher, kwargs = watchers[0] if watchers else (None, {})
    watch = Watch(watcher, env.action_space, kwargs.get("fields"))
    obs, info = env.reset(seed=run_seed)
    assert task_code(obs, encoding) == (episode_began(info) or info)["task_id"], "after reset"
    watch.check(obs, first=True, where="after reset")
    env.action_space.seed(run_seed)
    began_in_steps = 0
    for t in range(STEPS):
        action = env.action_space.sample()
        obs, reward, terminated, truncated, info = env.step(action)
        began = episode_began(info)
        began_in_steps += began is not None
        task = (began or info)["task_id"]
        assert task_code(obs, encoding) == task, f"step {t}: the code says {task_code(obs, encoding)}, info {task}"
        watch.check(obs, first=began is not None, action=action, reward=reward, where=f"step {t}")
        if terminated or truncated:
            obs, info = env.reset()  # a reset made of steps (episodic_life's) may begin an episode inside one
            assert task_code(obs, encoding) == (episode_began(info) or info)["task_id"], f"after the reset at step {t}"
            watch.check(obs, first=True, where=f"after the reset at step {t}")
    return began_in_steps


@_settings(200)
@given(chain=episode_chains(), run_seed=st.integers(0, 2**16))
def test_observations_follow_the_episode_they_belong_to(chain: list[tuple[str, dict[str, Any]]], run_seed: int) -> None:
    play_episode_chain(chain, run_seed)


def test_the_task_code_follows_an_episode_begun_inside_step() -> None:
    chain: list[tuple[str, dict[str, Any]]] = [
        ("frame_skip", {"skip": 3, "cumulative_reward": True}),
        ("flatten_observation", {}),
        ("action_observation", {}),
        ("non_episodic", {}),
        ("task_id", {"num_tasks": 2, "encoding": "dict"}),
    ]
    began = sum(play_episode_chain(chain, seed) for seed in range(5))
    assert began >= 10  # episodes did begin inside steps, and their observations carried their task


@pytest.mark.slow
@_settings(2000)
@given(chain=episode_chains(), run_seed=st.integers(0, 2**16))
def test_many_observations_follow_the_episode_they_belong_to(
    chain: list[tuple[str, dict[str, Any]]], run_seed: int
) -> None:
    play_episode_chain(chain, run_seed)
