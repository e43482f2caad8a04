"""compile_config in DI-engine's call form: create_cfg/auto, components by class, save_cfg into the experiment dir."""

from __future__ import annotations

import copy
import importlib
import pathlib
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from easydict import EasyDict

from ding.config import compile_config, read_config, read_config_directly
from ding.config.experiment import experiment_name
from ding.entry.utils import compile_for_run
from ding.envs.env_manager import BaseEnvManager, SyncSubprocessEnvManager
from ding.errors import ConfigError, UnknownNameError
from ding.policy.dqn import DQNPolicy
from ding.policy.ppo import PPOPolicy
from ding.worker import BaseLearner, InteractionSerialEvaluator, NaiveReplayBuffer, SampleSerialCollector
from dizoo.classic_control.cartpole.config import cartpole_ppo_config, cartpole_ppo_create_config
from dizoo.classic_control.cartpole.envs.cartpole_env import CartPoleEnv

CARTPOLE_MODULE = "dizoo.classic_control.cartpole.envs.cartpole_env"


@pytest.fixture
def workdir(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[pathlib.Path]:
    """An empty current directory that is also importable, as DI-engine's formatted-config test needs."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith(("cartpole_", "mine_")):
            del sys.modules[name]


def ppo() -> tuple[EasyDict, EasyDict]:
    return copy.deepcopy(cartpole_ppo_config), copy.deepcopy(cartpole_ppo_create_config)


# ----- save_cfg: the experiment directory ---------------------------------------------------------
def test_di_engine_call_writes_the_config_and_a_formatted_module_that_compiles_back_equal(
    workdir: pathlib.Path,
) -> None:
    main, create = ppo()
    cfg = compile_config(main, seed=0, auto=True, create_cfg=create, save_cfg=True, save_path="ppo_config.py")
    assert cfg.exp_name == "cartpole_ppo_seed0"
    assert sorted(p.name for p in (workdir / "cartpole_ppo_seed0").iterdir()) == [
        "formatted_ppo_config.py",
        "ppo_config.py",
    ]
    module = importlib.import_module("cartpole_ppo_seed0.formatted_ppo_config")
    again = compile_config(module.main_config, seed=0, auto=True, create_cfg=module.create_config, save_cfg=False)
    assert again == cfg
    assert module.create_config == {
        "env": {"type": "cartpole", "import_names": [CARTPOLE_MODULE]},
        "env_manager": {"type": "base"},
        "policy": {"type": "ppo", "import_names": ["ding.policy.ppo"]},
    }
    written = workdir / "cartpole_ppo_seed0" / "ppo_config.py"
    assert read_config_directly(written)["exp_config"] == cfg
    assert compile_config(*read_config(written)) == cfg  # ding's reader and `ding -m eval -c` take it too


def test_the_directory_is_the_one_the_serial_pipeline_uses(workdir: pathlib.Path) -> None:
    main, create = ppo()
    cfg = compile_config(main, seed=3, auto=True, create_cfg=create)
    run_cfg, _ = compile_for_run(main, create, 3, None)
    assert cfg.exp_name == run_cfg.exp_name == experiment_name(main.exp_name, 3) == "cartpole_ppo_seed3"
    assert (workdir / "cartpole_ppo_seed3" / "total_config.py").is_file()
    assert (workdir / "cartpole_ppo_seed3" / "formatted_total_config.py").is_file()
    assert cfg == run_cfg


def test_save_cfg_defaults_to_true_only_in_di_engines_form(workdir: pathlib.Path) -> None:
    main, create = ppo()
    compile_config(main, create, seed=0)
    compile_config(main, create_config=create, seed=0)
    assert list(workdir.iterdir()) == []
    compile_config(main, seed=0, auto=True, create_cfg=create, save_cfg=False)
    assert list(workdir.iterdir()) == []
    compile_config(main, create, seed=0, save_cfg=True, save_path="mine.py")
    assert sorted(p.name for p in (workdir / "cartpole_ppo_seed0").iterdir()) == ["formatted_mine.py", "mine.py"]


def test_renew_dir_moves_to_a_new_directory_that_exp_name_names(workdir: pathlib.Path) -> None:
    main, create = ppo()
    first = compile_config(main, auto=True, create_cfg=create)
    second = compile_config(main, auto=True, create_cfg=create)
    assert first.exp_name == "cartpole_ppo_seed0"
    assert second.exp_name.startswith("cartpole_ppo_seed0_") and second.exp_name != first.exp_name
    assert read_config_directly(workdir / second.exp_name / "total_config.py")["exp_config"].exp_name == second.exp_name
    main.policy.learn.learning_rate = 0.5
    third = compile_config(main, auto=True, create_cfg=create, renew_dir=False)
    assert third.exp_name == first.exp_name
    assert read_config(workdir / first.exp_name / "total_config.py")[0].policy.learn.learning_rate == 0.5


# ----- components by class, and the keywords ding has no use for ----------------------------------
def test_components_given_by_class_are_recorded_by_their_registered_names(workdir: pathlib.Path) -> None:
    main, _ = ppo()
    workers = (BaseLearner, SampleSerialCollector, InteractionSerialEvaluator, NaiveReplayBuffer)
    cfg = compile_config(main, SyncSubprocessEnvManager, PPOPolicy, *workers, env=CartPoleEnv, save_cfg=False)
    assert (cfg.env.type, cfg.env.import_names, cfg.env.manager.type) == ("cartpole", [CARTPOLE_MODULE], "subprocess")
    assert (cfg.policy.type, cfg.policy.import_names) == ("ppo", ["ding.policy.ppo"])
    create = {"env": {"type": "cartpole", "import_names": [CARTPOLE_MODULE]}, "env_manager": {"type": "subprocess"}}
    assert cfg == compile_config(main, {**create, "policy": {"type": "ppo"}}, exp_name=cfg.exp_name)
    assert compile_config(main, env_manager=BaseEnvManager, create_cfg=ppo()[1], save_cfg=False).env.manager.type == (
        "base"
    )


def test_a_class_must_agree_with_the_name_create_cfg_gives() -> None:
    main, create = ppo()
    with pytest.raises(
        ConfigError, match=r"create_config\.policy\.type 'ppo' is PPOPolicy, but policy= gives DQNPolicy"
    ):
        compile_config(main, policy=DQNPolicy, create_cfg=create, save_cfg=False)
    create.policy.type = "no_such_policy"
    with pytest.raises(UnknownNameError, match=r"create_config\.policy\.type: unknown policy 'no_such_policy'"):
        compile_config(main, policy=PPOPolicy, create_cfg=create, save_cfg=False)


def test_a_class_must_be_registered() -> None:
    class UnregisteredEnv(CartPoleEnv):
        pass

    main, create = ppo()
    with pytest.raises(ConfigError, match=r"env=.*UnregisteredEnv is not registered in ENV_REGISTRY; register it with"):
        compile_config(main, env=UnregisteredEnv, create_cfg={"policy": create.policy}, save_cfg=False)
    with pytest.raises(
        TypeError, match=r"env= takes a BaseEnv subclass registered in ENV_REGISTRY, or None; got 'cartpole'"
    ):
        compile_config(main, env="cartpole", save_cfg=False)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("keyword", "value", "message"),
    [
        (
            "learner",
            dict,
            r"learner=<class 'dict'>: ding's serial pipeline always runs its own ding\.worker\.BaseLearner",
        ),
        ("collector", BaseLearner, r"own ding\.worker\.SampleSerialCollector \(type 'sample'\), set up under "),
        ("evaluator", "interaction", r"InteractionSerialEvaluator .*main_config\.policy\.eval\.evaluator"),
        ("buffer", list, r"buffer=<class 'list'>: .*NaiveReplayBuffer .*policy\.other\.replay_buffer"),
        ("reward_model", object, r"reward_model=.*: ding has no reward models: .*; pass None"),
        ("world_model", object, r"world_model=.*: ding has no world models"),
    ],
)
def test_keywords_ding_has_no_use_for_must_be_none_or_dings_own(keyword: str, value: Any, message: str) -> None:
    main, create = ppo()
    with pytest.raises(ConfigError, match=message):
        compile_config(main, create_cfg=create, save_cfg=False, **{keyword: value})


def test_create_cfg_sections_naming_dings_own_workers_are_accepted_and_others_refused() -> None:
    main, create = ppo()
    plain = compile_config(main, create_cfg=create, save_cfg=False)
    workers = {"replay_buffer": {"type": "naive"}, "collector": {"type": "sample"}, "learner": {}, "evaluator": None}
    assert compile_config(main, create_cfg={**create, **workers}, save_cfg=False) == plain
    deque = {"type": "deque", "import_names": ["ding.data.buffer.deque_buffer_wrapper"]}  # works as ding's does
    assert compile_config(main, create_cfg={**create, "replay_buffer": deque}, save_cfg=False) == plain
    with pytest.raises(ConfigError, match=r"create_config\.replay_buffer\.type 'advanced': ding's serial pipeline"):
        compile_config(main, create_cfg={**create, "replay_buffer": {"type": "advanced"}}, save_cfg=False)
    with pytest.raises(ConfigError, match=r"create_config\.collector \{'type': 'sample', 'import_names'"):
        compile_config(
            main, create_cfg={**create, "collector": {"type": "sample", "import_names": ["x"]}}, save_cfg=False
        )
    with pytest.raises(ConfigError, match=r"create_config\.reward_model \{'type': 'rnd'\}: ding has no reward models"):
        compile_config(main, create_cfg={**create, "reward_model": {"type": "rnd"}}, save_cfg=False)


# ----- the rest of the call ------------------------------------------------------------------------
def test_strictness_holds_in_di_engines_form() -> None:
    main, create = ppo()
    main.policy.learn.learning_rat = 0.1
    with pytest.raises(ConfigError, match=r"unknown config key 'policy\.learn\.learning_rat'.*'learning_rate'"):
        compile_config(main, seed=0, auto=True, create_cfg=create, save_cfg=False)


def test_ambiguous_and_ill_typed_calls_are_refused() -> None:
    main, create = ppo()
    with pytest.raises(TypeError, match="create_config is given twice"):
        compile_config(main, create, create_cfg=create)
    with pytest.raises(TypeError, match="the env manager is given twice"):
        compile_config(main, BaseEnvManager, env_manager=BaseEnvManager, create_cfg=create)
    with pytest.raises(ConfigError, match="auto must be a bool, got str 'yes'"):
        compile_config(main, auto="yes", create_cfg=create)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="save_cfg must be a bool or None, got int 1"):
        compile_config(main, create_cfg=create, save_cfg=1)  # type: ignore[arg-type]


def test_auto_changes_nothing_about_where_names_come_from() -> None:
    main, create = ppo()
    with_auto = compile_config(main, auto=True, create_cfg=create, save_cfg=False)
    assert compile_config(main, create_cfg=create, save_cfg=False) == with_auto
    assert compile_config(with_auto, auto=True, save_cfg=False) == with_auto  # a compiled config names its parts
