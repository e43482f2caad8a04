"""Shape-proof cases for frame_stack."""

from tests.envs.env_wrappers.catalogue import ShapeCase

CASES = [
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
