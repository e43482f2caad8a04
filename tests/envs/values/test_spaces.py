import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.values.spaces import EnvSpaces, shape_to_space, space_nbytes, space_to_shape

NESTED = spaces.Dict(
    {
        "img": spaces.Box(0, 255, (2, 3, 3), np.uint8),
        "t": spaces.Tuple((spaces.Discrete(4), spaces.MultiDiscrete([2, 3]))),
    }
)


def test_shapes_follow_di_engine_conventions() -> None:
    assert space_to_shape(spaces.Discrete(6)) == 6
    assert space_to_shape(spaces.MultiDiscrete([3, 4])) == [3, 4]
    assert space_to_shape(spaces.MultiBinary(5)) == (5,)
    assert space_to_shape(NESTED) == {"img": (2, 3, 3), "t": (4, [2, 3])}


def test_shape_to_space_inverts_space_to_shape() -> None:
    for shape in [6, [3, 4], (2, 3), {"a": (1,), "b": 2}, ((2,), 3)]:
        assert space_to_shape(shape_to_space(shape)) == shape
    with pytest.raises(TypeError, match="cannot interpret 'x' as a shape"):
        shape_to_space("x")  # type: ignore[arg-type]


def test_nbytes_count_each_leaf_in_its_own_dtype() -> None:
    assert space_nbytes(NESTED) == 18 + 8 + 16  # uint8 image, int64 Discrete, two int64 MultiDiscrete entries


def test_env_spaces_value_semantics() -> None:
    a = EnvSpaces(spaces.Box(0, 1, (3,)), spaces.Discrete(2))
    assert a == EnvSpaces(spaces.Box(0, 1, (3,)), spaces.Discrete(2))
    assert a.replace(action=spaces.Discrete(3)) != a
    assert a.shapes == ((3,), 2, (1,))
