"""A training mode that does not train the config's policy, or an unknown policy type, is refused before any env
is built or anything is written, with what to run or write instead."""

from __future__ import annotations

import pathlib
import re

import pytest

from ding.config import read_config, save_config
from ding.entry import serial_pipeline, serial_pipeline_onpolicy
from ding.entry.utils import check_pipeline_mode
from ding.errors import ConfigError, UnknownNameError
from tests.ding_cli import run_ding

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "dizoo/classic_control"
ON_POLICY = r"policy '{}' learns on-policy, which -m serial \(serial_pipeline\) does not train: run it with ding -m "
ON_POLICY += r"serial_onpolicy \(serial_pipeline_onpolicy\)$"
OFF_POLICY = r"policy '{}' learns off-policy, from a replay buffer, which -m serial_onpolicy "
OFF_POLICY += r"\(serial_pipeline_onpolicy\) does not train: run it with ding -m serial \(serial_pipeline\)$"

CASES = [
    ("cartpole/config/cartpole_ppo_config.py", "ppo", serial_pipeline, ON_POLICY),
    ("cartpole/config/cartpole_a2c_config.py", "a2c", serial_pipeline, ON_POLICY),
    ("pendulum/config/pendulum_ppo_config.py", "ppo", serial_pipeline, ON_POLICY),
    ("cartpole/config/cartpole_dqn_config.py", "dqn", serial_pipeline_onpolicy, OFF_POLICY),
    ("cartpole/config/cartpole_c51_config.py", "c51", serial_pipeline_onpolicy, OFF_POLICY),
    ("pendulum/config/pendulum_sac_config.py", "sac", serial_pipeline_onpolicy, OFF_POLICY),
]


@pytest.mark.parametrize(("config", "policy", "pipeline", "match"), CASES)
def test_a_pipeline_refuses_a_policy_it_does_not_train_before_anything_is_built(
    config: str, policy: str, pipeline: object, match: str, tmp_path: pathlib.Path
) -> None:
    with pytest.raises(ConfigError, match=match.format(policy)):
        pipeline(str(CONFIGS / config), root=tmp_path, progress=False)  # type: ignore[operator]
    assert list(tmp_path.iterdir()) == []  # no experiment directory: refused before the run was set up


@pytest.mark.parametrize(
    ("mode", "config", "message"),
    [
        ("serial", "cartpole/config/cartpole_ppo_config.py", ON_POLICY.format("ppo")),
        ("serial_onpolicy", "cartpole/config/cartpole_dqn_config.py", OFF_POLICY.format("dqn")),
    ],
)
def test_the_cli_names_the_mode_that_trains_the_policy(
    mode: str, config: str, message: str, tmp_path: pathlib.Path
) -> None:
    done = run_ding("-m", mode, "-c", str(CONFIGS / config), "--env-step", "10", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("ding: error: ")
    assert re.search(message, done.stderr.strip())
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_policy_type_lists_the_known_ones_and_what_a_config_can_do(tmp_path: pathlib.Path) -> None:
    main, create = read_config(CONFIGS / "cartpole/config/cartpole_dqn_config.py")
    create.policy.type = "dqnn"
    save_config(main, create, tmp_path / "typo.py")
    done = run_ding("-m", "serial", "-c", str(tmp_path / "typo.py"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "ding: error: policy.type: unknown policy 'dqnn'; "
        "known: a2c, c51, ddpg, discrete_sac, dqn, ppo, qrdqn, sac, td3. "
        "Did you mean 'dqn'? Set "
        "create_config.policy.type to one of them, or list the module that registers your policy in "
        "create_config.policy.import_names."
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["typo.py"]


def test_a_policy_that_does_not_say_how_it_learns_is_not_checked() -> None:
    from ding.config.policy_registry import POLICY_REGISTRY

    class Quiet:
        @classmethod
        def default_config(cls) -> dict[str, object]:
            return {}

    create = {"env": {"type": "cartpole"}, "policy": {"type": "quiet_policy_for_test"}}
    POLICY_REGISTRY.register("quiet_policy_for_test")(Quiet)
    try:
        for mode in ("serial", "serial_onpolicy"):
            check_pipeline_mode({}, create, mode)
    finally:
        POLICY_REGISTRY.unregister("quiet_policy_for_test")
    with pytest.raises(UnknownNameError, match=r"^policy\.type: unknown policy 'quiet_policy_for_test'; known: "):
        check_pipeline_mode({}, create, "serial")
    with pytest.raises(ValueError, match=r"unknown pipeline mode 'eval'; modes: serial, serial_onpolicy"):
        check_pipeline_mode({}, create, "eval")
