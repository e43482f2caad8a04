"""``AgentLayout``: the packing rule of multi-agent envs, and every value it packs lying in the spaces it states."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.conformance import check_value_in_space
from ding.envs.multi_agent import AgentLayout, blank, stack_space
from ding.errors import ConfigError, EnvSpecError

BOX = spaces.Box(-1.0, 1.0, (4,), np.float32)
FIVE = spaces.Discrete(5)
AGENTS = ("a", "b", "c")


def layout(obs: Any = BOX, act: Any = FIVE, **switches: Any) -> AgentLayout:
    obs_spaces = obs if isinstance(obs, tuple) else (obs,) * 3
    act_spaces = act if isinstance(act, tuple) else (act,) * 3
    return AgentLayout(AGENTS, obs_spaces, act_spaces, **switches)


def assert_in(value: Any, space: spaces.Space[Any]) -> None:
    reason = check_value_in_space(value, space, "value")
    assert reason is None, reason


@pytest.mark.parametrize(
    ("space", "expected"),
    [
        (spaces.Discrete(5, start=1), spaces.MultiDiscrete([5, 5], start=[1, 1])),
        (spaces.MultiDiscrete([2, 3]), spaces.MultiDiscrete([[2, 3], [2, 3]])),
        (spaces.MultiBinary(3), spaces.MultiBinary([2, 3])),
        (spaces.Box(0, 255, (2, 2), np.uint8), spaces.Box(0, 255, (2, 2, 2), np.uint8)),
    ],
)
def test_stack_space_adds_a_leading_agent_axis(space: spaces.Space[Any], expected: spaces.Space[Any]) -> None:
    stacked = stack_space(space, 2)
    assert stacked == expected
    assert_in(np.stack([blank(space)] * 2), stacked)


def test_stack_space_refuses_a_dict() -> None:
    with pytest.raises(EnvSpecError, match="cannot stack Dict"):
        stack_space(spaces.Dict({"x": BOX}), 2)


def test_blank_is_zero_moved_into_the_bounds() -> None:
    assert blank(spaces.Box(-1, 1, (2,), np.float32)).tolist() == [0.0, 0.0]
    assert blank(spaces.Box(np.array([1, -3]), np.array([2, -2]), dtype=np.int64)).tolist() == [1, -2]
    assert blank(spaces.Dict({"d": spaces.Discrete(3, start=2)})) == {"d": 2}


def test_same_spaces_stack_into_di_engine_dict() -> None:
    packed = layout()
    obs_space = packed.observation_space()
    assert isinstance(obs_space, spaces.Dict)
    assert obs_space["agent_state"] == spaces.Box(-1.0, 1.0, (3, 4), np.float32)
    assert obs_space["global_state"].shape == (12,)
    assert obs_space["action_mask"] == spaces.Box(0.0, 1.0, (3, 5), np.float32)
    assert obs_space["alive"].shape == (3,)
    assert packed.action_space() == spaces.MultiDiscrete([5, 5, 5])
    assert packed.reward_space().shape == (3,)
    rows = {"a": np.full(4, 0.5, np.float32), "c": np.full(4, -0.5, np.float32)}
    obs = packed.observation(rows, alive=np.array([True, False, True]))
    assert_in(obs, obs_space)
    assert obs["agent_state"][1].tolist() == [0.0] * 4  # b is not in the episode: its blank value
    assert obs["action_mask"].sum(axis=1).tolist() == [5.0, 0.0, 5.0]
    assert obs["alive"].tolist() == [1.0, 0.0, 1.0]
    assert obs["global_state"].tolist() == [0.5] * 4 + [0.0] * 4 + [-0.5] * 4


def test_different_spaces_give_dicts_by_agent() -> None:
    packed = layout(obs=(BOX, BOX, spaces.Box(0, 1, (2,), np.float32)), act=(FIVE, FIVE, spaces.Discrete(3)))
    obs_space = packed.observation_space()
    assert isinstance(obs_space["agent_state"], spaces.Dict) and list(obs_space["agent_state"].spaces) == list(AGENTS)
    assert isinstance(obs_space["action_mask"], spaces.Dict) and obs_space["action_mask"]["c"].shape == (3,)
    assert packed.action_space() == spaces.Dict({"a": FIVE, "b": FIVE, "c": spaces.Discrete(3)})
    obs = packed.observation({"a": np.zeros(4, np.float32)}, alive=np.array([True, False, False]))
    assert_in(obs, obs_space)
    assert packed.agent_actions({"a": 1, "b": 0, "c": 2}, np.array([True, False, True])) == {"a": 1, "c": 2}


def test_agent_obs_only_and_shared_reward() -> None:
    packed = layout(agent_obs_only=True, shared_reward=True)
    assert packed.observation_space() == spaces.Box(-1.0, 1.0, (3, 4), np.float32)
    reward = packed.reward({"a": 1.0, "b": 2.5})
    assert reward.dtype == np.float32 and reward.tolist() == [3.5]
    assert layout().reward({"a": 1.0, "c": 2.0}).tolist() == [1.0, 0.0, 2.0]


def test_state_space_is_the_global_state() -> None:
    state = spaces.Box(-5.0, 5.0, (7,), np.float32)
    packed = AgentLayout(AGENTS, (BOX,) * 3, (FIVE,) * 3, state)
    assert packed.observation_space()["global_state"] == state
    obs = packed.observation({}, np.zeros(3, bool), np.arange(7, dtype=np.float32))
    assert obs["global_state"].tolist() == list(range(7))


def test_agent_specific_global_state_gives_each_agent_a_row() -> None:
    packed = layout(agent_specific_global_state=True)
    space = packed.observation_space()["global_state"]
    assert space.shape == (3, 4 + 12)
    rows = {agent: np.full(4, i / 10, np.float32) for i, agent in enumerate(AGENTS)}
    obs = packed.observation(rows, np.ones(3, bool))
    assert_in(obs, packed.observation_space())
    assert obs["global_state"][2, :4].tolist() == pytest.approx([0.2] * 4)
    assert obs["global_state"][0, 4:].tolist() == obs["global_state"][1, 4:].tolist()


def test_joint_action_decodes_the_first_agent_as_the_most_significant_digit() -> None:
    packed = layout(act=(FIVE, spaces.Discrete(2, start=10), FIVE), joint_action=True)
    assert packed.action_space() == spaces.Discrete(50)
    assert packed.agent_actions(3 * 10 + 1 * 5 + 4, np.ones(3, bool)) == {"a": 3, "b": 11, "c": 4}
    assert packed.agent_actions(49, np.array([False, True, False])) == {"b": 11}


def test_stacked_actions_are_checked_per_agent() -> None:
    packed = layout()
    assert packed.agent_actions(np.array([4, 0, 2]), np.ones(3, bool)) == {"a": 4, "b": 0, "c": 2}
    with pytest.raises(ValueError, match="agent 'b': action 7 is out of range for Discrete"):
        packed.agent_actions(np.array([4, 7, 2]), np.ones(3, bool))
    assert packed.agent_actions(np.array([4, 7, 2]), np.array([True, False, True])) == {"a": 4, "c": 2}


def test_actions_by_name_stack_in_agent_order() -> None:
    packed = layout()
    assert packed.stack_actions({"c": 1, "a": 2, "b": 3}, np.ones(3, bool)).tolist() == [2, 3, 1]
    assert packed.stack_actions({"a": 2}, np.array([True, False, False])).tolist() == [2, 0, 0]
    with pytest.raises(ValueError, match=r"actions for unknown agents \['z'\]; the agents are \['a', 'b', 'c'\]"):
        packed.stack_actions({"z": 1}, np.ones(3, bool))
    with pytest.raises(ValueError, match="no action for agent 'b', which is still in the episode"):
        packed.stack_actions({"a": 1, "c": 1}, np.ones(3, bool))


@pytest.mark.parametrize(
    ("switches", "error", "match"),
    [
        ({"joint_action": True}, ConfigError, "joint_action needs a Discrete action space for every agent"),
        ({"agent_obs_only": True, "agent_specific_global_state": True}, ConfigError, "set agent_obs_only=False"),
    ],
)
def test_switches_that_cannot_apply_are_refused(switches: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        layout(act=spaces.Box(0, 1, (2,), np.float32), **switches)


def test_agent_specific_global_state_needs_vector_observations() -> None:
    with pytest.raises(ConfigError, match="needs every agent to observe the same 1-D Box"):
        layout(obs=spaces.Box(0, 1, (2, 2), np.float32), agent_specific_global_state=True)


def test_agents_must_be_named_once_with_a_space_each() -> None:
    with pytest.raises(EnvSpecError, match=r"distinct agent names, got \['a', 'a'\]"):
        AgentLayout(("a", "a"), (BOX, BOX), (FIVE, FIVE))
    with pytest.raises(EnvSpecError, match="3 agents need 3 observation and action spaces, got 2 and 3"):
        AgentLayout(AGENTS, (BOX, BOX), (FIVE,) * 3)
