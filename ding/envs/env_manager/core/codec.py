"""How a worker's answers are encoded for the trainer: pickle for trusted workers, data only for the others.

Workers the trainer starts itself over pipes, or runs in its own threads, are the same user running the same
code: their answers are pickled (:data:`TRUSTED`). A zmq worker is a peer holding a worker key, on this host or
another; it may send data, never code (:data:`DATA_ONLY`):

- ``None``, bools, ints, floats, complex numbers, strings, bytes and bytearrays;
- lists, tuples, dicts, sets and frozensets of those;
- NumPy arrays and scalars of any dtype but object (structured dtypes included);
- gymnasium spaces of the standard kinds and ding's own (``ClippedBox``, the placeholders), with the state of
  their random generators;
- the values replies carry: :class:`~.replies.StepReply`, :class:`~.failure.Failure`,
  :class:`~ding.envs.values.spaces.EnvSpaces`, :class:`~ding.envs.values.timestep.BaseEnvTimestep` and
  :class:`~ding.envs.env_state.EnvStateToken` (names and opaque bytes).

The container is pickle (protocol 5). The writer refuses any other object (:class:`NotDataError`, naming its
type) and turns every allowed value that is not a builtin into a call of one of this module's constructors; the
reader's ``find_class`` admits those constructors and nothing else, and each constructor checks its arguments.
A payload that names any other global (a class, ``os.system``, ``builtins.eval``) is refused
(:class:`RefusedDataError`) before anything is called.

>>> import numpy as np
>>> value = {"return": np.float32(2.5), "ids": (1, 2), "frame": np.eye(2, dtype=np.uint8)}
>>> back = DATA_ONLY.loads(DATA_ONLY.dumps(value))
>>> back["return"].dtype.name, float(back["return"]), back["ids"], back["frame"].tolist()
('float32', 2.5, (1, 2), [[1, 0], [0, 1]])
>>> try:
...     DATA_ONLY.dumps({"handle": len})
... except NotDataError as err:
...     print(err.what)
the function builtins.len
>>> import pickle
>>> try:
...     DATA_ONLY.loads(pickle.dumps(len))
... except RefusedDataError as err:
...     print(str(err).split(";")[0])
refused a payload that names builtins.len
"""

from __future__ import annotations

import io
import math
import pickle
from collections.abc import Callable, Mapping
from typing import Any, Protocol, cast

import numpy as np
from gymnasium import spaces

from ding.envs.env_manager.core.failure import Failure, FailureKind
from ding.envs.env_manager.core.replies import StepReply
from ding.envs.env_state import EnvStateToken
from ding.envs.values.conversion import ClippedBox
from ding.envs.values.spaces import EnvSpaces, PlaceholderBox, PlaceholderDiscrete, PlaceholderMultiDiscrete
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import DingError

PROTOCOL = 5
ACCEPTED = (
    "None, bools, numbers, strings, bytes, lists, tuples, dicts, sets, NumPy arrays and scalars (not of object "
    "dtype), gymnasium spaces, and ding's StepReply, Failure, EnvSpaces, BaseEnvTimestep and EnvStateToken"
)


class NotDataError(DingError, TypeError):
    """A value a data-only peer cannot send: it is not one of the kinds the codec carries."""

    def __init__(self, value: object, why: str = "") -> None:
        kind = type(value)
        self.type_name = f"{kind.__module__}.{kind.__qualname__}"
        name = _global_name(value)
        if isinstance(value, type):
            self.what = f"the class {name}"
        elif name and callable(value):
            self.what = f"the function {name}"
        else:
            self.what = f"a {self.type_name}"
        super().__init__(f"{self.what} is not data{why}; data is {ACCEPTED}")


class RefusedDataError(DingError, ValueError):
    """Bytes a data-only reader refuses: not the codec's encoding, or naming something that is not data."""


class Codec(Protocol):
    """How a channel's workers encode their answers (``dumps``) and how the core decodes them (``loads``)."""

    trusted: bool
    """Whether the workers are trusted with code (their answers are pickled)."""

    def dumps(self, value: Any) -> bytes: ...

    def loads(self, data: bytes) -> Any: ...


