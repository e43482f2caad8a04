"""CartPole with on-policy PPO; the model's obs_shape and action_shape come from the env's declared spaces.

Train with ``ding -m serial_onpolicy -c dizoo/classic_control/cartpole/config/cartpole_ppo_config.py -s 0`` (or run
this file): it reaches the stop value (a mean return of 195 over 5 evaluation episodes) after about 1,000-10,000 env
steps, a few seconds on two CPU cores.
"""

from easydict import EasyDict

cartpole_ppo_config = dict(
    exp_name="cartpole_ppo_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=195,
    ),
    policy=dict(
        cuda=False,
        action_space="discrete",
        model=dict(encoder_hidden_size_list=[64, 64, 128], critic_head_hidden_size=128, actor_head_hidden_size=128),
        learn=dict(
            epoch_per_collect=10,
            batch_size=64,
            learning_rate=0.001,
            value_weight=0.5,
            entropy_weight=0.01,
            clip_ratio=0.2,
            adv_norm=True,
            grad_clip_value=0.5,
        ),
        collect=dict(n_sample=256, unroll_len=1, discount_factor=0.99, gae_lambda=0.95),
        eval=dict(evaluator=dict(eval_freq=100)),
    ),
)
cartpole_ppo_config = EasyDict(cartpole_ppo_config)
main_config = cartpole_ppo_config

cartpole_ppo_create_config = dict(
    env=dict(type="cartpole", import_names=["dizoo.classic_control.cartpole.envs.cartpole_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="ppo"),
)
cartpole_ppo_create_config = EasyDict(cartpole_ppo_create_config)
create_config = cartpole_ppo_create_config

if __name__ == "__main__":
    # or: ding -m serial_onpolicy -c cartpole_ppo_config.py -s 0
    from ding.entry import serial_pipeline_onpolicy

    raise SystemExit(serial_pipeline_onpolicy((main_config, create_config), seed=0).exit_status)
