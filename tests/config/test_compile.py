from __future__ import annotations

import copy
import math
import pathlib
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from easydict import EasyDict
from gymnasium import spaces

from ding.config import compile_config, read_config, save_config
from ding.config.shapes import model_shape, same_shape
from ding.envs.env_manager.config import manager_default_config
from ding.errors import ConfigError, UnknownNameError
from ding.policy import POLICY_REGISTRY

CARTPOLE_MODULE = "dizoo.classic_control.cartpole.envs.cartpole_env"


def cartpole_main() -> dict[str, Any]:
    return {
        "exp_name": "cartpole_dqn_seed0",
        "env": {
            "collector_env_num": 8,
            "evaluator_env_num": 5,
            "n_evaluator_episode": 5,
            "stop_value": 195,
            "manager": {"shared_memory": False},
        },
        "policy": {"cuda": False, "model": {"encoder_hidden_size_list": [128, 128, 64]}, "learn": {"batch_size": 64}},
    }


def cartpole_create() -> dict[str, Any]:
    return {
        "env": {"type": "cartpole", "import_names": [CARTPOLE_MODULE]},
        "env_manager": {"type": "base"},
        "policy": {"type": "dqn"},
    }


def gym_env(**env: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    return {"env": {"env_id": "CartPole-v1", **env}}, {"env": {"type": "ding_env_wrapper"}}


class DummyPolicy:
    @classmethod
    def default_config(cls) -> dict[str, Any]:
        return {
            "cuda": False,
            "discount_factor": 0.99,
            "learn": {"batch_size": 32, "learning_rate": 0.001},
            "model": {},
        }


class DeclaredModelPolicy:
    @classmethod
    def default_config(cls) -> dict[str, Any]:
        return {"model": {"encoder_hidden_size_list": [64, 64]}}


@pytest.fixture
def dummy_policy() -> Iterator[str]:
    name = f"dummy_policy_{uuid.uuid4().hex}"
    POLICY_REGISTRY.register(name)(DummyPolicy)
    yield name
    POLICY_REGISTRY._items.pop(name)


def compile_cartpole(main: dict[str, Any] | None = None, **kwargs: Any) -> EasyDict:
    kwargs.setdefault("require_policy", False)
    return compile_config(cartpole_main() if main is None else main, cartpole_create(), **kwargs)


# ----- the cartpole config -------------------------------------------------------------------------
def test_cartpole_fills_model_shapes_from_the_env() -> None:
    cfg = compile_cartpole()
    assert isinstance(cfg, EasyDict)
    assert cfg.policy.model.obs_shape == 4 and type(cfg.policy.model.obs_shape) is int
    assert cfg.policy.model.action_shape == 2
    assert cfg.policy.model.encoder_hidden_size_list == [128, 128, 64]


def test_cartpole_env_section_has_env_defaults_names_and_merged_manager_defaults() -> None:
    cfg = compile_cartpole()
    assert list(cfg) == ["exp_name", "seed", "env", "policy"]
    assert cfg.env.type == "cartpole" and cfg.env.import_names == [CARTPOLE_MODULE]
    assert cfg.env.max_episode_steps == 200 and cfg.env.stop_value == 195 and cfg.env.is_train is True
    manager = cfg.env.manager
    assert manager.type == "base" and manager.shared_memory is False
    defaults = manager_default_config("base")
    assert manager.auto_reset is True and manager.episode_num == math.inf
    assert {key: manager[key] for key in defaults if key != "shared_memory"} == {
        key: value for key, value in defaults.items() if key != "shared_memory"
    }


def test_the_manager_defaults_follow_the_manager_type() -> None:
    create = {**cartpole_create(), "env_manager": {"type": "subprocess"}}
    manager = compile_config(cartpole_main(), create, require_policy=False).env.manager
    assert manager.type == "subprocess" and manager.context == "fork" and manager.shared_memory is False
    no_manager = {key: value for key, value in cartpole_create().items() if key != "env_manager"}
    assert compile_config(cartpole_main(), no_manager, require_policy=False).env.manager.type == "base"


def test_seed_and_exp_name_defaults_and_overrides() -> None:
    cfg = compile_cartpole()
    assert (cfg.seed, cfg.exp_name) == (0, "cartpole_dqn_seed0")
    cfg = compile_cartpole({**cartpole_main(), "seed": 7}, seed=11, exp_name="other")
    assert (cfg.seed, cfg.exp_name) == (11, "other")
    main = {key: value for key, value in cartpole_main().items() if key != "exp_name"}
    assert compile_cartpole(main).exp_name == "default_experiment"
    with pytest.raises(ConfigError, match=r"seed must be an int, got str '1'"):
        compile_cartpole(seed="1")  # type: ignore[arg-type]


def test_compile_never_mutates_its_inputs() -> None:
    main, create = cartpole_main(), cartpole_create()
    main_before, create_before = copy.deepcopy(main), copy.deepcopy(create)
    cfg = compile_config(main, create, require_policy=False)
    assert main == main_before and create == create_before
    cfg.policy.model.encoder_hidden_size_list.append(1)
    cfg.env.manager.shared_memory = True
    assert main == main_before and create == create_before


def test_compiled_config_stands_alone_and_survives_a_save_and_read(tmp_path: pathlib.Path) -> None:
    cfg = compile_cartpole()
    assert compile_config(cfg, require_policy=False) == cfg
    main, create = read_config(save_config(cfg, cartpole_create(), tmp_path / "total_config.py"))
    assert main == cfg
    assert compile_config(main, create, require_policy=False) == cfg


# ----- typos are rejected with a close match -------------------------------------------------------
def test_typo_in_env_is_rejected() -> None:
    main = cartpole_main()
    main["env"]["colector_env_num"] = main["env"].pop("collector_env_num")
    with pytest.raises(ConfigError, match=r"'env\.colector_env_num'.*Did you mean 'collector_env_num'\?"):
        compile_cartpole(main)


def test_typo_in_env_manager_is_rejected_against_the_managers_declared_keys() -> None:
    main = cartpole_main()
    main["env"]["manager"] = {"shared_memroy": False}
    with pytest.raises(ConfigError, match=r"'env\.manager\.shared_memroy'.*step_timeout.*Did you mean 'shared_memory'"):
        compile_cartpole(main)


def test_typo_at_the_top_level_is_rejected() -> None:
    main = cartpole_main()
    main["polciy"] = main.pop("policy")
    with pytest.raises(ConfigError, match=r"top-level config key 'polciy'; known: env, exp_name, policy, seed"):
        compile_cartpole(main)


def test_typos_in_create_config_are_rejected() -> None:
    create = cartpole_create()
    create["env_manger"] = create.pop("env_manager")
    with pytest.raises(ConfigError, match=r"create_config section 'env_manger'.*Did you mean 'env_manager'"):
        compile_config(cartpole_main(), create, require_policy=False)
    create = cartpole_create()
    create["env"]["import_name"] = create["env"].pop("import_names")
    with pytest.raises(ConfigError, match=r"'import_name' in create_config\.env.*Did you mean 'import_names'"):
        compile_config(cartpole_main(), create, require_policy=False)


def test_unknown_env_and_manager_types_and_unimportable_modules_are_rejected() -> None:
    create = cartpole_create()
    create["env"]["type"] = "cartpol"
    with pytest.raises(UnknownNameError, match=r"env\.type: unknown env 'cartpol'.*Did you mean 'cartpole'"):
        compile_config(cartpole_main(), create, require_policy=False)
    create = {**cartpole_create(), "env_manager": {"type": "subproces"}}
    with pytest.raises(UnknownNameError, match=r"env_manager\.type: unknown env manager 'subproces'"):
        compile_config(cartpole_main(), create, require_policy=False)
    create = cartpole_create()
    create["env"]["import_names"] = ["dizoo.no_such_module"]
    with pytest.raises(ConfigError, match=r"cannot import 'dizoo\.no_such_module'"):
        compile_config(cartpole_main(), create, require_policy=False)


def test_types_given_in_both_configs_must_agree() -> None:
    main = cartpole_main()
    main["env"]["manager"]["type"] = "subprocess"
    with pytest.raises(ConfigError, match=r"env_manager\.type is 'base' but main_config\.env\.manager\.type is 'sub"):
        compile_cartpole(main)


# ----- model shapes ---------------------------------------------------------------------------------
def test_a_wrong_hand_typed_obs_shape_is_rejected_naming_both_shapes() -> None:
    main = cartpole_main()
    main["policy"]["model"]["obs_shape"] = 8
    with pytest.raises(
        ConfigError, match=r"policy\.model\.obs_shape is 8, but env 'cartpole' produces observations of"
    ):
        compile_cartpole(main)
    main["policy"]["model"] = {"action_shape": 3}
    with pytest.raises(ConfigError, match=r"action_shape is 3, but env 'cartpole' produces actions of shape 2"):
        compile_cartpole(main)


def test_given_shapes_that_agree_are_kept_as_written() -> None:
    main = cartpole_main()
    main["policy"]["model"].update(obs_shape=[4], action_shape=2)
    model = compile_cartpole(main).policy.model
    assert model.obs_shape == [4] and model.action_shape == 2


def test_shapes_follow_the_wrapper_chain() -> None:
    main, create = gym_env(env_wrapper=[{"type": "frame_stack", "kwargs": {"n_frames": 3}}])
    model = compile_config(main, create, require_policy=False).policy.model
    assert model.obs_shape == (3, 4) and model.action_shape == 2


def test_a_1d_box_action_is_an_int() -> None:
    main, create = {"env": {"env_id": "Pendulum-v1", "env_wrapper": None}}, {"env": {"type": "ding_env_wrapper"}}
    model = compile_config(main, create, require_policy=False).policy.model
    assert (model.obs_shape, model.action_shape) == (3, 1)


def test_model_shape_conventions() -> None:
    assert model_shape(spaces.Box(0, 1, (4,))) == 4
    assert model_shape(spaces.Box(0, 1, (4, 84, 84))) == (4, 84, 84)
    assert model_shape(spaces.Discrete(6)) == 6
    assert model_shape(spaces.MultiDiscrete([3, 4])) == [3, 4]
    assert same_shape([4, 84, 84], (4, 84, 84)) and same_shape([2], 2)
    assert not same_shape((4, 84), (4, 84, 84)) and not same_shape("4", 4) and not same_shape(True, 1)


def test_unknown_env_spaces_are_an_error_unless_both_shapes_are_given() -> None:
    main: dict[str, Any] = {"env": {"env_wrapper": "default"}}
    create = {"env": {"type": "ding_env_wrapper"}}
    with pytest.raises(ConfigError, match=r"cannot fill policy\.model shapes from env 'ding_env_wrapper'.*env_id"):
        compile_config(main, create, require_policy=False)
    main = {**main, "policy": {"model": {"obs_shape": 5, "action_shape": 3}}}
    assert compile_config(main, create, require_policy=False).policy.model == {"obs_shape": 5, "action_shape": 3}


# ----- wrapper chains ---------------------------------------------------------------------------------
def test_an_unknown_wrapper_is_rejected_at_compile_time_with_a_close_match() -> None:
    main, create = gym_env(env_wrapper=[{"type": "frame_stak"}])
    with pytest.raises(UnknownNameError, match=r"env\.env_wrapper\[0\]: unknown wrapper 'frame_stak'.*Did you mean"):
        compile_config(main, create, require_policy=False)


def test_an_unknown_wrapper_argument_names_its_step() -> None:
    main, create = gym_env(env_wrapper=["eval_episode_return", ("frame_stack", {"n_frame": 2})])
    with pytest.raises(ConfigError, match=r"env\.env_wrapper\[1\]: .*'n_frame'.*Did you mean 'n_frames'"):
        compile_config(main, create, require_policy=False)


def test_an_unknown_preset_is_rejected() -> None:
    main, create = gym_env(env_wrapper="atari_defualt")
    with pytest.raises(ConfigError, match=r"env\.env_wrapper: env_wrapper 'atari_defualt' is not a preset"):
        compile_config(main, create, require_policy=False)


def test_free_form_env_kwargs_are_accepted() -> None:
    main = {"env": {"env_id": "CartPole-v1", "env_kwargs": {"sutton_barto_reward": True}}}
    cfg = compile_config(main, {"env": {"type": "ding_env_wrapper"}}, require_policy=False)
    assert cfg.env.env_kwargs == {"sutton_barto_reward": True}


# ----- policies ---------------------------------------------------------------------------------------
def test_an_unregistered_policy_fails_unless_not_required() -> None:
    create = {**cartpole_create(), "policy": {"type": "unregistered"}}
    with pytest.raises(UnknownNameError, match=r"unknown policy 'unregistered'; known: .*require_policy=False"):
        compile_config(cartpole_main(), create)
    main = cartpole_main()
    main["policy"]["anything_goes"] = {"x": 1}
    policy = compile_config(main, create, require_policy=False).policy
    assert policy.type == "unregistered" and policy.anything_goes == {"x": 1} and policy.learn == {"batch_size": 64}


def test_a_registered_policy_is_merged_into_its_defaults(dummy_policy: str) -> None:
    create = {**cartpole_create(), "policy": {"type": dummy_policy}}
    policy = compile_config(cartpole_main(), create).policy
    assert policy.type == dummy_policy and policy.import_names == []
    assert policy.discount_factor == 0.99 and policy.learn == {"batch_size": 64, "learning_rate": 0.001}
    assert policy.model == {
        "encoder_hidden_size_list": [128, 128, 64],
        "obs_shape": 4,
        "action_shape": 2,
        "obs_dtype": "float32",
        "obs_range": None,
    }


def test_a_registered_policy_is_validated_strictly(dummy_policy: str) -> None:
    create = {**cartpole_create(), "policy": {"type": dummy_policy}}
    main = cartpole_main()
    main["policy"]["learn"] = {"batchsize": 64}
    with pytest.raises(ConfigError, match=r"'policy\.learn\.batchsize'.*Did you mean 'batch_size'"):
        compile_config(main, create)
    main = cartpole_main()
    main["policy"]["discount_factr"] = 0.9
    with pytest.raises(ConfigError, match=r"'policy\.discount_factr'.*Did you mean 'discount_factor'"):
        compile_config(main, create, require_policy=False)


def test_a_policy_that_declares_model_keys_takes_only_those_and_the_shapes() -> None:
    name = f"declared_model_policy_{uuid.uuid4().hex}"
    POLICY_REGISTRY.register(name)(DeclaredModelPolicy)
    try:
        create = {**cartpole_create(), "policy": {"type": name}}
        main: dict[str, Any] = {"policy": {"model": {"obs_shape": 4}}}
        assert compile_config(main, create).policy.model == {
            "obs_shape": 4,
            "action_shape": 2,
            "obs_dtype": "float32",
            "obs_range": None,
            "encoder_hidden_size_list": [64, 64],
        }
        main = {"policy": {"model": {"encoder_hidden_size": [1]}}}
        with pytest.raises(ConfigError, match=r"'policy\.model\.encoder_hidden_size'"):
            compile_config(main, create)
    finally:
        POLICY_REGISTRY._items.pop(name)


def test_the_policy_registry_takes_only_classes_with_default_config() -> None:
    with pytest.raises(TypeError, match=r"default_config"):
        POLICY_REGISTRY.register(f"broken_{uuid.uuid4().hex}")(type("Broken", (), {}))


PENDULUM = ("pendulum", "dizoo.classic_control.pendulum.envs.pendulum_env")  # a Box(1) torque by default


@pytest.mark.parametrize(
    ("env", "policy", "message"),
    [
        (
            ("cartpole", CARTPOLE_MODULE),
            {"type": "sac"},
            r"policy 'sac' takes Box actions, but env 'cartpole' acts in "
            r"Discrete\(2\): choose a policy for Discrete actions",
        ),
        (("cartpole", CARTPOLE_MODULE), {"type": "td3"}, r"policy 'td3' takes Box actions"),
        (("cartpole", CARTPOLE_MODULE), {"type": "ppo", "action_space": "continuous"}, r"policy 'ppo' takes Box"),
        (
            PENDULUM,
            {"type": "dqn"},
            r"policy 'dqn' takes Discrete actions, but env 'pendulum' acts in \w*Box\(.*\): choose a policy for Box "
            r"actions",
        ),
        (PENDULUM, {"type": "discrete_sac"}, r"policy 'discrete_sac' takes Discrete actions"),
        (PENDULUM, {"type": "ppo"}, r"policy 'ppo' takes Discrete actions"),  # PPO's action_space is 'discrete'
    ],
)
def test_a_policy_for_another_kind_of_actions_than_the_envs_is_refused(
    env: tuple[str, str], policy: dict[str, Any], message: str
) -> None:
    main = {"env": {"collector_env_num": 1, "evaluator_env_num": 1}, "policy": {"cuda": False}}
    kind = policy.pop("type")
    main["policy"].update(policy)
    create = {"env": {"type": env[0], "import_names": [env[1]]}, "policy": {"type": kind}}
    with pytest.raises(ConfigError, match=message):
        compile_config(main, create)


@pytest.mark.parametrize(
    ("env", "policy"),
    [
        (PENDULUM, {"type": "sac"}),
        (PENDULUM, {"type": "ppo", "action_space": "continuous"}),
        (("cartpole", CARTPOLE_MODULE), {"type": "ppo"}),
    ],
)
def test_a_policy_for_the_envs_kind_of_actions_compiles(env: tuple[str, str], policy: dict[str, Any]) -> None:
    main = {"env": {"collector_env_num": 1, "evaluator_env_num": 1}, "policy": {"cuda": False}}
    kind = policy.pop("type")
    main["policy"].update(policy)
    cfg = compile_config(main, {"env": {"type": env[0], "import_names": [env[1]]}, "policy": {"type": kind}})
    assert cfg.policy.type == kind and cfg.policy.model.action_shape is not None


def test_a_role_batch_size_on_a_manager_without_a_pool_is_refused_at_compile() -> None:
    main = cartpole_main()
    main["env"]["collector_batch_size"] = 4
    with pytest.raises(ConfigError, match=r"env.collector_batch_size is 4, but it sets the batch of an envpool pool"):
        compile_cartpole(main)