class PickleCodec:
    """Pickle: workers of the trainer's own user and code (pipes, threads, Ray actors of its cluster)."""

    trusted = True

    def dumps(self, value: Any) -> bytes:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)

    def loads(self, data: bytes) -> Any:
        return pickle.loads(data)


class DataCodec:
    """Data only (see the module docstring): zmq workers, which hold a key but are not trusted with code."""

    trusted = False

    def dumps(self, value: Any) -> bytes:
        """The encoding of ``value``; :class:`NotDataError` names the first object that is not data."""
        buffer = io.BytesIO()
        _DataPickler(buffer, protocol=PROTOCOL).dump(value)
        return buffer.getvalue()

    def loads(self, data: bytes) -> Any:
        """The value ``data`` encodes; anything else raises :class:`RefusedDataError` (nothing is executed)."""
        try:
            return _DataUnpickler(io.BytesIO(data)).load()
        except RefusedDataError:
            raise
        except Exception as err:  # any malformed input: truncated, wrong opcodes, a constructor's check
            raise RefusedDataError(
                f"refused a payload that does not decode as data: {type(err).__name__}: {err}"
            ) from None


TRUSTED = PickleCodec()
DATA_ONLY = DataCodec()


def _global_name(value: object) -> str:
    module, name = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
    return f"{module}.{name}" if isinstance(module, str) and isinstance(name, str) else ""


# ----- encoding ------------------------------------------------------------------------------------


def _dtype_descr(dtype: np.dtype[Any]) -> str | list[Any]:
    """A dtype as data: its string for simple dtypes, its ``descr`` for structured or sub-array ones."""
    if dtype.hasobject:
        raise NotDataError(np.empty(0, dtype), f" (dtype {dtype} holds Python objects)")
    return dtype.str if dtype.fields is None and dtype.subdtype is None else dtype.descr


def _encode_array(array: np.ndarray) -> tuple[Any, ...]:
    descr = _dtype_descr(array.dtype)
    if array.nbytes == 0:
        return _array, (descr, tuple(array.shape), b"")
    flat = np.ascontiguousarray(array).reshape(-1).view(np.uint8)  # no copy when the array is contiguous
    return _array, (descr, tuple(array.shape), pickle.PickleBuffer(cast(Any, flat)))


def _encode_scalar(value: np.generic) -> tuple[Any, ...]:
    return _scalar, (_dtype_descr(value.dtype), np.asarray(value).tobytes())


def _encode_space(space: spaces.Space[Any]) -> tuple[Any, ...]:
    return _space, (type(space).__name__, dict(vars(space)))


def _encode_generator(generator: np.random.Generator) -> tuple[Any, ...]:
    bits = generator.bit_generator
    return _generator, (type(bits).__name__, bits.state)


def _encode_failure(failure: Failure) -> tuple[Any, ...]:
    fields = (failure.message, failure.env_id, failure.operation, failure.exc_type, failure.traceback_text)
    return _failure, (failure.kind.value, *fields)


_ENCODERS: dict[type, Callable[[Any], tuple[Any, ...]]] = {
    np.ndarray: _encode_array,
    complex: lambda value: (_complex, (value.real, value.imag)),
    np.random.Generator: _encode_generator,
    StepReply: lambda reply: (_step_reply, (reply.infos, reply.failures, reply.steps, reply.ready, reply.seq)),
    Failure: _encode_failure,
    EnvSpaces: lambda env_spaces: (_env_spaces, (env_spaces.observation, env_spaces.action, env_spaces.reward)),
    EnvStateToken: lambda token: (_env_state, (token.env, token.layers, token.simulator, token.data, token.seal)),
    BaseEnvTimestep: lambda t: (_timestep, (t.obs, t.reward, t.done, t.info, t.terminated, t.truncated)),
}


class _DataPickler(pickle.Pickler):
    """A pickler that writes data only (see the module docstring)."""

    def reducer_override(self, obj: Any) -> Any:  # called for every object but the builtin atoms and containers
        kind = type(obj)
        encode = _ENCODERS.get(kind)
        if encode is not None:
            return encode(obj)
        if kind in _SPACES_BY_TYPE:
            return _encode_space(obj)
        if isinstance(obj, np.generic):
            return _encode_scalar(obj)
        if isinstance(obj, np.dtype):
            return _dtype, (_dtype_descr(obj),)
        if id(obj) in _CONSTRUCTOR_IDS:  # the constructors named by the reductions above
            return NotImplemented
        raise NotDataError(obj)


