"""dm_control cartpole-swingup from pixels with continuous-action PPO and a conv encoder.

Observations are the last 3 gray 84x84 camera frames, channels first: ``(3, 84, 84)`` uint8 (the model scales them
to [0, 1] on its device), predicted by ``ding -m spec``; PPO's VAC model encodes them with a shared conv encoder
(the off-policy counterpart is ``cartpole_swingup_pixels_sac_config.py``). Each action is repeated for 8 control
steps (125 agent steps an episode).

Train with ``ding -m serial_onpolicy -c dizoo/dmc/config/cartpole_swingup_pixels_ppo_config.py -s 0``. Rendering
runs in software here (EGL or OSMesa), a few hundred frames a second at best, so training from pixels is slow on
CPU; this config has not been run to its stop value here.
"""

from easydict import EasyDict

cartpole_swingup_pixels_ppo_config = dict(
    exp_name="cartpole_swingup_pixels_ppo_seed0",
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
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=750,
        # PPO's Gaussian actions are unbounded: clip them into [-1, 1] (without this they are refused)
        env_wrapper=["continuous_action_clip"],
    ),
    policy=dict(
        cuda=False,
        action_space="continuous",
        model=dict(
            share_encoder=True,
            encoder_hidden_size_list=[32, 64, 64, 256],
            actor_head_hidden_size=256,
            critic_head_hidden_size=256,
            activation="relu",
            sigma_init=-0.5,
        ),
        learn=dict(
            epoch_per_collect=4,
            batch_size=128,
            learning_rate=0.0003,
            value_weight=0.5,
            entropy_weight=0.0,
            clip_ratio=0.2,
            adv_norm=True,
            grad_clip_value=0.5,
        ),
        collect=dict(n_sample=1000, unroll_len=1, discount_factor=0.99, gae_lambda=0.95),
        eval=dict(evaluator=dict(eval_freq=1000)),
    ),
)
cartpole_swingup_pixels_ppo_config = EasyDict(cartpole_swingup_pixels_ppo_config)
main_config = cartpole_swingup_pixels_ppo_config

cartpole_swingup_pixels_ppo_create_config = dict(
    env=dict(type="dmc", import_names=["dizoo.dmc.envs.dmc_env"]),
    env_manager=dict(type="subprocess"),
    policy=dict(type="ppo"),
)
cartpole_swingup_pixels_ppo_create_config = EasyDict(cartpole_swingup_pixels_ppo_create_config)
create_config = cartpole_swingup_pixels_ppo_create_config

if __name__ == "__main__":
    # or: ding -m serial_onpolicy -c cartpole_swingup_pixels_ppo_config.py -s 0
    from ding.entry import serial_pipeline_onpolicy

    raise SystemExit(serial_pipeline_onpolicy((main_config, create_config), seed=0).exit_status)
