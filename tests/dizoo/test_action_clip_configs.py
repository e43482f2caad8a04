"""Policies whose continuous actions are unbounded (PPO's and A2C's Gaussians) train on envs that clip them: every
dizoo config of such a policy declares a clipping action space (``act_scale`` clips, as DI-engine's does), and the
Pendulum PPO config trains (without ``act_scale`` its first out-of-bounds action is refused)."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

from ding.config import read_config
from ding.entry import serial_pipeline_onpolicy
from ding.entry.spec import spec_trace_from_config
from ding.envs.conversion import ClippedBox
from ding.errors import ActionError

ROOT = pathlib.Path(__file__).resolve().parents[2]
UNBOUNDED = ("ppo", "a2c")
"""Policies that sample continuous actions from an unbounded Gaussian."""
CONFIGS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "dizoo").glob("**/config/*_config.py"))
PENDULUM_PPO = ROOT / "dizoo/classic_control/pendulum/config/pendulum_ppo_config.py"


def unbounded_continuous(path: str) -> bool:
    main, create = read_config(str(ROOT / path))
    return create.policy.type in UNBOUNDED and main.policy.get("action_space") == "continuous"


def test_the_unbounded_configs_are_found() -> None:
    found = [path for path in CONFIGS if unbounded_continuous(path)]
    assert "dizoo/classic_control/pendulum/config/pendulum_ppo_config.py" in found
    assert "dizoo/mujoco/config/hopper_ppo_config.py" in found


@pytest.mark.parametrize("path", [path for path in CONFIGS if unbounded_continuous(path)])
def test_a_config_of_an_unbounded_policy_clips_its_actions(path: str) -> None:
    action = spec_trace_from_config(*read_config(str(ROOT / path)))[-1][1].action
    assert isinstance(action, ClippedBox), f"{path}: {action} refuses actions outside its bounds"


def pendulum_ppo(**env: Any) -> tuple[Any, Any]:
    main, create = read_config(str(PENDULUM_PPO))
    main.env.update(collector_env_num=2, evaluator_env_num=1, n_evaluator_episode=1, **env)
    main.policy.collect.n_sample = 200
    return main, create


def test_the_pendulum_ppo_config_trains(tmp_path: pathlib.Path) -> None:
    result = serial_pipeline_onpolicy(pendulum_ppo(), max_env_step=400, root=tmp_path, progress=False)
    assert result.env_step >= 400


def test_without_act_scale_the_first_action_outside_the_bounds_is_refused(tmp_path: pathlib.Path) -> None:
    with pytest.raises(
        ActionError, match=r"env \d: action .* outside the bounds of Box\(-2\.0, 2\.0, \(1,\), float32\)"
    ):
        serial_pipeline_onpolicy(pendulum_ppo(act_scale=False), max_env_step=4000, root=tmp_path, progress=False)
