"""DI-engine's names for ding's wrappers: the same classes, accepted wherever a chain is; its two helper functions."""

from __future__ import annotations

import inspect
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control import CartPoleEnv, PendulumEnv

from ding.envs import DingEnvWrapper
from ding.envs import env_wrappers as ew
from ding.envs.env_wrappers import (
    WRAPPER_REGISTRY,
    RunningMeanStd,
    apply_wrappers,
    create_env_wrapper,
    get_default_wrappers,
    preset_chain,
    resolve_wrappers,
    trace_spaces,
    update_shape,
    update_space,
)
from ding.envs.values.spaces import EnvSpaces, reward_space_of, space_to_shape
from ding.errors import ConfigError, ShapeRuleError, UnknownNameError
from tests.envs.env_wrappers.catalogue import make_catalogue_env

# DI-engine's documented wrapper classes -> ding's registered name.
DOCUMENTED = {
    "NoopResetEnv": "noop_reset",
    "MaxAndSkipEnv": "max_and_skip",
    "WarpFrame": "warp_frame",
    "ScaledFloatFrame": "scaled_float_frame",
    "ClipRewardEnv": "clip_reward",
    "FrameStack": "frame_stack",
    "ObsTransposeWrapper": "obs_transpose",
    "ObsNormEnv": "obs_norm",
    "RewardNormEnv": "reward_norm",
    "RamWrapper": "ram",
    "EpisodicLifeEnv": "episodic_life",
    "FireResetEnv": "fire_reset",
}

# Every wrapper class DI-engine 0.5.3 exports from ding.envs.env_wrappers that ding has -> ding's registered name.
EXPORTED = {
    "NoopResetWrapper": "noop_reset",
    "MaxAndSkipWrapper": "max_and_skip",
    "WarpFrameWrapper": "warp_frame",
    "ScaledFloatFrameWrapper": "scaled_float_frame",
    "ClipRewardWrapper": "clip_reward",
    "ActionRepeatWrapper": "action_repeat",
    "DelayRewardWrapper": "delay_reward",
    "EvalEpisodeReturnWrapper": "eval_episode_return",
    "FrameStackWrapper": "frame_stack",
    "ObsTransposeWrapper": "obs_transpose",
    "ObsNormWrapper": "obs_norm",
    "StaticObsNormWrapper": "static_obs_norm",
    "RewardNormWrapper": "reward_norm",
    "RamWrapper": "ram",
    "EpisodicLifeWrapper": "episodic_life",
    "FireResetWrapper": "fire_reset",
    "GymHybridDictActionWrapper": "gym_hybrid_dict_action",
    "ObsPlusPrevActRewWrapper": "obs_plus_prev_action_reward",
    "TimeLimitWrapper": "time_limit",
    "FlatObsWrapper": "flat_obs",
    "AllinObsWrapper": "reward_in_obs",
    "TransposeWrapper": "obs_transpose",
}


def _pong() -> gym.Env[Any, Any]:
    pytest.importorskip("ale_py")
    return make_catalogue_env("ale_pong")


@pytest.mark.parametrize("name", sorted({**DOCUMENTED, **EXPORTED}))
def test_each_name_is_the_registered_class_and_a_config_name(name: str) -> None:
    registered = {**DOCUMENTED, **EXPORTED}[name]
    assert getattr(ew, name) is WRAPPER_REGISTRY.get(registered)
    assert WRAPPER_REGISTRY.canonical(name) == registered
    assert name in ew.__all__


def test_every_registered_class_name_is_accepted() -> None:
    for registered, cls in WRAPPER_REGISTRY.items():
        assert WRAPPER_REGISTRY.canonical(cls.__name__) == registered


def test_documented_constructor_signatures_and_defaults() -> None:
    def defaults(cls: type) -> dict[str, Any]:
        params = list(inspect.signature(cls).parameters.values())
        return {p.name: p.default for p in params}

    assert defaults(ew.NoopResetEnv)["noop_max"] == 30
    assert defaults(ew.MaxAndSkipEnv)["skip"] == 4
    assert defaults(ew.WarpFrame)["size"] == 84
    assert defaults(ew.FrameStack)["n_frames"] == 4
    assert defaults(ew.RamWrapper)["render"] is False
    assert list(defaults(ew.RewardNormEnv))[1] == "reward_discount"  # positional, after env
    assert defaults(RunningMeanStd) == {"epsilon": 1e-4, "shape": ()}
    for name in DOCUMENTED:
        first = next(iter(inspect.signature(getattr(ew, name)).parameters))
        assert first == "env", name


