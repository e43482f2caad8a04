"""For every dizoo config: observations and rewards keep the spec's dtypes end to end, and the model takes them.

Each config is compiled (its model's ``obs_dtype`` / ``obs_range`` come from the spec), its collector and evaluator
env chains run in worker processes of a ``subprocess`` manager with shared memory, and every observation and
reward leaf is checked against the spec ``ding -m spec`` prints: through ``step``, ``step_batch``,
``ready_obs_batch`` and ``ManagerVectorEnv``, into the samples the policy stores, through the replay buffer the
serial pipeline plans, and into the model (a hook on its input layer records each batch's dtype on the device).
CARLA configs need a server: their declared dtypes and compiled model keys are checked, not run.
"""

from __future__ import annotations

import copy
import pathlib
from collections.abc import Mapping
from typing import Any

import numpy as np
import pytest
import torch
from gymnasium import spaces

from ding.config import compile_config, read_config
from ding.config.agent_shapes import agent_shapes
from ding.config.shapes import model_input, same_input
from ding.entry.serial_entry import serial_pipeline
from ding.entry.serial_entry_onpolicy import OnPolicySerialCollector
from ding.entry.spec import spec_trace_from_config
from ding.entry.utils import create_env_managers, create_policy
from ding.envs.env_manager import BaseEnvManager, ManagerVectorEnv
from ding.envs.from_config import env_class
from ding.envs.spaces import EnvSpaces, space_dtype
from ding.worker import SampleSerialCollector
from ding.worker.buffer_plan import FRAME_STACK, build_replay_buffer, plan_replay_buffer
from ding.worker.transitions import transition_collect_mode
from tests.dizoo.test_configs import ALL_CONFIGS, CONFIGS, ROOT

HEAVY = (
    "dizoo/mujoco/",
    "dizoo/dmc/config/cheetah",
    "dizoo/dmc/config/walker",
    "dizoo/dmc/config/cartpole_swingup_pixels_ppo",
    "dizoo/atari/config/breakout",
    "dizoo/atari/config/qbert",
    "dizoo/atari/config/spaceinvaders",
)
"""Configs whose real run is left to ``-m slow`` (each suite has configs of the same kinds in the default suite)."""


def dtypes(value: Any) -> Any:
    """The dtype of every array leaf of an observation or reward, nested like it."""
    if isinstance(value, Mapping):
        return {key: dtypes(sub) for key, sub in value.items()}
    if isinstance(value, tuple):
        return tuple(dtypes(sub) for sub in value)
    return np.asarray(value).dtype


def assert_dtypes(value: Any, space: spaces.Space[Any], where: str) -> None:
    assert dtypes(value) == space_dtype(space), f"{where}: {dtypes(value)} where the spec says {space}"


@pytest.mark.parametrize("path", ALL_CONFIGS)
def test_the_compiled_model_input_is_the_specs(path: str) -> None:
    main_config, create_config = read_config(str(ROOT / path))
    spec = spec_trace_from_config(main_config, create_config)[-1][1]
    cfg = compile_config(main_config, create_config)
    if cfg.policy.get("multi_agent"):  # MAVAC: one agent's sizes from the spec; inputs are float32 throughout
        expected = agent_shapes(spec, cfg.env.type)
        assert {key: cfg.policy.model[key] for key in expected} == expected
    else:
        obs_dtype, obs_range = model_input(spec.observation)
        assert same_input(cfg.policy.model.obs_dtype, obs_dtype) and same_input(cfg.policy.model.obs_range, obs_range)
    leaves = set(_leaves(space_dtype(spec.observation)))
    assert leaves <= {np.dtype(np.float32), np.dtype(np.uint8)}, f"{path}: observation {spec.observation}"
    assert space_dtype(spec.reward) == np.float32
    if isinstance(spec.observation, spaces.Box):
        model = create_policy(cfg, seed=0).model
        assert model.obs_input.obs_dtype == spec.observation.dtype


