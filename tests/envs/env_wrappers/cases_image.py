"""Shape-proof cases for the image wrappers."""

from tests.envs.env_wrappers.catalogue import ShapeCase

IMAGE = {"fields": ["image"]}

CASES = [
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
    # frame_crop
    ShapeCase("frame_crop", "image_hwc", {"top": 4, "left": 8, "height": 32, "width": 40}),
    ShapeCase("frame_crop", "image_chw", {"top": 10}),
    ShapeCase("frame_crop", "image_gray", {"left": 5, "width": 50}),
    ShapeCase("frame_crop", "dict_obs", {**IMAGE, "top": 8, "height": 32}),
    ShapeCase("frame_crop", "ale_pong", {"top": 34, "height": 160}),
    # gray_scale
    ShapeCase("gray_scale", "image_hwc"),
    ShapeCase("gray_scale", "image_hwc", {"keep_dim": True}),
    ShapeCase("gray_scale", "image_chw", {"keep_dim": True}),
    ShapeCase("gray_scale", "dict_obs", IMAGE),
    ShapeCase("gray_scale", "ale_pong", {"keep_dim": True, "channel_order": "hwc"}),
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
    # episodic_random_frame_crop
    ShapeCase("episodic_random_frame_crop", "image_hwc", {"height": 40, "width": 56}),
    ShapeCase("episodic_random_frame_crop", "image_chw", {"height": 32, "width": 32}),
    ShapeCase("episodic_random_frame_crop", "image_gray", {"height": 48, "width": 60}),
    ShapeCase("episodic_random_frame_crop", "image_lives", {"height": 20, "width": 30, "channel_order": "hwc"}),
    ShapeCase("episodic_random_frame_crop", "dict_obs", {**IMAGE, "height": 40, "width": 40}),
    ShapeCase("episodic_random_frame_crop", "ale_pong", {"height": 180, "width": 144}),
    # frame_stack
    ShapeCase("frame_stack", "vector"),
    ShapeCase("frame_stack", "vector_float64", {"n_frames": 3}),
    ShapeCase("frame_stack", "vector_box_action", {"n_frames": 1}),
    ShapeCase("frame_stack", "vector_reward", {"n_frames": 2}),
    ShapeCase("frame_stack", "image_hwc", {"n_frames": 2}),
    ShapeCase("frame_stack", "image_chw"),
    ShapeCase("frame_stack", "image_gray", {"n_frames": 6}),
    ShapeCase("frame_stack", "image_lives"),
    ShapeCase("frame_stack", "dict_obs", {"fields": ["image", "state.pos"], "n_frames": 3}),
    ShapeCase("frame_stack", "ale_pong", {"n_frames": 2}),
]
