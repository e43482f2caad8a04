"""The data-only codec: every kind of data a worker reports comes back equal; nothing else is written or read.

Refused payloads are real pickles a hostile peer could send: ones naming functions and classes that would run code
(each would create a marker file if it ran), plain pickles of ding's own values, and calls of the codec's own
constructors with arguments those constructors must refuse.
"""

from __future__ import annotations

import io
import os
import pickle
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_manager.core import codec
from ding.envs.env_manager.core.codec import DATA_ONLY, TRUSTED, NotDataError, RefusedDataError
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.replies import StepReply
from ding.envs.env_state import EnvStateToken
from ding.envs.values.conversion import ClippedBox
from ding.envs.values.spaces import EnvSpaces, shape_to_space
from ding.envs.values.timestep import BaseEnvTimestep
from tests.envs.env_manager.envs import assert_tree_equal

BOX = spaces.Box(-1.0, 2.0, (3,), np.float32)
SPACES: list[spaces.Space[Any]] = [
    BOX,
    spaces.Box(0, 255, (4, 4, 3), np.uint8),
    spaces.Box(np.array([-1.0, -np.inf]), np.array([1.0, np.inf]), dtype=np.float64),
    spaces.Discrete(5, start=-2),
    spaces.MultiDiscrete([3, 4], start=[1, 0]),
    spaces.MultiBinary((2, 3)),
    spaces.Dict({"pos": BOX, "id": spaces.Discrete(3)}),
    spaces.Tuple((BOX, spaces.Discrete(2))),
    spaces.Text(8, min_length=2, charset="abc"),
    spaces.Sequence(BOX, stack=True),
    spaces.Graph(BOX, spaces.Discrete(3)),
    spaces.OneOf((BOX, spaces.Discrete(2))),
    ClippedBox.of(BOX),
    shape_to_space({"a": (2,), "b": 3, "c": [2, 2]}),
]
VALUES: list[Any] = [
    None,
    True,
    -(2**70),
    float("inf"),
    1 + 2j,
    "text",
    b"\x00bytes",
    bytearray(b"mutable"),
    [1, (2, 3), {4: "four", "five": [5.0]}],
    {1, 2},
    frozenset({"a"}),
    np.float32(1.5),
    np.int8(-3),
    np.bool_(True),
    np.str_("word"),
    np.datetime64("2026-01-02T03:04", "ns"),
    np.zeros((2, 0, 3), np.float32),
    np.array(7, np.int64),
    np.arange(12, dtype=">i4").reshape(3, 4),
    np.arange(12, dtype=np.float64).reshape(3, 4)[:, ::2],  # not contiguous
    np.array([(1, 2.0)], dtype=[("a", "<i2"), ("b", "<f8")]),
    np.array(["ab", "c"]),
    np.ones(3, np.float16),
    np.array([True, False]),
    EnvSpaces(BOX, spaces.Discrete(2)),
    Failure.capture(3, "step", ValueError("bad")),
    Failure.died("gone"),
    StepReply(infos={0: {"eval_episode_return": np.ones(1, np.float32)}}, failures={1: Failure.timeout("slow")}),
    StepReply(steps={0: (np.zeros(2), 1.0)}, ready={1: {"obs": np.ones(2)}}, seq=2**40),
    EnvStateToken("CartPoleEnv", ("TimeLimit", "CartPoleEnv"), b"\x80opaque", b"bytes", b"seal"),
    BaseEnvTimestep(np.zeros(3, np.float32), np.ones(1, np.float32), True, {"x": 1}, truncated=True),
]


def same(a: Any, b: Any) -> None:
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, spaces.Space):
        assert a == b, (a, b)
    elif isinstance(a, (StepReply, BaseEnvTimestep)):
        fields = (
            ("infos", "failures", "steps", "ready", "seq") if isinstance(a, StepReply) else ("obs", "reward", "info")
        )
        for field in fields:
            assert_tree_equal(getattr(b, field), getattr(a, field), field)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b) and b.flags.writeable
    else:
        assert_tree_equal(b, a) if isinstance(a, (list, dict, tuple)) else None
        assert a == b or (a != a and b != b), (a, b)


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_data_comes_back_equal(value: Any) -> None:
    same(value, DATA_ONLY.loads(DATA_ONLY.dumps(value)))


@pytest.mark.parametrize("space", SPACES, ids=lambda s: type(s).__name__)
def test_spaces_come_back_equal_with_their_generators_state(space: spaces.Space[Any]) -> None:
    space.seed(7)
    back = DATA_ONLY.loads(DATA_ONLY.dumps(space))
    same(space, back)
    assert_tree_equal(back.sample(), space.sample(), "the next sample")  # the generator's state came along


def test_a_generator_of_each_bit_generator_comes_back_in_its_state() -> None:
    for bits in (np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937, np.random.Philox, np.random.SFC64):
        generator = np.random.Generator(bits(3))
        generator.random(5)
        back = DATA_ONLY.loads(DATA_ONLY.dumps(generator))
        assert back.random() == generator.random()