def _leaves(tree: Any) -> Any:
    if isinstance(tree, Mapping):
        for sub in tree.values():
            yield from _leaves(sub)
    elif isinstance(tree, tuple):
        for sub in tree:
            yield from _leaves(sub)
    else:
        yield tree


def _small_run_config(path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The config with two envs per manager, a subprocess manager with shared memory and a small replay buffer."""
    main_config, create_config = read_config(str(ROOT / path))
    main, create = copy.deepcopy(dict(main_config)), copy.deepcopy(dict(create_config))
    env = dict(main["env"])
    manager = {key: value for key, value in dict(env.get("manager") or {}).items() if key != "type"}
    env.update(collector_env_num=2, evaluator_env_num=2, manager={**manager, "shared_memory": True})
    main["env"] = env
    create["env_manager"] = {"type": "subprocess"}
    policy = dict(main.get("policy") or {})
    other = dict(policy.get("other") or {})
    if "replay_buffer" in other:
        other["replay_buffer"] = {**dict(other["replay_buffer"]), "replay_buffer_size": 500}
        policy["other"] = other
    main["policy"] = {**policy, "cuda": False}
    return main, create


def _random_actions(manager: BaseEnvManager, rng: np.random.Generator) -> dict[int, Any]:
    action_space = manager.env_spaces.action
    action_space.seed(int(rng.integers(2**31)))
    return {env_id: action_space.sample() for env_id in manager.ready_obs_id}


def _check_manager(manager: BaseEnvManager, spec: EnvSpaces, rng: np.random.Generator, caller: str) -> None:
    assert manager.env_spaces == spec
    batch = manager.ready_obs_batch()
    assert_dtypes(batch.obs, spec.observation, f"{caller} ready_obs_batch (shared memory)")
    for env_id, obs in manager.ready_obs.items():
        assert_dtypes(obs, spec.observation, f"{caller} ready_obs[{env_id}]")
    for env_id, timestep in manager.step(_random_actions(manager, rng)).items():
        assert_dtypes(timestep.obs, spec.observation, f"{caller} step obs of env {env_id}")
        assert_dtypes(timestep.reward, spec.reward, f"{caller} step reward of env {env_id}")
    actions = _random_actions(manager, rng)
    rows: Any = [actions[i] for i in range(manager.env_num)]
    if not isinstance(spec.action, (spaces.Dict, spaces.Tuple)):
        rows = np.stack([np.asarray(row) for row in rows])
    result = manager.step_batch(rows)
    assert_dtypes(result.obs, spec.observation, f"{caller} step_batch obs")
    assert result.reward.dtype == space_dtype(spec.reward), f"{caller} step_batch reward {result.reward.dtype}"
    for env_id, final in result.final_obs.items():
        assert_dtypes(final, spec.observation, f"{caller} step_batch final_obs of env {env_id}")


def _tensor_dtypes(value: Any) -> Any:
    if isinstance(value, Mapping):  # a multi-agent model takes DI-engine's observation dict as it is
        return {key: _tensor_dtypes(sub) for key, sub in value.items()}
    return np.dtype(str(value.dtype).removeprefix("torch."))


def _record_model_input(policy: Any) -> list[Any]:
    """The dtypes of every observation batch the model is given (at its input layer, or its forward for MAVAC)."""
    seen: list[Any] = []
    module = getattr(policy.model, "obs_input", policy.model)
    module.register_forward_pre_hook(lambda module, args: seen.append(_tensor_dtypes(args[0])))
    return seen


def _run_config(path: str) -> None:
    main, create = _small_run_config(path)
    cfg = compile_config(main, create, seed=0)
    trace = spec_trace_from_config(main, create)
    train_spec = trace[-1][1]
    eval_spec = env_class(cfg.env).spaces_from_config({**cfg.env, "is_train": False})
    assert space_dtype(eval_spec.observation) == space_dtype(train_spec.observation)
    rng = np.random.default_rng(0)
    policy = create_policy(cfg, seed=0)
    seen = _record_model_input(policy)
    collector_env, evaluator_env = create_env_managers(cfg)
    assert collector_env is not None and evaluator_env is not None
    try:
        for manager in (collector_env, evaluator_env):
            manager.seed(0)
            manager.launch()
        _check_manager(evaluator_env, eval_spec, rng, "evaluator")
        outputs = policy.eval_mode.forward(evaluator_env.ready_obs)
        evaluator_env.step({env_id: out["action"] for env_id, out in outputs.items()})

        plan = None  # the collector plays from launch, as in the pipeline (a frame buffer sees whole episodes)
        collect_mode = policy.collect_mode
        if policy.nstep_rule is not None:
            plan = plan_replay_buffer(policy.cfg, policy.nstep_rule, trace)
            if plan.kind == FRAME_STACK:
                collect_mode = transition_collect_mode(collect_mode)
        collector_cls = SampleSerialCollector if policy.nstep_rule is not None else OnPolicySerialCollector
        collector = collector_cls(collector_env, collect_mode)
        samples = collector.collect(n_sample=12, policy_kwargs=collect_mode.collect_kwargs(0))
        for sample in samples:
            for key in ("obs", "next_obs"):
                if key in sample:
                    assert_dtypes(sample[key], train_spec.observation, f"stored sample's {key}")
        if plan is not None:
            buffer = build_replay_buffer(plan, train_spec, policy.nstep_rule, seed=0)
            buffer.push(samples)
            sampled = buffer.sample(4)
            assert sampled, f"the {plan.kind} buffer gave no sample from {len(samples)} transitions"
            samples = sampled
            for sample in samples:
                assert_dtypes(sample["obs"], train_spec.observation, f"{plan.kind} buffer's obs")
                assert_dtypes(sample["next_obs"], train_spec.observation, f"{plan.kind} buffer's next_obs")
        policy.learn_mode.forward(samples)
        _check_manager(collector_env, train_spec, rng, "collector")

        vector = ManagerVectorEnv(collector_env)
        actions = _random_actions(collector_env, rng)
        batched: Any = [actions[i] for i in range(collector_env.env_num)]
        if not isinstance(train_spec.action, (spaces.Dict, spaces.Tuple)):
            batched = np.stack([np.asarray(row) for row in batched])
        obs, rewards, *_ = vector.step(batched)
        assert_dtypes(obs, train_spec.observation, "ManagerVectorEnv obs")
        assert rewards.dtype == space_dtype(train_spec.reward), f"ManagerVectorEnv rewards {rewards.dtype}"
    finally:
        collector_env.close()
        evaluator_env.close()
    expected = space_dtype(train_spec.observation)
    assert seen and all(dtype == expected for dtype in seen), f"the model got {set(map(str, seen))}, spec {expected}"


RUN_CONFIGS = [
    pytest.param(path, marks=pytest.mark.slow) if path.startswith(HEAVY) else path
    for path in CONFIGS  # CARLA needs a server
]


@pytest.mark.parametrize("path", RUN_CONFIGS)
def test_dtypes_end_to_end_through_subprocess_managers_with_shared_memory(path: str) -> None:
    _run_config(path)


def test_uint8_configs_are_among_those_run() -> None:
    """The run above covers frames: Atari and dm_control pixel configs deliver uint8 stacks to their models."""
    for path in ("dizoo/atari/config/pong_dqn_config.py", "dizoo/dmc/config/cartpole_swingup_pixels_sac_config.py"):
        assert path in RUN_CONFIGS
        observation = spec_trace_from_config(*read_config(str(ROOT / path)))[-1][1].observation
        assert observation.dtype == np.uint8 and observation.shape[1:] == (84, 84)


@pytest.mark.parametrize("path", [p for p in ALL_CONFIGS if p not in CONFIGS])
def test_configs_that_need_a_server_declare_their_dtypes(path: str) -> None:
    main_config, create_config = read_config(str(ROOT / path))
    cfg = compile_config(main_config, create_config)
    for is_train in (True, False):
        spec = env_class(cfg.env).spaces_from_config({**cfg.env, "is_train": is_train})
        assert spec.observation.dtype == np.float32 and cfg.policy.model.obs_dtype == "float32"
        assert cfg.policy.model.obs_range is None and spec.reward.dtype == np.float32
    assert create_policy(cfg, seed=0).model.obs_input.obs_dtype == np.float32


def _short_run(
    path: str, tmp_path: pathlib.Path, env: Mapping[str, Any], policy: Mapping[str, Any], env_type: str | None = None
) -> tuple[list[Any], dict[str, Any]]:
    """Train ``path`` for 300 env steps with its model's input hooked: the dtypes the model got, its final weights.

    ``env_type`` swaps the config's env for a variant (one of :mod:`tests.dizoo.float_frames`'s float32 frames).
    Both runs store whole observations (``share_frames=False``), so they sample their buffers alike.
    """
    main_config, create_config = read_config(str(ROOT / path))
    main, create = copy.deepcopy(dict(main_config)), copy.deepcopy(dict(create_config))
    main["env"] = {**main["env"], **env}
    replay = {"replay_buffer_size": 500, "share_frames": False}
    main["policy"] = {**main["policy"], **policy, "other": {**main["policy"].get("other", {}), "replay_buffer": replay}}
    if env_type is not None:
        create["env"] = {"type": env_type, "import_names": ["tests.dizoo.float_frames"]}
    cfg = compile_config(main, create, seed=0)
    torch.manual_seed(0)  # the same initial weights in both runs
    model = create_policy(cfg, seed=0).model
    seen: list[Any] = []
    model.obs_input.register_forward_pre_hook(
        lambda module, args: seen.append(np.dtype(str(args[0].dtype).removeprefix("torch.")))
    )
    result = serial_pipeline((main, create), seed=0, max_env_step=300, model=model, root=tmp_path, progress=False)
    assert result.train_iter > 0 and result.last_eval_return is not None, result.summary()
    return seen, model.state_dict()


def _assert_trains_as_with_float_frames(
    path: str, tmp_path: pathlib.Path, env: Mapping[str, Any], policy: Mapping[str, Any], float_env: str
) -> None:
    frames, weights = _short_run(path, tmp_path / "uint8", env, policy)
    floats, float_weights = _short_run(path, tmp_path / "float32", env, policy, float_env)
    assert len(frames) > 10 and set(frames) == {np.dtype(np.uint8)}  # acting, evaluating and learning
    assert len(floats) == len(frames) and set(floats) == {np.dtype(np.float32)}
    assert weights.keys() == float_weights.keys()
    assert all(torch.equal(weights[key], float_weights[key]) for key in weights)  # the same training, bit for bit


def test_a_short_pong_run_on_uint8_frames_trains_as_on_float32_frames(tmp_path: pathlib.Path) -> None:
    _assert_trains_as_with_float_frames(
        "dizoo/atari/config/pong_dqn_config.py",
        tmp_path,
        {"collector_env_num": 2, "evaluator_env_num": 1, "n_evaluator_episode": 1, "max_episode_steps": 50},
        {"learn": {"update_per_collect": 2, "batch_size": 8}},
        "atari_float_frames",
    )


@pytest.mark.slow
def test_a_short_dm_control_pixels_run_on_uint8_frames_trains_as_on_float32_frames(tmp_path: pathlib.Path) -> None:
    _assert_trains_as_with_float_frames(
        "dizoo/dmc/config/cartpole_swingup_pixels_sac_config.py",
        tmp_path,
        {"evaluator_env_num": 1, "n_evaluator_episode": 1, "max_episode_steps": 20},
        {"random_collect_size": 100, "learn": {"batch_size": 8}},
        "dmc_float_frames",
    )