# ----- decoding: the only globals a payload may name -----------------------------------------------


def _refuse(what: str) -> RefusedDataError:
    return RefusedDataError(f"refused a payload with {what}")


def _check_descr(descr: Any, depth: int = 0) -> None:
    """A dtype description made of strings, ints and nested lists / tuples only (nothing ``np.dtype`` would call)."""
    if depth > 32:
        raise _refuse("a dtype description nested too deep")
    if isinstance(descr, str) or (type(descr) is int and not isinstance(descr, bool)):
        return
    if isinstance(descr, (list, tuple)):
        for part in descr:
            _check_descr(part, depth + 1)
        return
    raise _refuse(f"a dtype description holding a {type(descr).__name__}")


def _dtype(descr: Any) -> np.dtype[Any]:
    _check_descr(descr)
    try:
        dtype = np.dtype(descr)
    except (TypeError, ValueError) as err:
        raise _refuse(f"a bad dtype description {descr!r:.100}: {err}") from None
    if dtype.hasobject:
        raise _refuse(f"dtype {dtype}, which holds Python objects")
    return dtype


def _array(descr: Any, shape: Any, data: Any) -> np.ndarray:
    dtype = _dtype(descr)
    if not isinstance(shape, tuple) or not all(type(d) is int and d >= 0 for d in shape):
        raise _refuse(f"an array shape {shape!r:.100}")
    if not isinstance(data, (bytes, bytearray)):
        raise _refuse(f"array data of type {type(data).__name__}")
    count = math.prod(shape)
    if len(data) != count * dtype.itemsize:
        raise _refuse(f"{len(data)} bytes of array data for shape {shape} of {dtype}")
    if count == 0 or dtype.itemsize == 0:  # no bytes: nothing to read, and an empty array holds no memory
        return np.empty(shape, dtype)
    array = np.frombuffer(data, dtype=dtype, count=count).reshape(shape)
    return array if array.flags.writeable else array.copy()


def _scalar(descr: Any, data: Any) -> np.generic:
    dtype = _dtype(descr)
    if not isinstance(data, bytes) or len(data) != dtype.itemsize or dtype.itemsize == 0:
        raise _refuse(f"{type(data).__name__} of a scalar's data for {dtype}")
    value: np.generic = np.frombuffer(data, dtype=dtype)[0]
    return value


def _complex(real: Any, imag: Any) -> complex:
    if type(real) is not float or type(imag) is not float:
        raise _refuse("a complex number of parts that are not floats")
    return complex(real, imag)


_BIT_GENERATORS = {
    cls.__name__: cls
    for cls in (np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937, np.random.Philox, np.random.SFC64)
}


def _generator(name: Any, state: Any) -> np.random.Generator:
    bit_generator = _BIT_GENERATORS.get(name) if isinstance(name, str) else None
    if bit_generator is None or not isinstance(state, dict):
        raise _refuse(f"a random generator {name!r:.100}; known: {', '.join(_BIT_GENERATORS)}")
    bits = bit_generator()
    try:
        bits.state = cast(Any, state)
    except (TypeError, ValueError, KeyError) as err:
        raise _refuse(f"a bad state of random generator {name}: {err}") from None
    return np.random.Generator(bits)


_SPACE_TYPES: tuple[type[spaces.Space[Any]], ...] = (
    spaces.Box,
    spaces.Discrete,
    spaces.MultiDiscrete,
    spaces.MultiBinary,
    spaces.Dict,
    spaces.Tuple,
    spaces.Text,
    spaces.Sequence,
    spaces.Graph,
    spaces.OneOf,
    ClippedBox,
    PlaceholderBox,
    PlaceholderDiscrete,
    PlaceholderMultiDiscrete,
)
_SPACES_BY_NAME: dict[str, type[spaces.Space[Any]]] = {cls.__name__: cls for cls in _SPACE_TYPES}
_SPACES_BY_TYPE = frozenset(_SPACE_TYPES)


