"""Shape-proof cases for frame_crop and episodic_random_frame_crop."""

from tests.envs.env_wrappers.catalogue import ShapeCase

IMAGE = {"fields": ["image"]}

CASES = [
    # frame_crop
    ShapeCase("frame_crop", "image_hwc", {"top": 4, "left": 8, "height": 32, "width": 40}),
    ShapeCase("frame_crop", "image_chw", {"top": 10}),
    ShapeCase("frame_crop", "image_gray", {"left": 5, "width": 50}),
    ShapeCase("frame_crop", "dict_obs", {**IMAGE, "top": 8, "height": 32}),
    ShapeCase("frame_crop", "ale_pong", {"top": 34, "height": 160}),
    # episodic_random_frame_crop
    ShapeCase("episodic_random_frame_crop", "image_hwc", {"height": 40, "width": 56}),
    ShapeCase("episodic_random_frame_crop", "image_chw", {"height": 32, "width": 32}),
    ShapeCase("episodic_random_frame_crop", "image_gray", {"height": 48, "width": 60}),
    ShapeCase("episodic_random_frame_crop", "image_lives", {"height": 20, "width": 30, "channel_order": "hwc"}),
    ShapeCase("episodic_random_frame_crop", "dict_obs", {**IMAGE, "height": 40, "width": 40}),
    ShapeCase("episodic_random_frame_crop", "ale_pong", {"height": 180, "width": 144}),
]
