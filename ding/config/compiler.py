"""``compile_config``: turn a user's ``main_config`` and ``create_config`` into one complete, checked config (ding's
form; DI-engine's call form and layout are read by :mod:`ding.config.di_engine` first)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from typing import Any

from easydict import EasyDict

from ding.config.agent_shapes import AGENT_SHAPE_KEYS, fill_agent_shapes
from ding.config.builtin_policies import with_builtin_import
from ding.config.experiment import DEFAULT_EXP_NAME
from ding.config.policy_registry import POLICY_REGISTRY
from ding.config.policy_sections import with_common_defaults
from ding.config.sections import TOP_LEVEL_KEYS, ComponentName, check_top_level, resolve_components
from ding.config.shapes import SHAPE_KEYS, fill_model_shapes, with_model_spec_keys
from ding.config.values import check_env_section, check_policy_section
from ding.envs.base_env import BaseEnv
from ding.envs.env_manager.config import manager_default_config
from ding.envs.env_registry import ENV_REGISTRY
from ding.envs.env_wrappers import resolve_wrappers
from ding.envs.from_config import ChainedEnv, env_class, role_manager_config, with_config_chain
from ding.envs.probe import spec_trace_of
from ding.envs.values.spaces import EnvSpaces
from ding.errors import ConfigError, DingError, EnvSpecError, UnknownNameError, unknown_name_message
from ding.utils.merge import deep_merge_dicts

DEFAULT_SEED = 0
NAME_KEYS = ("type", "import_names")


def compile_config(
    main_config: Mapping[str, Any],
    create_config: Mapping[str, Any] | None = None,
    *,
    seed: int | None = None,
    exp_name: str | None = None,
    require_policy: bool = True,
) -> EasyDict:
    """Merge the user's config into the declared defaults of its components and check it (ding's call form).

    ``ding.config.compile_config`` also takes DI-engine's call form and reads DI-engine's layout first
    (:mod:`ding.config.di_engine.call_form`); this function takes ding's config only.

    ``create_config`` names the components: ``env.type`` (with ``env.import_names``, the modules
    that register it), ``env_manager.type`` (default ``'base'``) and ``policy.type`` (with
    ``policy.import_names``). Then:

    - ``env`` is the env class's ``default_config()``, with ``manager`` the env manager's declared
      defaults, merged strictly with ``main_config.env``: an unknown key, at any depth, is a
      :class:`~ding.errors.ConfigError` with the known keys and a close match. A list
      ``env_wrapper`` chain is checked step by step, so an unknown wrapper or argument fails here.
    - ``policy`` is merged strictly into the registered policy's ``default_config()`` (a built-in
      policy's module is imported and added to ``policy.import_names``). When ``policy.type`` is
      not registered, ``require_policy=True`` raises :class:`~ding.errors.UnknownNameError`;
      ``require_policy=False`` keeps the user's ``policy`` section as given, **without validating
      it** (for modes that only need the env).
    - ``policy.model.obs_shape`` and ``action_shape``, when missing or None, are filled from the
      spaces the env declares after its wrapper chain (``obs_shape=4`` for a 1-D observation; see
      :mod:`ding.config.shapes`), and so are the model's input keys ``obs_dtype`` and ``obs_range``
      (``'uint8'`` and ``[0, 255]`` for frames, which the model scales to [0, 1]); a given value that
      disagrees is a ``ConfigError``. An env class that declares no spaces (DI-engine's style) is built
      once in a child process to read them (:func:`ding.envs.probe.spec_trace_of`), and only when a
      shape is missing (with both shapes given, its input keys stay as given).
    - ``seed`` and ``exp_name`` override the config's (defaults: 0 and ``'default_experiment'``).

    The result holds exactly ``exp_name``, ``seed``, ``env`` and ``policy``. Every name from
    ``create_config`` is recorded in it (``env.type``, ``env.import_names``, ``env.manager.type``,
    ``policy.type``, ``policy.import_names``), so it stands alone: compiling it again, without a
    ``create_config``, gives an equal config. Neither input is modified.

    Example:
        >>> main = {'env': {'stop_value': 195, 'manager': {'shared_memory': False}}, 'policy': {'cuda': False}}
        >>> create = {
        ...     'env': {'type': 'cartpole', 'import_names': ['dizoo.classic_control.cartpole.envs.cartpole_env']},
        ...     'env_manager': {'type': 'base'},
        ...     'policy': {'type': 'dqn'},
        ... }
        >>> cfg = compile_config(main, create, seed=3, require_policy=False)
        >>> cfg.policy.model.obs_shape, cfg.policy.model.action_shape, cfg.env.manager.type, cfg.seed
        (4, 2, 'base', 3)
    """
    if not isinstance(main_config, Mapping):
        raise ConfigError(f"main_config must be a dict, got {type(main_config).__name__} {main_config!r}")
    check_top_level(main_config)
    names = resolve_components(main_config, create_config)
    env_cls, env_cfg = _compile_env(main_config.get("env") or {}, names["env"], names["env_manager"])
    for role in ("collector", "evaluator"):
        role_manager_config(env_cfg, role)  # env.<role>_batch_size applies to this manager, or is refused now
    _check_wrapper_chain(env_cls, env_cfg)
    policy_cfg = _compile_policy(main_config.get("policy") or {}, names["policy"], require_policy)
    env_spaces = _env_spaces(env_cls, env_cfg, policy_cfg)
    if env_spaces is not None:
        fill = fill_agent_shapes if policy_cfg.get("multi_agent") else fill_model_shapes
        policy_cfg = fill(policy_cfg, env_spaces, str(env_cfg["type"]))
        _check_action_kind(policy_cfg, env_spaces, str(env_cfg["type"]))
    compiled = {
        "exp_name": _exp_name(exp_name if exp_name is not None else main_config.get("exp_name")),
        "seed": seed_of(seed if seed is not None else main_config.get("seed")),
        "env": env_cfg,
        "policy": policy_cfg,
    }
    assert tuple(compiled) == TOP_LEVEL_KEYS, "every top-level section must be compiled"
    return EasyDict(compiled)


def _check_action_kind(policy_cfg: Mapping[str, Any], env_spaces: EnvSpaces, env_type: str) -> None:
    """Refuse a policy whose actions are of another kind than the env's (SAC's ``Box`` on a ``Discrete`` env)."""
    policy_type = policy_cfg.get("type")
    if policy_type is None or policy_type not in POLICY_REGISTRY:
        return
    action_kinds = getattr(POLICY_REGISTRY.get(policy_type), "action_kinds", None)  # ding's Policy has it
    kinds = action_kinds(policy_cfg) if action_kinds is not None else None
    if kinds is None or isinstance(env_spaces.action, kinds):
        return
    names = " or ".join(kind.__name__ for kind in kinds)
    space = env_spaces.action
    kind = next(c for c in type(space).__mro__ if c.__module__.startswith("gymnasium.spaces"))  # Box for ClippedBox
    raise ConfigError(
        f"policy {policy_type!r} takes {names} actions, but env {env_type!r} acts in {space}: "
        f"choose a policy for {kind.__name__} actions, or configure the env for {names} ones"
    )


def _compile_env(
    user_env: Mapping[str, Any], env: ComponentName, manager: ComponentName
) -> tuple[type[BaseEnv], dict[str, Any]]:
    if env.type is None:
        raise ConfigError(
            "no env type given: set create_config.env.type (and env.import_names, the modules that register it); "
            f"registered envs: {', '.join(ENV_REGISTRY.names()) or '(none)'}"
        )
    try:
        env_cls = env_class({"type": env.type, "import_names": list(env.import_names)})
    except ImportError as err:
        raise ConfigError(f"env.import_names {list(env.import_names)}: cannot import {err.name!r}: {err}") from err
    except UnknownNameError as err:
        raise UnknownNameError(f"env.type: {err}") from err
    assert manager.type is not None  # the env_manager component has a default type
    try:
        manager_defaults = manager_default_config(manager.type)
    except UnknownNameError as err:
        raise UnknownNameError(f"env_manager.type: {err}") from err
    defaults = dict(env_cls.default_config())
    defaults["manager"] = dict(manager_defaults)
    user = _without_names(user_env)
    user_manager = user.pop("manager", {})
    if not isinstance(user_manager, Mapping):
        raise ConfigError(f"config key 'env.manager' must be a dict of manager settings, got {user_manager!r}")
    # An env class without a declared config (DI-engine's style) takes any key; the manager section is always checked.
    merged = deep_merge_dicts(defaults, user, strict=env_cls.declares_config(), path="env")
    merged["manager"] = deep_merge_dicts(
        defaults["manager"], {k: v for k, v in user_manager.items() if k != "type"}, strict=True, path="env.manager"
    )
    merged["type"] = env.type
    merged["import_names"] = list(env.import_names)
    merged["manager"]["type"] = manager.type
    check_env_section(env_cls, merged)
    return with_config_chain(env_cls, merged), merged


def _check_wrapper_chain(env_cls: type[BaseEnv], env_cfg: Mapping[str, Any]) -> None:
    """Resolve ``env.env_wrapper`` now, so a bad wrapper name or argument names its place in the config."""
    if "env_wrapper" not in env_cfg:
        return
    chain = env_cfg["env_wrapper"]
    train = bool(env_cfg.get("is_train", True))
    if chain is None:
        return
    if isinstance(chain, str):
        _resolve_step("env.env_wrapper", functools.partial(env_cls.wrapper_chain, env_cfg))
    elif isinstance(chain, Mapping):
        _resolve_step("env.env_wrapper", functools.partial(resolve_wrappers, [chain], train=train))
    elif isinstance(chain, (list, tuple)):
        for index, item in enumerate(chain):
            _resolve_step(f"env.env_wrapper[{index}]", functools.partial(resolve_wrappers, [item], train=train))
    else:
        raise ConfigError(
            f"env.env_wrapper must be a preset name, a list of wrapper items or None; got {type(chain).__name__} "
            f"{chain!r}"
        )


def _resolve_step(where: str, resolve: Callable[[], object]) -> None:
    try:
        resolve()
    except DingError as err:
        raise type(err)(f"{where}: {err}") from err
    except TypeError as err:
        raise ConfigError(f"{where}: {err}") from err


def _compile_policy(user_policy: Mapping[str, Any], policy: ComponentName, require_policy: bool) -> dict[str, Any]:
    imports = with_builtin_import(policy.type, policy.import_names) if require_policy else list(policy.import_names)
    try:
        POLICY_REGISTRY.import_names(imports)
    except ImportError as err:
        raise ConfigError(f"policy.import_names {imports}: cannot import {err.name!r}: {err}") from err
    user = _without_names(user_policy)
    if policy.type is not None and policy.type in POLICY_REGISTRY:
        body = deep_merge_dicts(policy_defaults(policy.type, user), user, strict=True, path="policy")
        check_policy_section(policy.type, user, body)
    elif require_policy:
        hint = " Pass require_policy=False to keep the policy section unvalidated."
        if policy.type is None:
            registered = ", ".join(POLICY_REGISTRY.names()) or "(none)"
            raise UnknownNameError(f"no policy type given: set create_config.policy.type; known: {registered}.{hint}")
        raise UnknownNameError(unknown_name_message("policy", policy.type, POLICY_REGISTRY.names()) + hint)
    else:
        body = user
    return {"type": policy.type, "import_names": imports, **_without_names(body)}


def policy_defaults(policy_type: str, user: Mapping[str, Any]) -> dict[str, Any]:
    """The registered policy's defaults for the section ``user``, with a ``model`` that takes the env's shapes."""
    policy_cls: Any = POLICY_REGISTRY.get(policy_type)
    defaults_for = getattr(policy_cls, "defaults_for", None)  # ding's Policy has it
    if defaults_for is not None:
        return dict(defaults_for(user))
    defaults = policy_cls.default_config()  # a registered class that is not a ding Policy
    if not isinstance(defaults, Mapping):
        raise TypeError(f"policy {policy_type!r}: default_config() must return a dict, got {type(defaults).__name__}")
    return with_common_defaults(with_model_spec_keys(copy.deepcopy(dict(defaults))))


def _env_spaces(env_cls: type[BaseEnv], env_cfg: Mapping[str, Any], policy_cfg: Mapping[str, Any]) -> EnvSpaces | None:
    """The env's spaces: declared, or probed when it declares none; None when not known but not needed.

    They are not needed when the model's shapes are all given; an env that would have to be built
    to know them is then not built (its shapes are not checked), unless a chain from ``env_wrapper``
    is put around it (:class:`~ding.envs.from_config.ChainedEnv`): its rules are checked on them now.
    """
    model = policy_cfg.get("model")
    keys = AGENT_SHAPE_KEYS if policy_cfg.get("multi_agent") else SHAPE_KEYS
    shapes_given = isinstance(model, Mapping) and all(model.get(key) is not None for key in keys)
    if shapes_given and not env_cls.declares_spaces() and not issubclass(env_cls, ChainedEnv):
        return None
    try:
        if env_cls.declares_spaces():
            return env_cls.spaces_from_config(env_cfg)
        return spec_trace_of(env_cls, env_cfg)[-1][1]
    except EnvSpecError as err:
        if shapes_given and not issubclass(env_cls, ChainedEnv):
            return None
        raise ConfigError(f"cannot fill policy.model shapes from env {env_cfg['type']!r}: {err}") from err


def _without_names(section: Mapping[str, Any]) -> dict[str, Any]:
    return {key: copy.deepcopy(value) for key, value in section.items() if key not in NAME_KEYS}


def seed_of(value: Any) -> int:
    """The run seed a config's or a caller's ``seed`` gives: 0 for None; anything but an int is refused.

    >>> seed_of(None), seed_of(7)
    (0, 7)
    """
    if value is None:
        return DEFAULT_SEED
    if not isinstance(value, int) or isinstance(value, bool):
        raise ConfigError(f"seed must be an int, got {type(value).__name__} {value!r}")
    return value


def _exp_name(value: Any) -> str:
    if value is None:
        return DEFAULT_EXP_NAME
    if not isinstance(value, str) or not value:
        raise ConfigError(f"exp_name must be a non-empty str, got {type(value).__name__} {value!r}")
    return value