def _space(name: Any, attributes: Any) -> spaces.Space[Any]:
    """A space of a known kind with the attributes it had (a space's state is data: arrays, dtypes, generators)."""
    cls = _SPACES_BY_NAME.get(name) if isinstance(name, str) else None
    if cls is None:
        raise _refuse(f"a space kind {name!r:.100}; known: {', '.join(_SPACES_BY_NAME)}")
    if not isinstance(attributes, dict) or not all(isinstance(k, str) and not k.startswith("__") for k in attributes):
        raise _refuse(f"{name} attributes that are not a dict of plain names")
    space = cls.__new__(cls)
    space.__dict__.update(attributes)
    return space


def _failure(kind: Any, message: Any, env_id: Any, operation: Any, exc_type: Any, traceback_text: Any) -> Failure:
    texts = (message, operation, exc_type, traceback_text)
    if not isinstance(kind, str) or type(env_id) is not int or not all(isinstance(t, str) for t in texts):
        raise _refuse("a failure whose fields are not of their types")
    try:
        failure_kind = FailureKind(kind)
    except ValueError:
        raise _refuse(f"a failure of kind {kind!r:.100}") from None
    return Failure(failure_kind, message, env_id, operation, exc_type, traceback_text)


def _by_env(value: Any, what: str, check: Callable[[Any], bool] = lambda _: True) -> Any:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(type(k) is int and check(v) for k, v in value.items()):
        raise _refuse(f"step reply {what} that are not a dict of env ids to their values")
    return value


def _step_reply(infos: Any, failures: Any, steps: Any, ready: Any, seq: Any) -> StepReply:
    if seq is not None and type(seq) is not int:
        raise _refuse(f"a step reply whose step number is a {type(seq).__name__}")
    return StepReply(
        seq=seq,
        infos=_by_env(infos, "infos", lambda info: isinstance(info, dict)) or {},
        failures=_by_env(failures, "failures", lambda failure: isinstance(failure, Failure)) or {},
        steps=_by_env(steps, "steps", lambda step: isinstance(step, tuple) and len(step) == 2),
        ready=_by_env(ready, "ready observations"),
    )


def _env_spaces(observation: Any, action: Any, reward: Any) -> EnvSpaces:
    if not all(isinstance(space, spaces.Space) for space in (observation, action, reward)):
        raise _refuse("env spaces that are not spaces")
    return EnvSpaces(observation, action, reward)


def _env_state(env: Any, layers: Any, simulator: Any, data: Any, seal: Any) -> EnvStateToken:
    names_ok = isinstance(env, str) and isinstance(layers, tuple) and all(isinstance(n, str) for n in layers)
    if not names_ok or not all(isinstance(field, bytes) for field in (simulator, data, seal)):
        raise _refuse("an env state token whose fields are not names and bytes")
    return EnvStateToken(env, layers, simulator, data, seal)


def _timestep(obs: Any, reward: Any, done: Any, info: Any, terminated: Any, truncated: Any) -> BaseEnvTimestep:
    if not isinstance(info, dict) or not all(type(flag) is bool for flag in (done, terminated, truncated)):
        raise _refuse("a timestep whose info is not a dict or whose flags are not bools")
    try:
        return BaseEnvTimestep(obs, reward, done, info, terminated=terminated, truncated=truncated)
    except ValueError as err:
        raise _refuse(f"an inconsistent timestep: {err}") from None


_CONSTRUCTORS: Mapping[str, Callable[..., Any]] = {
    function.__name__: function
    for function in (
        _dtype,
        _array,
        _scalar,
        _complex,
        _generator,
        _space,
        _failure,
        _step_reply,
        _env_spaces,
        _env_state,
        _timestep,
    )
}
_CONSTRUCTOR_IDS = frozenset(id(function) for function in _CONSTRUCTORS.values())


class _DataUnpickler(pickle.Unpickler):
    """An unpickler whose only globals are this module's constructors."""

    def find_class(self, module: str, name: str) -> Any:
        if module == __name__ and name in _CONSTRUCTORS:
            return _CONSTRUCTORS[name]
        raise RefusedDataError(f"refused a payload that names {module}.{name}; data-only peers send {ACCEPTED}")

    def persistent_load(self, pid: Any) -> Any:
        raise RefusedDataError("refused a payload with a persistent id")
