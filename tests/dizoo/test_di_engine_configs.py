"""Configs written with DI-engine's env keys: ``ding -m spec`` shows their effect, ``compile_config`` fills the model
shapes from it, and the compiled config builds envs with those spaces."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

pytest.importorskip("Box2D")
pytest.importorskip("ale_py")
pytest.importorskip("mujoco")

from ding.config import compile_config, save_config
from ding.entry.cli import main
from ding.envs.from_config import env_class

# env type, import name, DI-engine-style env section, a row `ding -m spec` prints, the model's action_shape
CASES: list[tuple[str, str, dict[str, Any], str, Any]] = [
    (
        "pendulum",
        "dizoo.classic_control.pendulum.envs",
        {"act_scale": True, "continuous": False, "collector_env_num": 10, "stop_value": -250},
        "Discrete(11)",
        11,
    ),
    (
        "lunarlander",
        "dizoo.box2d.lunarlander.envs",
        {"env_id": "LunarLanderContinuous-v3", "act_scale": True},
        "| normalized_action()",
        2,
    ),
    (
        "bipedalwalker",
        "dizoo.box2d.bipedalwalker.envs",
        {"act_scale": True, "rew_clip": True},
        "clip_reward(low=-10.0",
        4,
    ),
    (
        "mujoco",
        "dizoo.mujoco.envs",
        {"env_id": "Ant-v5", "delay_reward_step": 4, "action_clip": True, "norm_obs": {"use_norm": False}},
        "delay_reward(delay_reward_step=4)",
        8,
    ),
    ("mujoco-disc", "dizoo.mujoco.envs", {"env_id": "Hopper-v5", "each_dim_disc_size": 2}, "Discrete(8)", 8),
    ("atari", "dizoo.atari.envs", {"env_id": "PongNoFrameskip-v4", "frame_stack": 2}, "(2, 84, 84) uint8", 6),
    (
        "atari_mr",
        "dizoo.atari.envs",
        {"env_id": "MontezumaRevengeDeterministic-v4", "frame_stack": 4},
        "(4, 84, 84) uint8",
        18,
    ),
    ("cartpole", "dizoo.classic_control.cartpole.envs", {"obs_plus_prev_action_reward": True}, "prev_action", 2),
]


BOX_ACTION_ENVS = ("lunarlander", "bipedalwalker", "mujoco")
"""The cases whose keys give the env a Box action space."""


@pytest.mark.parametrize(("env_type", "module", "env", "row", "action_shape"), CASES, ids=[c[0] for c in CASES])
def test_spec_and_compile_honour_di_engine_keys(
    tmp_path: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
    env_type: str,
    module: str,
    env: dict[str, Any],
    row: str,
    action_shape: Any,
) -> None:
    main_config = {"exp_name": f"{env_type}_di", "env": env, "policy": {"cuda": False}}
    policy = "ddpg" if env_type in BOX_ACTION_ENVS else "dqn"  # a policy for the env's kind of actions
    create = {"env": {"type": env_type, "import_names": [module]}, "policy": {"type": policy}}
    path = tmp_path / "config.py"
    save_config(main_config, create, str(path))
    assert main(["-m", "spec", "-c", str(path)]) == 0
    assert row in capsys.readouterr().out
    cfg = compile_config(main_config, create, require_policy=False)
    predicted = env_class(cfg.env).spaces_from_config(cfg.env)
    built = env_class(cfg.env)(cfg.env)
    assert (built.observation_space, built.action_space, built.reward_space) == tuple(predicted)
    assert cfg.policy.model.action_shape == action_shape  # filled from the spaces the keys give
    built.close()
