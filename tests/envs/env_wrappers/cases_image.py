"""Shape-proof cases for the image wrappers."""

from tests.envs.env_wrappers.catalogue import ShapeCase

CASES = [
    ShapeCase("scaled_float_frame", "image_hwc"),
    ShapeCase("scaled_float_frame", "image_chw"),
    ShapeCase("scaled_float_frame", "dict_obs", {"fields": ["image"]}),
]
