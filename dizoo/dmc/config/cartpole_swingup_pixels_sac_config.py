"""dm_control cartpole-swingup from pixels with SAC; its actor and critics encode frames with convolutions.

Observations are the last 3 gray 84x84 camera frames, channels first: ``(3, 84, 84)`` uint8 (the model scales them
to [0, 1] on its device), predicted by ``ding -m spec``. Each action is repeated for 8 control steps. The replay
buffer holds 10,000 transitions of uint8 frames (a quarter of float32's bytes). Rendering runs in software on CPU-
only machines, so training from pixels is slow there; this config has not been run to its stop value here.

Train with ``ding -m serial -c dizoo/dmc/config/cartpole_swingup_pixels_sac_config.py -s 0`` (or run this file).
"""

from easydict import EasyDict

cartpole_swingup_pixels_sac_config = dict(
    exp_name="cartpole_swingup_pixels_sac_seed0",
    env=dict(
        domain_name="cartpole",
        task_name="swingup",
        from_pixels=True,
        height=84,
        width=84,
        camera_id=0,
        channels_first=True,
        grayscale=True,
        frame_stack=3,
        frame_skip=8,
        collector_env_num=1,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=750,
    ),
    policy=dict(
        cuda=False,
        random_collect_size=1000,
        model=dict(
            twin_critic=True,
            encoder_hidden_size_list=[32, 32, 32, 50],
            actor_head_hidden_size=256,
            critic_head_hidden_size=256,
        ),
        learn=dict(
            update_per_collect=1,
            batch_size=128,
            learning_rate_q=0.0003,
            learning_rate_policy=0.0003,
            learning_rate_alpha=0.0003,
            alpha=0.1,
            auto_alpha=True,
            target_theta=0.01,
            discount_factor=0.99,
        ),
        collect=dict(n_sample=1),
        eval=dict(evaluator=dict(eval_freq=2000)),
        other=dict(replay_buffer=dict(replay_buffer_size=10000)),
    ),
)
cartpole_swingup_pixels_sac_config = EasyDict(cartpole_swingup_pixels_sac_config)
main_config = cartpole_swingup_pixels_sac_config

cartpole_swingup_pixels_sac_create_config = dict(
    env=dict(type="dmc", import_names=["dizoo.dmc.envs.dmc_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="sac"),
)
cartpole_swingup_pixels_sac_create_config = EasyDict(cartpole_swingup_pixels_sac_create_config)
create_config = cartpole_swingup_pixels_sac_create_config

if __name__ == "__main__":
    # or: ding -m serial -c cartpole_swingup_pixels_sac_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)
