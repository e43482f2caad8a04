"""update_shape / update_space: composition, chain forms, presets and error reporting."""

from __future__ import annotations

import inspect

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers import (
    WRAPPER_REGISTRY,
    DingWrapper,
    apply_wrappers,
    preset_chain,
    register_wrapper,
    resolve_wrappers,
    update_shape,
    update_space,
)
from ding.envs.values.spaces import reward_space_of
from ding.errors import ConfigError, ShapeRuleError, UnknownNameError


def test_chain_item_forms_are_equivalent() -> None:
    forms = [
        [("frame_stack", {"n_frames": 3})],
        [{"type": "frame_stack", "kwargs": {"n_frames": 3}}],
    ]
    results = [update_shape((5,), 2, (1,), chain) for chain in forms]
    assert results[0] == results[1] == ((3, 5), 2, (1,))
    assert update_shape((5,), 2, (1,), "frame_stack") == ((4, 5), 2, (1,))


def test_composition_is_in_order() -> None:
    chain = [("warp_frame", {"size": 32}), ("frame_stack", {"n_frames": 2})]
    assert update_shape((64, 48, 3), 4, (1,), chain) == ((2, 32, 32), 4, (1,))


def test_unknown_wrapper_names_registered_ones_and_close_match() -> None:
    with pytest.raises(
        UnknownNameError, match=r"unknown wrapper 'frame_stak'; known: .*warp_frame.*Did you mean 'frame_stack'"
    ):
        update_shape((4,), 2, (1,), ["frame_stak"])


def test_unknown_and_missing_kwargs() -> None:
    with pytest.raises(
        ConfigError, match=r"wrapper 'frame_stack' got unknown argument 'n_frame'.*Did you mean 'n_frames'"
    ):
        update_shape((4,), 2, (1,), [("frame_stack", {"n_frame": 2})])
    with pytest.raises(ConfigError, match="takes the keys 'type' and 'kwargs'"):
        resolve_wrappers([{"type": "frame_stack", "args": {}}])
    with pytest.raises(TypeError, match="a wrapper chain item must be"):
        resolve_wrappers([42])  # type: ignore[list-item]


def test_rule_errors_name_the_step_and_are_not_swallowed() -> None:
    with pytest.raises(ShapeRuleError, match=r"wrapper chain step 1 warp_frame\(.*\): .*\(5,\)"):
        update_shape((5,), 2, (1,), ["eval_episode_return", "warp_frame"])


def test_wrapper_without_space_rule_cannot_register() -> None:
    with pytest.raises(TypeError, match="must declare its own static space_rule"):

        @register_wrapper("test_no_rule")
        class NoRule(DingWrapper):
            pass

    assert "test_no_rule" not in WRAPPER_REGISTRY

    class Parent(DingWrapper):
        @staticmethod
        def space_rule(obs_space, act_space, rew_space):  # type: ignore[no-untyped-def]
            return obs_space, act_space, rew_space

    with pytest.raises(TypeError, match="must declare its own static space_rule"):
        register_wrapper("test_inherited_rule")(type("Child", (Parent,), {}))
    with pytest.raises(TypeError, match=r"space_rule must take \(obs_space, act_space, rew_space, \*, <keyword"):

        class Positional(DingWrapper):
            @staticmethod
            def space_rule(obs_space, act_space, rew_space, n=1):  # type: ignore[no-untyped-def]
                return obs_space, act_space, rew_space


def test_each_wrapper_signature_is_its_rule_keyword_parameters() -> None:
    for name, cls in WRAPPER_REGISTRY.items():
        rule = inspect.signature(cls.space_rule).parameters
        declared = [(p.name, p.default) for p in list(rule.values())[3:]]
        params = list(inspect.signature(cls).parameters.values())
        assert params[0].name == "env", name
        positional = [(p.name, p.default) for p in params[1:] if p.kind == p.POSITIONAL_OR_KEYWORD]
        assert positional == declared, name
        aliases = [p.name for p in params[1:] if p.kind == p.KEYWORD_ONLY]
        assert aliases == list(cls.argument_aliases), name
        assert list(cls.parameters) == [n for n, _ in declared], name


def test_presets_differ_between_train_and_eval() -> None:
    train = [s.name for s in resolve_wrappers("atari_default", train=True)]
    evaluate = [s.name for s in resolve_wrappers("atari_default", train=False)]
    assert "clip_reward" in train and "episodic_life" in train
    assert "clip_reward" not in evaluate and "episodic_life" not in evaluate
    with pytest.raises(UnknownNameError, match=r"unknown wrapper preset 'atari'.*Did you mean 'atari_default'"):
        preset_chain("atari")


def test_full_space_propagation_keeps_dtype_and_bounds() -> None:
    out = update_space(spaces.Box(0, 255, (210, 160, 3), np.uint8), spaces.Discrete(6), None, "atari_default")
    assert out.observation == spaces.Box(0, 255, (4, 84, 84), np.uint8)  # frames stay uint8 up to the model
    assert out.reward.shape == (1,) and out.reward.low.min() == -1.0
    assert update_space(out.observation, out.action, out.reward, None) == out


def test_atari_default_on_real_pong() -> None:
    ale_py = pytest.importorskip("ale_py")
    gym.register_envs(ale_py)
    env = gym.make("ALE/Pong-v5", frameskip=1, repeat_action_probability=0.0)
    shapes = update_shape((210, 160, 3), 6, (1,), "atari_default")
    assert shapes == ((4, 84, 84), 6, (1,))
    wrapped = apply_wrappers(env, "atari_default")
    predicted = update_space(env.observation_space, env.action_space, None, "atari_default")
    assert wrapped.observation_space == predicted.observation
    assert reward_space_of(wrapped) == predicted.reward
    obs, _ = wrapped.reset(seed=0)
    assert obs.shape == (4, 84, 84) and obs.dtype == np.uint8
    for _ in range(20):
        obs, reward, *_ = wrapped.step(wrapped.action_space.sample())
        assert obs.shape == (4, 84, 84) and obs.dtype == np.uint8 and -1.0 <= reward <= 1.0
    wrapped.close()
