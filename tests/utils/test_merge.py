"""deep_merge_dicts (strict and not) and DI-engine's in-place deep_update: one merge, two sets of rules."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from easydict import EasyDict

from ding.config import deep_merge_dicts
from ding.errors import ConfigError, UnknownConfigKeyError
from ding.utils import deep_update


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


def test_unknown_keys_raise_an_error_that_is_also_the_runtime_error_di_engine_raises() -> None:
    for merge in (
        lambda: deep_merge_dicts(defaults(), {"colector_env_num": 4}, strict=True),
        lambda: deep_update(defaults(), {"colector_env_num": 4}),
    ):
        with pytest.raises(RuntimeError, match="Did you mean 'collector_env_num'") as info:
            merge()
        assert isinstance(info.value, UnknownConfigKeyError) and isinstance(info.value, ConfigError)


def test_the_result_keeps_the_type_of_the_original() -> None:
    merged = deep_merge_dicts(EasyDict(defaults()), {"manager": {"auto_reset": False}, "extra": {"a": 1}})
    assert isinstance(merged, EasyDict)
    assert merged.manager.auto_reset is False and merged.extra.a == 1 and merged.manager.retry.max_retry == 1
    assert type(deep_merge_dicts(defaults(), {})) is dict
    assert deep_merge_dicts(defaults(), None) == defaults()


def test_deep_update_changes_the_original_in_place_and_returns_it() -> None:
    original = defaults()
    new = {"manager": {"retry": {"max_retry": 5}}, "env_kwargs": {"gravity": [9.8]}}
    result = deep_update(original, new, new_keys_allowed=True)
    assert result is original
    assert original["manager"]["retry"] == {"max_retry": 5, "retry_type": "reset"}
    original["env_kwargs"]["gravity"].append(1.0)
    assert new["env_kwargs"]["gravity"] == [9.8]


def test_deep_update_rejects_new_keys_at_any_depth_unless_allowed() -> None:
    with pytest.raises(UnknownConfigKeyError, match=r"'manager\.retry\.max_retyr'; known keys under 'manager\.retry'"):
        deep_update(defaults(), {"manager": {"retry": {"max_retyr": 2}}})
    with pytest.raises(UnknownConfigKeyError, match=r"'env_kwargs\.gravity'; known keys under 'env_kwargs': \."):
        deep_update(defaults(), {"env_kwargs": {"gravity": 9.8}})  # no free-form dicts in DI-engine's deep_update
    assert deep_update(defaults(), {"manager": {"new": 1}}, new_keys_allowed=True)["manager"]["new"] == 1


def test_deep_update_whitelist_allows_new_keys_below_a_top_level_key() -> None:
    updated = deep_update(defaults(), {"manager": {"retry": {"backoff": 2}}}, whitelist=["manager"])
    assert updated["manager"]["retry"]["backoff"] == 2
    with pytest.raises(UnknownConfigKeyError, match="'extra'"):
        deep_update(defaults(), {"extra": 1}, whitelist=["manager"])


def test_deep_update_replaces_a_section_whose_type_changes_when_asked() -> None:
    original = {"model": {"type": "dqn", "hidden": 64}, "other": {"type": "a", "keep": 1}}
    new = {"model": {"type": "c51", "atoms": 51}, "other": {"type": "b"}}
    updated = deep_update(copy.deepcopy(original), new, override_all_if_type_changes=["model"])
    assert updated["model"] == {"type": "c51", "atoms": 51}
    with pytest.raises(UnknownConfigKeyError, match=r"'model\.atoms'"):
        deep_update(copy.deepcopy(original), new)
    assert deep_update(copy.deepcopy(original), {"other": {"type": "b"}})["other"] == {"type": "b", "keep": 1}


def test_deep_update_lets_a_scalar_and_a_dict_replace_each_other() -> None:
    updated = deep_update(defaults(), {"manager": 3, "collector_env_num": {"n": 8}})
    assert updated["manager"] == 3 and updated["collector_env_num"] == {"n": 8}
