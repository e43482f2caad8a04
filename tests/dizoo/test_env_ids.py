"""``env_id`` is checked against each suite's ids: at construction, in ``spaces_from_config``, in ``compile_config``
and by ``ding -m spec``, so a bogus id fails before anything runs and is never recorded in a compiled config."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest

pytest.importorskip("Box2D")
pytest.importorskip("ale_py")
pytest.importorskip("mujoco")

from ding.config import compile_config, save_config
from ding.entry.cli import main
from ding.envs import BaseEnv
from ding.errors import ConfigError
from dizoo.atari.envs import AtariEnv
from dizoo.box2d.bipedalwalker.envs import BipedalWalkerEnv
from dizoo.box2d.lunarlander.envs import LunarLanderEnv
from dizoo.classic_control.acrobot.envs import AcrobotEnv
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from dizoo.classic_control.mountain_car.envs import MountainCarEnv
from dizoo.classic_control.pendulum.envs import PendulumEnv
from dizoo.dmc.envs import DMCEnv
from dizoo.env_ids import check_env_id
from dizoo.mujoco.envs import MujocoEnv

# env type, class, import name, a bogus id and what the error lists, an id gymnasium renamed and the current one
SUITES: list[tuple[str, type[BaseEnv], str, str, str, str | None, str | None]] = [
    ("cartpole", CartPoleEnv, "dizoo.classic_control.cartpole.envs", "Nope-v0", "CartPole-v0, CartPole-v1", None, None),
    (
        "pendulum",
        PendulumEnv,
        "dizoo.classic_control.pendulum.envs",
        "Nope-v0",
        "Pendulum-v1",
        "Pendulum-v0",
        "Pendulum-v1",
    ),
    ("acrobot", AcrobotEnv, "dizoo.classic_control.acrobot.envs", "Nope-v0", "Acrobot-v1", None, None),
    (
        "mountain_car",
        MountainCarEnv,
        "dizoo.classic_control.mountain_car.envs",
        "Nope-v0",
        "MountainCar-v0, MountainCarContinuous-v0",
        None,
        None,
    ),
    (
        "lunarlander",
        LunarLanderEnv,
        "dizoo.box2d.lunarlander.envs",
        "Nope-v0",
        "LunarLander-v3, LunarLanderContinuous-v3",
        "LunarLander-v2",
        "LunarLander-v3",
    ),
    (
        "bipedalwalker",
        BipedalWalkerEnv,
        "dizoo.box2d.bipedalwalker.envs",
        "Nope-v0",
        "BipedalWalker-v3, BipedalWalkerHardcore-v3",
        "BipedalWalker-v2",
        "BipedalWalker-v3",
    ),
    (
        "mujoco",
        MujocoEnv,
        "dizoo.mujoco.envs",
        "Nope-v0",
        "Ant-v5, HalfCheetah-v5, Hopper-v5, Walker2d-v5",
        "Hopper-v3",
        "Hopper-v5",
    ),
    ("atari", AtariEnv, "dizoo.atari.envs", "Nope-v0", "ALE/Pong-v5", None, None),
]
IDS = [suite[0] for suite in SUITES]
RENAMED = [suite for suite in SUITES if suite[5] is not None]
"""The suites with an id gymnasium renamed (the others' ids are all gymnasium's current ones)."""


def compile_env(env_type: str, import_name: str, env: dict[str, Any]) -> Any:
    create = {"env": {"type": env_type, "import_names": [import_name]}, "policy": {"type": "dqn"}}
    return compile_config({"env": env, "policy": {}}, create, require_policy=False)


@pytest.mark.parametrize(("env_type", "cls", "module", "bogus", "listed", "old", "new"), SUITES, ids=IDS)
def test_an_unsupported_id_is_rejected_everywhere_before_anything_runs(
    env_type: str, cls: type[BaseEnv], module: str, bogus: str, listed: str, old: str | None, new: str | None
) -> None:
    match = rf"{env_type}: .*'{bogus}'.*{listed}"
    with pytest.raises(ConfigError, match=match):
        cls({"env_id": bogus})
    with pytest.raises(ConfigError, match=match):
        cls.spaces_from_config({"env_id": bogus})
    with pytest.raises(ConfigError, match=match):
        compile_env(env_type, module, {"env_id": bogus})


@pytest.mark.parametrize(
    ("env_type", "cls", "module", "bogus", "listed", "old", "new"), RENAMED, ids=[suite[0] for suite in RENAMED]
)
def test_an_id_gymnasium_renamed_names_the_current_one(
    env_type: str, cls: type[BaseEnv], module: str, bogus: str, listed: str, old: str | None, new: str | None
) -> None:
    match = rf"env_id '{old}' is not a version of .* that ding supports; the current one is '{new}'"
    with pytest.raises(ConfigError, match=match):
        cls.spaces_from_config({"env_id": old})
    assert cls.spaces_from_config({"env_id": new}) is not None


@pytest.mark.parametrize(
    ("cls", "env_id"),
    [
        (CartPoleEnv, "CartPole-v0"),
        (CartPoleEnv, "CartPole-v1"),
        (PendulumEnv, "Pendulum-v1"),
        (AcrobotEnv, "Acrobot-v1"),
        (MountainCarEnv, "MountainCarContinuous-v0"),
        (LunarLanderEnv, "LunarLanderContinuous-v3"),
        (BipedalWalkerEnv, "BipedalWalkerHardcore-v3"),
        (MujocoEnv, "Walker2d-v5"),
        (AtariEnv, "BreakoutNoFrameskip-v4"),
    ],
)
def test_supported_ids_build_and_step(cls: type[BaseEnv], env_id: str) -> None:
    env = cls({"env_id": env_id, "max_episode_steps": 5})
    env.seed(0)
    env.reset()
    assert env.step(env.random_action()).reward.shape == (1,)
    env.close()


def test_did_you_mean_for_a_typo() -> None:
    with pytest.raises(ConfigError, match=r"cartpole: unknown env_id 'CartPol-v1'.*Did you mean 'CartPole-v1'\?"):
        CartPoleEnv({"env_id": "CartPol-v1"})
    with pytest.raises(ConfigError, match=r"atari: env_id 'ALE/Pongg-v5' is not a registered env id.*Did you mean"):
        AtariEnv.spaces_from_config({"env_id": "ALE/Pongg-v5"})
    with pytest.raises(ConfigError, match=r"atari: env_id 'CartPole-v1' is not an ALE game"):
        AtariEnv.spaces_from_config({"env_id": "CartPole-v1"})


def test_non_string_ids_are_rejected() -> None:
    with pytest.raises(ConfigError, match=r"pendulum: unknown env_id 3; known: Pendulum-v1"):
        check_env_id(3, ["Pendulum-v1"], "pendulum")


def test_dmc_env_id_is_checked_in_spaces_from_config_too() -> None:
    with pytest.raises(
        ConfigError, match=r"env_id 'cheetah-run'.*leave env_id unset \(it becomes 'dmc:cartpole-swingup'\)"
    ):
        DMCEnv.spaces_from_config({"env_id": "cheetah-run"})
    assert DMCEnv.spaces_from_config({"env_id": "dmc:cartpole-swingup"}).action.shape == (1,)


def test_spec_command_rejects_a_bogus_id_and_writes_nothing(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bogus_config.py"
    main_config = {"exp_name": "bogus", "env": {"env_id": "LunarLander-v2"}, "policy": {}}
    create = {
        "env": {"type": "lunarlander", "import_names": ["dizoo.box2d.lunarlander.envs"]},
        "policy": {"type": "dqn"},
    }
    save_config(main_config, create, str(path))
    with pytest.raises(SystemExit) as exit_info:
        main(["-m", "spec", "-c", str(path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "lunarlander: env_id 'LunarLander-v2' is not a version of LunarLander that ding supports" in err
    assert "set env_id='LunarLander-v3'" in err
    assert not list(tmp_path.glob("**/total_config.py"))