class Opaque:
    pass


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (Opaque(), "a tests.envs.env_manager.test_codec.Opaque"),
        (len, "the function builtins.len"),
        (Opaque, "the class tests.envs.env_manager.test_codec.Opaque"),
        (np.array([1, None], dtype=object), "a numpy.ndarray is not data (dtype object holds Python objects)"),
        (OrderedDict(a=1), "a collections.OrderedDict"),
        (np.ma.masked_array([1, 2]), "a numpy.ma.MaskedArray"),
        ({"nested": [{"deep": lambda: 0}]}, "the function tests.envs.env_manager.test_codec.<lambda>"),
    ],
)
def test_what_is_not_data_cannot_be_written(value: Any, named: str) -> None:
    with pytest.raises(NotDataError, match="^" + named.replace(".", r"\.").replace("(", r"\(").replace(")", r"\)")):
        DATA_ONLY.dumps(value)


class Bomb:
    """Unpickling this runs ``call(*args)``; every one here would create a marker file."""

    def __init__(self, call: Any, *args: Any) -> None:
        self.call, self.args = call, args

    def __reduce__(self) -> tuple[Any, ...]:
        return self.call, self.args


def crafted(marker: Path) -> dict[str, bytes]:
    """Pickles a hostile peer could send, each of which would run code (or name what is not data) if loaded."""
    return {
        "open": pickle.dumps(Bomb(open, str(marker), "w")),
        "os.system": pickle.dumps(Bomb(os.system, f"touch {marker}")),
        "eval": pickle.dumps(Bomb(eval, f"open({str(marker)!r}, 'w')")),
        "a ding value pickled plainly": pickle.dumps(StepReply(infos={0: {"x": Bomb(open, str(marker), "w")}})),
        "numpy's own array pickle": pickle.dumps(np.zeros(3)),
        "an object array": pickle.dumps(np.array([Bomb(open, str(marker), "w")], dtype=object)),
        "a space pickled plainly": pickle.dumps(BOX),
        "protocol 0": pickle.dumps(Bomb(open, str(marker), "w"), protocol=0),
    }


def test_payloads_that_name_anything_else_are_refused_before_anything_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    for what, payload in crafted(marker).items():
        with pytest.raises(RefusedDataError, match="refused a payload"):
            DATA_ONLY.loads(payload)
        assert not marker.exists(), what


class CallOwn(pickle.Pickler):
    """Writes a call of one of the codec's own constructors with arguments of the caller's choosing."""

    def __init__(self, file: io.BytesIO, name: str, args: tuple[Any, ...]) -> None:
        super().__init__(file, protocol=5)
        self.target, self.args = getattr(codec, name), args

    def reducer_override(self, obj: Any) -> Any:
        if obj is CallOwn.MARK:
            return self.target, self.args
        return NotImplemented

    MARK = object()


def own_call(name: str, *args: Any) -> bytes:
    buffer = io.BytesIO()
    CallOwn(buffer, name, args).dump(CallOwn.MARK)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "args", "reason"),
    [
        ("_dtype", ("O",), "dtype object, which holds Python objects"),
        ("_dtype", ([("a", "O")],), "holds Python objects"),
        ("_dtype", ({"names": ["a"]},), "a dtype description holding a dict"),
        ("_dtype", ("no such dtype",), "a bad dtype description"),
        ("_array", ("<f4", (2,), b"\x00" * 4), "4 bytes of array data for shape"),
        ("_array", ("<f4", (-1,), b""), "an array shape"),
        ("_array", ("<f4", (10**12,), b""), "0 bytes of array data"),
        ("_scalar", ("<f8", b"\x00"), "bytes of a scalar's data"),
        ("_complex", ("1", 2.0), "not floats"),
        ("_generator", ("Mersenne", {}), "a random generator 'Mersenne'"),
        ("_generator", ("PCG64", {"bit_generator": "MT19937"}), "a bad state of random generator PCG64"),
        ("_space", ("Evil", {}), "a space kind 'Evil'"),
        ("_space", ("Box", {"__class__": "Discrete"}), "attributes that are not a dict of plain names"),
        ("_failure", ("env", 1, 0, "", "", ""), "a failure whose fields are not of their types"),
        ("_failure", ("oops", "m", 0, "", "", ""), "a failure of kind 'oops'"),
        ("_step_reply", ({"0": {}}, {}, None, None, None), "step reply infos that are not a dict of env ids"),
        ("_step_reply", ({}, {0: "failure"}, None, None, None), "step reply failures"),
        ("_step_reply", ({}, {}, None, None, "7"), "a step reply whose step number is a str"),
        ("_env_spaces", (1, 2, 3), "env spaces that are not spaces"),
        ("_env_state", ("env", ["layer"], b"", b"", b""), "an env state token whose fields are not names and bytes"),
        ("_timestep", (0, 0, True, {}, False, False), "an inconsistent timestep"),
        ("_timestep", (0, 0, 1, {}, False, False), "flags are not bools"),
    ],
)
def test_the_codecs_own_constructors_check_their_arguments(name: str, args: tuple[Any, ...], reason: str) -> None:
    with pytest.raises(RefusedDataError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        DATA_ONLY.loads(own_call(name, *args))


@pytest.mark.parametrize("payload", [b"", b"\x80\x05", DATA_ONLY.dumps([1, 2, 3])[:-3], b"not a pickle at all"])
def test_truncated_or_foreign_bytes_are_refused(payload: bytes) -> None:
    with pytest.raises(RefusedDataError, match="refused a payload that does not decode as data"):
        DATA_ONLY.loads(payload)


def test_trusted_peers_keep_pickle() -> None:
    value = {"any": Opaque}
    assert TRUSTED.trusted and not DATA_ONLY.trusted
    assert TRUSTED.loads(TRUSTED.dumps(value)) == value
