"""Shape-proof cases for scaled_float_frame, warp_frame, frame_resize and gray_scale."""

from tests.envs.env_wrappers.catalogue import ShapeCase

IMAGE = {"fields": ["image"]}

CASES = [
    # scaled_float_frame
    ShapeCase("scaled_float_frame", "image_hwc"),
    ShapeCase("scaled_float_frame", "image_chw"),
    ShapeCase("scaled_float_frame", "image_gray"),
    ShapeCase("scaled_float_frame", "dict_obs", {"fields": ["image"]}),
    # warp_frame
    ShapeCase("warp_frame", "image_hwc"),
    ShapeCase("warp_frame", "image_chw"),
    ShapeCase("warp_frame", "image_gray", {"size": 32}),
    ShapeCase("warp_frame", "image_hwc", {"size": 32, "grayscale": False}),
    ShapeCase("warp_frame", "image_chw", {"size": 40, "grayscale": False, "channel_order": "chw"}),
    ShapeCase("warp_frame", "image_lives", {"size": 24}),
    ShapeCase("warp_frame", "dict_obs", {**IMAGE, "size": 24}),
    ShapeCase("warp_frame", "ale_pong"),
    ShapeCase("warp_frame", "ale_breakout", {"size": 64, "grayscale": False}),
    # frame_resize
    ShapeCase("frame_resize", "image_hwc", {"height": 30, "width": 40}),
    ShapeCase("frame_resize", "image_chw", {"height": 24, "width": 20, "interpolation": "cubic"}),
    ShapeCase("frame_resize", "image_gray", {"height": 96, "width": 128, "interpolation": "nearest"}),
    ShapeCase("frame_resize", "dict_obs", {**IMAGE, "height": 16, "width": 16, "interpolation": "linear"}),
    ShapeCase("frame_resize", "ale_pong", {"height": 105, "width": 80}),
    # gray_scale
    ShapeCase("gray_scale", "image_hwc"),
    ShapeCase("gray_scale", "image_hwc", {"keep_dim": True}),
    ShapeCase("gray_scale", "image_chw", {"keep_dim": True}),
    ShapeCase("gray_scale", "dict_obs", IMAGE),
    ShapeCase("gray_scale", "ale_pong", {"keep_dim": True, "channel_order": "hwc"}),
]
