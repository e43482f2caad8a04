import pytest

from ding.envs import BaseEnvTimestep


def test_unpacks_as_di_engine_four_tuple() -> None:
    ts = BaseEnvTimestep(obs=[1], reward=2.0, done=False, info={"k": 1})
    obs, reward, done, info = ts
    assert (obs, reward, done, info) == ([1], 2.0, False, {"k": 1})
    assert len(ts) == 4 and ts[2] is False


def test_end_flags_are_explicit_and_consistent() -> None:
    assert BaseEnvTimestep(0, 0.0, True, {}).terminated is True
    truncated = BaseEnvTimestep(0, 0.0, True, {}, truncated=True)
    assert (truncated.terminated, truncated.truncated) == (False, True)
    with pytest.raises(ValueError, match="inconsistent timestep: done=False but terminated=True"):
        BaseEnvTimestep(0, 0.0, False, {}, terminated=True)


def test_replace_and_asdict() -> None:
    ts = BaseEnvTimestep(0, 1.0, False, {})
    assert ts._replace(obs=5).obs == 5 and ts.obs == 0
    assert ts._asdict() == {"obs": 0, "reward": 1.0, "done": False, "info": {}, "terminated": False, "truncated": False}
