"""A config's wrapper chain (``env.env_wrapper``) on a user's own env, as on ``DingEnvWrapper``: ``ChainedEnv``."""

from __future__ import annotations

import functools
from typing import Any

import cloudpickle
import numpy as np
import pytest
from gymnasium import spaces

from ding.config import compile_config
from ding.envs import ChainedEnv, DingEnvWrapper, ParallelEnvWrapper
from ding.envs.env_manager.env_fn import declared_spaces
from ding.envs.from_config import env_class
from ding.envs.probe import PROBED_LABEL, spec_trace_of
from ding.errors import ConfigError, UnknownNameError
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.envs import chain_envs
from tests.envs.chain_envs import CountingEnv, PropertyCountingEnv

CHAIN = [("time_limit", {"max_episode_steps": 7}), ("frame_stack", {"n_frames": 2})]
ENV_TYPES = {"declared": "chain_counting", "probed": "chain_property_counting"}
STACKED = spaces.Box(0.0, 1000.0, (2, 3), np.float32)


def compiled(env_type: str, chain: Any = CHAIN, **env: Any) -> Any:
    main = {"env": {"env_wrapper": chain, "collector_env_num": 2, "evaluator_env_num": 1, **env}}
    create = {"env": {"type": env_type, "import_names": [chain_envs.__name__]}, "policy": {"type": "dqn"}}
    return compile_config(main, create)


@pytest.mark.parametrize("kind", ENV_TYPES)
def test_the_chain_sizes_the_model_and_shapes_what_the_env_returns(kind: str) -> None:
    cfg = compiled(ENV_TYPES[kind])
    assert cfg.policy.model.obs_shape == (2, 3) and cfg.policy.model.action_shape == 3
    cls = env_class(cfg.env)
    assert (
        issubclass(cls, ChainedEnv)
        and cls.inner_class is {"declared": CountingEnv, "probed": PropertyCountingEnv}[kind]
    )
    trace = spec_trace_of(cls, cfg.env)
    first = "env" if kind == "declared" else f"env ({PROBED_LABEL})"
    assert [name for name, _ in trace] == [
        first,
        "time_limit(max_episode_steps=7)",
        "frame_stack(n_frames=2, fields=None)",
        "eval_episode_return()",
    ]
    env = cls(cfg=cls.create_collector_env_cfg(cfg.env)[0])
    assert (env.observation_space, env.action_space, env.reward_space) == tuple(trace[-1][1])
    assert env.observation_space == STACKED
    env.seed(5)
    obs = env.reset()
    assert obs.shape == (2, 3) and obs.dtype == np.float32 and env.observation_space.contains(obs)
    steps = [env.step(np.array([1])) for _ in range(7)]
    assert [ts.done for ts in steps] == [False] * 6 + [True]  # the time limit, not the env's 200 steps
    last = steps[-1]
    assert last.truncated and not last.terminated and last.info["TimeLimit.truncated"]
    assert last.reward.shape == (1,) and last.reward.dtype == np.float32
    np.testing.assert_array_equal(last.info["eval_episode_return"], [7.0])
    assert last.obs[:, 0].tolist() == [6.0, 7.0]  # the last two frames of the stack
    # the env receives actions in DI-engine's form, and its own seed was called with the env's seed
    assert (last.info["action_type"], last.info["action_dtype"], last.info["action_shape"]) == (
        "ndarray",
        "int64",
        (1,),
    )
    assert last.info["seed_call"] == (5, True)
    env.close()


def test_the_env_is_seeded_by_its_own_seed_and_dynamic_seed() -> None:
    cfg = compiled("chain_counting")
    cls = env_class(cfg.env)

    def first_obs(dynamic: bool) -> list[float]:
        env = cls(cfg=cfg.env)
        env.seed(3, dynamic_seed=dynamic)
        starts = [float(env.reset()[-1, 2]) for _ in range(2)]
        env.close()
        return starts

    replayed = first_obs(dynamic=False)
    assert replayed[0] == replayed[1]  # an evaluator's env replays its seed
    assert first_obs(dynamic=True) != replayed  # a collector's draws on
    assert first_obs(dynamic=True) == first_obs(dynamic=True)  # reproducibly


