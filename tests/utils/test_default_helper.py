"""ding.utils under DI-engine's names: registries, flatten_dict, set_pkg_seed, import_module."""

from __future__ import annotations

import pathlib
import random
import subprocess
import sys
import textwrap
import uuid

import numpy as np
import pytest
import torch

import ding.utils
from ding.config.policy_registry import POLICY_REGISTRY
from ding.envs.env_manager.factory import ENV_MANAGER_REGISTRY
from ding.envs.env_registry import ENV_REGISTRY
from ding.envs.env_wrappers import WRAPPER_REGISTRY
from ding.utils import flatten_dict, import_module, set_pkg_seed
from ding.utils import merge as merge_module
from ding.utils.default_helper import deep_merge_dicts, deep_update


def test_registries_under_di_engine_names_are_dings_own() -> None:
    from ding.utils import ENV_MANAGER_REGISTRY as managers
    from ding.utils import ENV_REGISTRY as envs
    from ding.utils import ENV_WRAPPER_REGISTRY as wrappers
    from ding.utils import POLICY_REGISTRY as policies

    assert envs is ENV_REGISTRY and wrappers is WRAPPER_REGISTRY
    assert managers is ENV_MANAGER_REGISTRY and policies is POLICY_REGISTRY
    assert "cartpole" in envs or "ding_env_wrapper" in envs
    assert {"ENV_REGISTRY", "POLICY_REGISTRY", "set_pkg_seed"} <= set(dir(ding.utils))


def test_a_registry_ding_does_not_have_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"module 'ding\.utils' has no attribute 'MODEL_REGISTRY'"):
        ding.utils.MODEL_REGISTRY  # noqa: B018


def test_default_helper_holds_the_one_merge() -> None:
    assert deep_merge_dicts is merge_module.deep_merge_dicts and deep_update is merge_module.deep_update
    assert ding.utils.deep_merge_dicts is deep_merge_dicts


def test_importing_ding_utils_and_torch_utils_does_not_import_torch() -> None:
    code = textwrap.dedent(
        """
        import sys
        import ding.utils, ding.torch_utils
        from ding.utils import set_pkg_seed, ENV_REGISTRY
        from ding.torch_utils import to_ndarray, to_list
        print('torch' in sys.modules, type(to_ndarray([1, 2])).__name__, to_list(to_ndarray((1.5,))))
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "ndarray", "[1.5]"]


def test_flatten_dict_joins_nested_keys() -> None:
    nested = {"a": {"aa": {"aaa": "x"}, "ab": "y"}, "b": [1, {"c": 2}], "empty": {}}
    assert flatten_dict(nested) == {"a/aa/aaa": "x", "a/ab": "y", "b": [1, {"c": 2}]}
    assert flatten_dict({"env": {"manager": {"type": "base"}}}, delimiter=".") == {"env.manager.type": "base"}
    assert nested["a"] == {"aa": {"aaa": "x"}, "ab": "y"}


def draws() -> tuple[float, float, float]:
    return random.random(), float(np.random.rand()), float(torch.rand(1))


def test_set_pkg_seed_seeds_python_numpy_and_torch() -> None:
    set_pkg_seed(7)
    first = draws()
    set_pkg_seed(7, use_cuda=False)
    assert draws() == first
    set_pkg_seed(8)
    assert all(a != b for a, b in zip(draws(), first, strict=True))
    set_pkg_seed(2**40)  # beyond numpy's range: numpy takes it modulo 2**32
    big = draws()
    set_pkg_seed(2**40)
    assert draws() == big


@pytest.mark.parametrize("seed", [True, 1.5, "0", None])
def test_set_pkg_seed_rejects_what_is_not_an_int(seed: object) -> None:
    with pytest.raises(TypeError, match="seed must be an int"):
        set_pkg_seed(seed)  # type: ignore[arg-type]


def test_import_module_imports_each_module_so_its_registrations_run(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"plugin_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text(
        "from ding.utils import POLICY_REGISTRY\n"
        f"@POLICY_REGISTRY.register({name!r})\n"
        "class Plugin:\n"
        "    @classmethod\n"
        "    def default_config(cls):\n"
        "        return {}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        import_module(["json", name])
        assert POLICY_REGISTRY.get(name).__name__ == "Plugin"
    finally:
        POLICY_REGISTRY.unregister(name)
        sys.modules.pop(name, None)


def test_import_module_rejects_a_single_name_and_unknown_modules() -> None:
    with pytest.raises(TypeError, match=r"takes a list of module names, got the str 'json'; use \['json'\]"):
        import_module("json")
    with pytest.raises(ModuleNotFoundError, match="no_such_module_anywhere"):
        import_module(["no_such_module_anywhere"])
