"""The policy registry knows the built-in policies before their modules are imported, and how each learns."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ding.config.builtin_policies import BUILTIN_POLICY_MODULES
from ding.config.policy_registry import POLICY_REGISTRY, learns_on_policy
from ding.errors import UnknownNameError


def test_a_fresh_process_lists_the_built_in_policies_and_imports_one_on_first_use() -> None:
    code = (
        "import sys\n"
        "from ding.config.policy_registry import POLICY_REGISTRY\n"
        "try:\n"
        "    POLICY_REGISTRY.get('dqnn')\n"
        "except Exception as err:\n"
        "    print(type(err).__name__, err)\n"
        "before = 'ding.policy.dqn' in sys.modules\n"
        "print(before, POLICY_REGISTRY.get('dqn').__name__, 'ding.policy.dqn' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    error, imported = out.splitlines()
    assert error == (
        "UnknownNameError unknown policy 'dqnn'; known: a2c, c51, ddpg, discrete_sac, dqn, ppo, qrdqn, sac, td3. "
        "Did you mean 'dqn'? Set "
        "create_config.policy.type to one of them, or list the module that registers your policy in "
        "create_config.policy.import_names."
    )
    assert imported == "False DQNPolicy True"


def test_names_are_the_registered_and_the_built_in_ones() -> None:
    assert set(BUILTIN_POLICY_MODULES) <= set(POLICY_REGISTRY.names())
    with pytest.raises(
        UnknownNameError, match=r"known: a2c, c51, ddpg, discrete_sac, dqn, ppo, qrdqn, sac, td3\."
    ) as caught:
        POLICY_REGISTRY.get("nope")
    assert "require_policy" not in str(caught.value)


@pytest.mark.parametrize(
    ("name", "on_policy"),
    [
        ("ppo", True),
        ("a2c", True),
        ("dqn", False),
        ("c51", False),
        ("sac", False),
        ("discrete_sac", False),
        ("ddpg", False),
        ("td3", False),
    ],
)
def test_each_built_in_policy_says_how_it_learns(name: str, on_policy: bool) -> None:
    assert learns_on_policy(name) is on_policy


def test_a_policy_that_does_not_say_is_neither() -> None:
    class Plain:
        @classmethod
        def default_config(cls) -> dict[str, object]:
            return {"model": {}}

    POLICY_REGISTRY.register("plain_policy_for_test")(Plain)
    try:
        assert learns_on_policy("plain_policy_for_test") is None
    finally:
        POLICY_REGISTRY.unregister("plain_policy_for_test")