def test_managers_know_declared_spaces_from_the_constructor_alone() -> None:
    cfg = compiled("chain_counting")
    declared = declared_spaces(functools.partial(env_class(cfg.env), cfg=cfg.env))
    assert declared is not None and declared.observation == STACKED
    probed = compiled("chain_property_counting")
    assert declared_spaces(functools.partial(env_class(probed.env), cfg=probed.env)) is None


@pytest.mark.parametrize("kind", ENV_TYPES)
def test_the_env_constructor_pickles(kind: str) -> None:
    cfg = compiled(ENV_TYPES[kind])
    env_fn = functools.partial(env_class(cfg.env), cfg=cfg.env)
    env = cloudpickle.loads(cloudpickle.dumps(env_fn))()
    env.seed(0)
    assert env.reset().shape == (2, 3)
    env.close()


def test_a_preset_and_a_single_item_are_chains_too() -> None:
    assert compiled("chain_counting", chain="default").policy.model.obs_shape == 3
    item = {"type": "frame_stack", "kwargs": {"n_frames": 4}}
    cfg = compiled("chain_counting", chain=item)
    assert cfg.policy.model.obs_shape == (4, 3)
    env = env_class(cfg.env)(cfg=cfg.env)
    env.seed(0)
    assert env.reset().shape == (4, 3)
    env.close()


def test_the_compiled_config_compiles_again_to_itself() -> None:
    cfg = compiled("chain_counting")
    assert compile_config(cfg) == cfg


def test_without_a_chain_the_env_class_is_the_users() -> None:
    assert env_class(compiled("chain_counting", chain=None).env) is CountingEnv


def test_envs_that_apply_env_wrapper_themselves_keep_their_class() -> None:
    assert CartPoleEnv.applies_env_wrapper() and DingEnvWrapper.applies_env_wrapper()
    assert ParallelEnvWrapper.applies_env_wrapper() and not CountingEnv.applies_env_wrapper()
    main = {"env": {"env_wrapper": CHAIN}}
    create = {
        "env": {"type": "cartpole", "import_names": ["dizoo.classic_control.cartpole.envs.cartpole_env"]},
        "policy": {"type": "dqn"},
    }
    cfg = compile_config(main, create)
    assert env_class(cfg.env) is CartPoleEnv and cfg.policy.model.obs_shape == (2, 4)


@pytest.mark.parametrize(
    ("env_type", "match"),
    [
        ("chain_own_chain", r"OwnChainEnv defines its own wrapper_chain, which does not read env_wrapper"),
        ("chain_native_batch", r"NativeBatchEnv steps a batch of sub-envs natively \(batched=True\)"),
        ("chain_team_reward", r"TeamRewardEnv's reward space is Box\(0\.0, 1\.0, \(3,\), float32\): a wrapper chain"),
    ],
)
def test_envs_that_cannot_take_a_chain_are_refused_when_compiled(env_type: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        compiled(env_type)
    compiled(env_type, chain=None)  # without a chain they compile


def test_a_bad_chain_item_names_its_place() -> None:
    with pytest.raises(
        UnknownNameError, match=r"env\.env_wrapper\[1\]: unknown wrapper .frame_stak.*Did you mean .frame_stack."
    ):
        compiled("chain_property_counting", chain=[("time_limit", {"max_episode_steps": 5}), ("frame_stak", {})])


def test_render_and_replays_where_the_env_has_them(tmp_path: Any) -> None:
    cfg = compiled("chain_property_counting")
    env = env_class(cfg.env)(cfg=cfg.env)
    env.seed(0)
    env.reset()
    env.step(np.array([0]))
    assert env.render().shape == (4, 4, 3) and env.render()[0, 0, 0] == 1
    env.close()
    declared = compiled("chain_counting")
    env = env_class(declared.env)(cfg=declared.env)
    with pytest.raises(ConfigError, match=r"CountingEnv cannot record replays: it implements neither"):
        env.enable_save_replay(str(tmp_path))
    env.close()
