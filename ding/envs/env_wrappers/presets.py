"""Named wrapper chains that ``cfg.env_wrapper`` may refer to.

``train`` selects the collector variant: some steps (life loss as episode end, reward clipping)
apply only while training, so evaluation reports the game's true return.

``atari_default`` delivers uint8 frames, ``(4, 84, 84)`` stacks in [0, 255]: models scale them to [0, 1] on
their device (:mod:`ding.model.obs_input`), so shared memory and replay buffers hold a quarter of float32's
bytes. Add ``scaled_float_frame`` before ``frame_stack`` in a chain of your own for float32 frames.
"""

from __future__ import annotations

from typing import Any

from ding.errors import UnknownNameError, unknown_name_message

PRESETS = ("default", "atari_default", "mujoco_default", "gym_hybrid_default")


def preset_chain(name: str, *, train: bool = True) -> list[Any]:
    """Return the wrapper items of a preset.

    >>> preset_chain('default')
    ['eval_episode_return']
    >>> preset_chain('atari_default', train=False)[-2:]
    [('warp_frame', {'size': 84}), ('frame_stack', {'n_frames': 4})]
    """
    if name == "default":
        return ["eval_episode_return"]
    if name == "atari_default":
        chain: list[Any] = [
            ("noop_reset", {"noop_max": 30}),
            ("max_and_skip", {"skip": 4}),
            "eval_episode_return",
        ]
        if train:
            chain.append("episodic_life")
        chain += ["fire_reset", ("warp_frame", {"size": 84})]
        if train:
            chain.append("clip_reward")
        chain.append(("frame_stack", {"n_frames": 4}))
        return chain
    if name == "mujoco_default":
        return ["eval_episode_return", "normalized_action"]
    if name == "gym_hybrid_default":
        return ["gym_hybrid_dict_action", "eval_episode_return"]
    raise UnknownNameError(unknown_name_message("wrapper preset", name, PRESETS))