def _assert_rule_holds(wrapped: gym.Env[Any, Any], inner: gym.Env[Any, Any]) -> None:
    """The class's three-argument new_shape predicts the wrapped spaces from the inner ones."""
    shapes = (space_to_shape(inner.observation_space), space_to_shape(inner.action_space), (1,))
    predicted = type(wrapped).new_shape(*shapes)  # type: ignore[attr-defined]
    assert predicted == (space_to_shape(wrapped.observation_space), space_to_shape(wrapped.action_space), (1,))


def test_documented_atari_classes_on_real_pong() -> None:
    env = _pong()
    layers: list[gym.Env[Any, Any]] = [env]
    for make in (
        ew.NoopResetEnv,
        ew.MaxAndSkipEnv,
        ew.EpisodicLifeEnv,
        ew.FireResetEnv,
        ew.WarpFrame,
        ew.ScaledFloatFrame,
        ew.ClipRewardEnv,
        lambda e: ew.FrameStack(e, 4),
    ):
        layers.append(make(layers[-1]))
        _assert_rule_holds(layers[-1], layers[-2])
    wrapped = layers[-1]
    assert wrapped.observation_space == spaces.Box(0.0, 1.0, (4, 84, 84), np.float32)
    assert layers[1].noop_max == 30 and layers[2].skip == 4 and layers[5].size == 84 and wrapped.n_frames == 4
    obs, _ = wrapped.reset(seed=0)
    assert obs.shape == (4, 84, 84) and obs.dtype == np.float32
    wrapped.action_space.seed(0)
    for _ in range(10):
        obs, reward, *_ = wrapped.step(wrapped.action_space.sample())
        assert obs.shape == (4, 84, 84) and reward in (-1.0, 0.0, 1.0)
    wrapped.close()


def test_documented_obs_transpose_and_ram_on_real_pong() -> None:
    env = _pong()
    transposed = ew.ObsTransposeWrapper(env)
    _assert_rule_holds(transposed, env)
    obs, _ = transposed.reset(seed=0)
    assert obs.shape == (3, 210, 160)
    ram = ew.RamWrapper(_pong(), render=True)  # accepted and, as in DI-engine, without effect
    _assert_rule_holds(ram, env)
    obs, _ = ram.reset(seed=0)
    assert obs.shape == (128, 1, 1) and obs.dtype == np.float32
    np.testing.assert_array_equal(obs.reshape(-1), ram.unwrapped.ale.getRAM())  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"ram: render must be a bool; got 'yes'"):
        ew.RamWrapper(_pong(), render="yes")  # type: ignore[arg-type]
    with pytest.raises(ShapeRuleError, match=r"step 0 ram\(render=1\): ConfigError: ram: render must be a bool; got 1"):
        update_shape((128,), 6, (1,), [("RamWrapper", {"render": 1})])
    assert update_shape((128,), 6, (1,), [("RamWrapper", {"render": True})]) == ((128, 1, 1), 6, (1,))


def test_documented_normalization_classes_on_cartpole_and_pendulum() -> None:
    obs_norm = ew.ObsNormEnv(CartPoleEnv())
    _assert_rule_holds(obs_norm, CartPoleEnv())
    reward_norm = ew.RewardNormEnv(PendulumEnv(), 0.9)
    assert reward_norm.reward_discount == 0.9
    _assert_rule_holds(reward_norm, PendulumEnv())
    obs_norm.reset(seed=0)
    reward_norm.reset(seed=0)
    resets = 1
    for t in range(40):
        obs, _, terminated, truncated, _ = obs_norm.step(t % 2)
        if terminated or truncated:
            obs_norm.reset()
            resets += 1
        _, reward, *_ = reward_norm.step(np.array([0.5], np.float32))
        assert obs.dtype == np.float32 and np.all(np.abs(obs) <= 5.0) and np.isfinite(reward)
    assert isinstance(obs_norm.obs_rms[""], RunningMeanStd) and obs_norm.obs_rms[""].count == 40 + resets
    assert isinstance(reward_norm.return_rms, RunningMeanStd) and reward_norm.return_rms.count == 40
    assert RunningMeanStd.new_shape((4,), 2, (1,)) == ((4,), 2, (1,))


