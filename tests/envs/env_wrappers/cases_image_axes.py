"""Shape-proof cases for image_channel_first, obs_transpose and frame_flip."""

from tests.envs.env_wrappers.catalogue import ShapeCase

IMAGE = {"fields": ["image"]}

CASES = [
    # image_channel_first
    ShapeCase("image_channel_first", "image_hwc"),
    ShapeCase("image_channel_first", "image_gray"),
    ShapeCase("image_channel_first", "image_lives"),
    ShapeCase("image_channel_first", "dict_obs", IMAGE),
    ShapeCase("image_channel_first", "ale_pong"),
    # obs_transpose
    ShapeCase("obs_transpose", "image_hwc"),
    ShapeCase("obs_transpose", "image_gray"),
    ShapeCase("obs_transpose", "dict_obs", IMAGE),
    ShapeCase("obs_transpose", "ale_breakout"),
    # frame_flip
    ShapeCase("frame_flip", "image_hwc"),
    ShapeCase("frame_flip", "image_chw", {"vertical": True}),
    ShapeCase("frame_flip", "image_gray", {"horizontal": False, "vertical": True}),
    ShapeCase("frame_flip", "dict_obs", {**IMAGE, "vertical": True}),
    ShapeCase("frame_flip", "ale_pong"),
]
