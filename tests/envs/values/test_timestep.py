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


def test_namedtuple_api_of_di_engine() -> None:
    import numpy as np

    assert BaseEnvTimestep._fields == ("obs", "reward", "done", "info")
    ts = BaseEnvTimestep._make([1, 2.0, True, {"a": 1}])
    assert ts[:2] == (1, 2.0) and ts.terminated is True
    assert dict(zip(BaseEnvTimestep._fields, ts, strict=True)) == {
        "obs": 1,
        "reward": 2.0,
        "done": True,
        "info": {"a": 1},
    }
    with pytest.raises(TypeError, match=r"_make takes \(obs, reward, done, info\), got 3 values"):
        BaseEnvTimestep._make([1, 2.0, True])
    assert BaseEnvTimestep(**ts._replace(truncated=True, terminated=False)._asdict()).truncated is True
    flags = BaseEnvTimestep(0, 0.0, np.bool_(True), {}, truncated=np.array([False]))  # type: ignore[arg-type]
    assert (type(flags.done), type(flags.truncated), flags.terminated) == (bool, bool, True)


def test_replace_done_rederives_the_end_flags() -> None:
    running = BaseEnvTimestep(0, 0.0, False, {})
    assert (running._replace(done=True).terminated, running._replace(done=True).truncated) == (True, False)
    cut = BaseEnvTimestep(0, 0.0, True, {}, truncated=True)
    assert (cut._replace(done=False).terminated, cut._replace(done=False).truncated) == (False, False)
    assert cut._replace(obs=1).truncated is True


@pytest.mark.parametrize("done", [1, None, "yes", [True]])
def test_flags_must_be_bools(done: object) -> None:
    with pytest.raises(TypeError, match=r"BaseEnvTimestep\.done must be a bool, got"):
        BaseEnvTimestep(0, 0.0, done, {})  # type: ignore[arg-type]


def test_each_timestep_gets_its_own_info_and_stays_immutable() -> None:
    import dataclasses
    import pickle

    first, second = BaseEnvTimestep(0, 0.0, False), BaseEnvTimestep(0, 0.0, False)
    assert first.info == {} and first.info is not second.info
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.obs = 1  # type: ignore[misc]
    restored = pickle.loads(pickle.dumps(BaseEnvTimestep(1, 2.0, True, {"a": 1}, truncated=True)))
    assert restored == BaseEnvTimestep(1, 2.0, True, {"a": 1}, truncated=True) and restored.truncated is True