def test_running_mean_std_is_di_engines_class_and_matches_numpy() -> None:
    rms = RunningMeanStd()
    assert rms.mean == 0.0 and rms.std == pytest.approx(1.0 + 1e-4)
    rng = np.random.default_rng(1)
    data = rng.normal(-2.0, 3.0, size=(50, 3))
    rms = RunningMeanStd(1e-4, (3,))
    for batch in np.split(data, [1, 5, 25]):
        rms.update(batch)
    np.testing.assert_allclose(rms.mean, data.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(rms.std, data.std(axis=0) + 1e-4, rtol=1e-12)
    rms.reset()
    assert np.all(rms.mean == 0.0) and np.allclose(rms.std, 1.0 + 1e-4) and rms.count == 0


def test_class_names_and_mixed_chains_in_update_shape_and_update_space() -> None:
    assert update_shape((210, 160, 3), 6, (1,), ["WarpFrame", "FrameStack"]) == ((4, 84, 84), 6, (1,))
    assert update_shape((210, 160, 3), 6, (1,), ["WarpFrameWrapper", "frame_stack"]) == ((4, 84, 84), 6, (1,))
    assert update_shape((210, 160, 3), 6, (1,), [("warp_frame", {"size": 42}), ("FrameStack", {"n_frames": 2})]) == (
        (2, 42, 42),
        6,
        (1,),
    )
    by_class = update_space(spaces.Box(0, 255, (210, 160, 3), np.uint8), spaces.Discrete(6), None, ["WarpFrame"])
    by_name = update_space(spaces.Box(0, 255, (210, 160, 3), np.uint8), spaces.Discrete(6), None, ["warp_frame"])
    assert by_class == by_name
    wrapped = apply_wrappers(CartPoleEnv(), [("FrameStack", {"n_frames": 2}), "ClipRewardEnv", "eval_episode_return"])
    assert isinstance(wrapped, ew.EvalEpisodeReturnWrapper) and isinstance(wrapped.env, ew.ClipRewardWrapper)
    assert wrapped.observation_space.shape == (2, 4)


def test_steps_and_traces_show_the_registered_name() -> None:
    steps = resolve_wrappers([{"type": "ScaledFloatFrame"}, ("FrameStackWrapper", {"n_frames": 2})])
    assert [str(s) for s in steps] == ["scaled_float_frame(fields=None)", "frame_stack(n_frames=2, fields=None)"]
    trace = trace_spaces(EnvSpaces(spaces.Box(0, 255, (5,), np.uint8), spaces.Discrete(2)), ["ClipRewardEnv"])
    assert trace[1][0].startswith("clip_reward(")


def test_class_names_in_a_ding_env_wrapper_config() -> None:
    chain = [{"type": "FrameStack", "kwargs": {"n_frames": 3}}, "ObsNormEnv", ("clip_reward", {})]
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1", "env_wrapper": chain})
    assert env.observation_space.shape == (3, 4) and env.observation_space.dtype == np.float32
    assert env.reward_space.high[0] == 1.0
    env.seed(0)
    obs = env.reset()
    assert obs.shape == (3, 4)
    timestep = env.step(env.random_action())
    assert timestep.obs.shape == (3, 4) and -1.0 <= float(timestep.reward[0]) <= 1.0
    env.close()


def test_unknown_names_list_registered_names_mention_class_names_and_match_either() -> None:
    with pytest.raises(
        UnknownNameError,
        match=r"unknown wrapper 'WarpFrme'; known: .*warp_frame\. Class names work too .*Did you mean 'WarpFrame'\?",
    ):
        update_shape((4,), 2, (1,), ["WarpFrme"])
    with pytest.raises(UnknownNameError, match=r"Did you mean 'frame_stack'\?"):
        resolve_wrappers(["frame_stak"])
    with pytest.raises(UnknownNameError, match=r"unknown wrapper 'GymToGymnasiumWrapper'"):
        create_env_wrapper(CartPoleEnv(), {"type": "GymToGymnasiumWrapper"})


def test_time_limit_takes_di_engines_max_limit() -> None:
    direct = ew.TimeLimitWrapper(CartPoleEnv(), max_limit=3)
    positional = ew.TimeLimitWrapper(CartPoleEnv(), 3)
    assert direct.max_episode_steps == positional.max_episode_steps == 3
    (step,) = resolve_wrappers([("TimeLimitWrapper", {"max_limit": 3})])
    assert str(step) == "time_limit(max_episode_steps=3)"
    direct.reset(seed=0)
    infos = [direct.step(0)[4] for _ in range(3)]
    assert [(i["time_limit"], i["time_count"]) for i in infos] == [(False, 1), (False, 2), (True, 3)]
    with pytest.raises(ConfigError, match=r"time_limit got both max_episode_steps=4 and its alias max_limit=3"):
        ew.TimeLimitWrapper(CartPoleEnv(), 4, max_limit=3)
    with pytest.raises(ConfigError, match=r"both max_episode_steps=4 and its alias max_limit=3"):
        resolve_wrappers([("time_limit", {"max_episode_steps": 4, "max_limit": 3})])


def test_create_env_wrapper_builds_one_wrapper() -> None:
    env = create_env_wrapper(PendulumEnv(), {"type": "TimeLimitWrapper", "kwargs": {"max_limit": 2}})
    assert isinstance(env, ew.TimeLimitWrapper) and env.max_episode_steps == 2
    env = create_env_wrapper(
        CartPoleEnv(), {"type": "frame_stack", "kwargs": {"n_frames": 2}, "import_names": ["ding.envs.env_wrappers"]}
    )
    assert env.observation_space.shape == (2, 4)
    assert isinstance(
        create_env_wrapper(CartPoleEnv(), {"type": "EvalEpisodeReturnWrapper"}), ew.EvalEpisodeReturnWrapper
    )
    with pytest.raises(ConfigError, match=r"wrapper 'frame_stack' got unknown argument 'n_frame'"):
        create_env_wrapper(CartPoleEnv(), {"type": "FrameStack", "kwargs": {"n_frame": 2}})
    with pytest.raises(ModuleNotFoundError, match="no_such_plugin"):
        create_env_wrapper(CartPoleEnv(), {"type": "frame_stack", "import_names": ["no_such_plugin"]})


@pytest.mark.parametrize("preset", ["default", "atari_default", "mujoco_default", "gym_hybrid_default"])
def test_get_default_wrappers_is_the_preset(preset: str) -> None:
    for caller, train in (("collector", True), ("evaluator", False)):
        configs = get_default_wrappers(preset, env_id="PongNoFrameskip-v4", caller=caller)
        assert [c.type for c in configs] == [s.name for s in resolve_wrappers(preset_chain(preset, train=train))]
        assert configs == [{"type": s.name, "kwargs": dict(s.kwargs)} for s in resolve_wrappers(preset, train=train)]
    assert len(get_default_wrappers("atari_default", caller="evaluator")) < len(get_default_wrappers("atari_default"))


def test_get_default_wrappers_errors() -> None:
    with pytest.raises(UnknownNameError, match=r"unknown wrapper preset 'atari'; known: .*gym_hybrid_default"):
        get_default_wrappers("atari")
    with pytest.raises(ConfigError, match=r"caller must be one of collector, evaluator; got 'learner'"):
        get_default_wrappers("default", caller="learner")
    with pytest.raises(TypeError, match=r"env_id must be a str or None; got 3"):
        get_default_wrappers("default", env_id=3)  # type: ignore[arg-type]


def test_default_wrapper_configs_apply_to_a_real_env() -> None:
    env = CartPoleEnv()
    wrapped = apply_wrappers(env, get_default_wrappers("default"))
    assert reward_space_of(wrapped) == reward_space_of(env)
    wrapped.reset(seed=0)
    done, info = False, {}
    while not done:
        _, _, terminated, truncated, info = wrapped.step(1)
        done = terminated or truncated
    assert float(info["eval_episode_return"][0]) > 0


def test_class_name_aliases_keep_their_first_meaning_and_need_a_registered_class() -> None:
    class FrameStackWrapper(ew.DingWrapper):  # a plug-in that happens to share a class name with ding's
        @staticmethod
        def space_rule(obs_space: Any, act_space: Any, rew_space: Any) -> Any:
            return obs_space, act_space, rew_space

    ew.register_wrapper("test_plugin_stack")(FrameStackWrapper)
    try:
        assert WRAPPER_REGISTRY.canonical("FrameStackWrapper") == "frame_stack"
        assert WRAPPER_REGISTRY.get("test_plugin_stack") is FrameStackWrapper
    finally:
        WRAPPER_REGISTRY.unregister("test_plugin_stack")
    assert WRAPPER_REGISTRY.canonical("FrameStackWrapper") == "frame_stack"

    class Unregistered(ew.DingWrapper):
        pass

    with pytest.raises(TypeError, match=r"Unregistered is not a registered wrapper, so 'Plain' cannot stand for it"):
        ew.wrapper_alias("Plain", Unregistered)
