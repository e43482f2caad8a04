from __future__ import annotations

import copy
from typing import Any

import pytest

from ding.config import deep_merge_dicts
from ding.errors import ConfigError


def defaults() -> dict[str, Any]:
    return {
        "collector_env_num": 8,
        "stop_value": None,
        "env_kwargs": {},
        "env_wrapper": "default",
        "manager": {"shared_memory": False, "auto_reset": True, "retry": {"max_retry": 1, "retry_type": "reset"}},
    }


def test_merge_overrides_nested_values_and_keeps_the_rest() -> None:
    merged = deep_merge_dicts(defaults(), {"collector_env_num": 2, "manager": {"retry": {"max_retry": 3}}})
    assert merged["collector_env_num"] == 2
    assert merged["manager"] == {
        "shared_memory": False,
        "auto_reset": True,
        "retry": {"max_retry": 3, "retry_type": "reset"},
    }
    assert merged["env_wrapper"] == "default"


def test_merge_never_mutates_its_inputs_nor_shares_their_objects() -> None:
    original, new = defaults(), {"manager": {"auto_reset": False}, "env_kwargs": {"opts": [1, 2]}}
    original_before, new_before = copy.deepcopy(original), copy.deepcopy(new)
    merged = deep_merge_dicts(original, new, strict=True)
    assert original == original_before and new == new_before
    merged["manager"]["retry"]["max_retry"] = 99
    merged["env_kwargs"]["opts"].append(3)
    assert original == original_before and new == new_before


def test_strict_unknown_nested_key_names_the_full_path_the_known_keys_and_a_close_match() -> None:
    with pytest.raises(ConfigError, match=r"unknown config key 'env\.manager\.retry\.max_retyr'") as info:
        deep_merge_dicts(defaults(), {"manager": {"retry": {"max_retyr": 2}}}, strict=True, path="env")
    message = str(info.value)
    assert "known keys under 'env.manager.retry': max_retry, retry_type." in message
    assert message.endswith("Did you mean 'max_retry'?")


def test_strict_unknown_top_level_key() -> None:
    with pytest.raises(ConfigError, match=r"'colector_env_num'; known keys at the top level: .*collector_env_num"):
        deep_merge_dicts(defaults(), {"colector_env_num": 4}, strict=True)


def test_non_strict_merge_accepts_unknown_keys_and_kind_changes() -> None:
    merged = deep_merge_dicts(defaults(), {"new_key": 1, "env_wrapper": {"type": "x"}, "manager": 3})
    assert merged["new_key"] == 1 and merged["env_wrapper"] == {"type": "x"} and merged["manager"] == 3


def test_empty_dict_default_is_a_free_form_mapping_at_any_depth() -> None:
    new = {"env_kwargs": {"gravity": 9.8, "nested": {"any": {"depth": True}}}}
    assert deep_merge_dicts(defaults(), new, strict=True)["env_kwargs"] == new["env_kwargs"]
    assert deep_merge_dicts({}, {"anything": 1}, strict=True) == {"anything": 1}


def test_strict_rejects_a_scalar_replacing_a_dict() -> None:
    with pytest.raises(ConfigError, match=r"'env\.manager' must be a dict \(of auto_reset, retry, shared_memory\)"):
        deep_merge_dicts(defaults(), {"manager": 3}, strict=True, path="env")
    with pytest.raises(ConfigError, match=r"'env_kwargs' must be a dict \(of any keys\), got NoneType None"):
        deep_merge_dicts(defaults(), {"env_kwargs": None}, strict=True)


def test_strict_rejects_a_dict_replacing_a_scalar() -> None:
    with pytest.raises(ConfigError, match=r"'collector_env_num' cannot be a dict: its default is 8 \(int\)"):
        deep_merge_dicts(defaults(), {"collector_env_num": {"n": 8}}, strict=True)


def test_strict_none_default_accepts_a_dict_or_a_scalar() -> None:
    assert deep_merge_dicts(defaults(), {"stop_value": {"a": 1}}, strict=True)["stop_value"] == {"a": 1}
    assert deep_merge_dicts(defaults(), {"stop_value": 195}, strict=True)["stop_value"] == 195
