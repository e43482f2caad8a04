"""BipedalWalker with SAC; obs_shape (24) and action_shape (4) come from the env's declared spaces.

Train with ``ding -m serial -c dizoo/box2d/bipedalwalker/config/bipedalwalker_sac_config.py -s 0`` (or run this
file). The stop value 300 is gymnasium's reward threshold for BipedalWalker-v3; set ``hardcore=True`` for the
obstacle course.
"""

from easydict import EasyDict

bipedalwalker_sac_config = dict(
    exp_name="bipedalwalker_sac_seed0",
    env=dict(
        collector_env_num=8,
        evaluator_env_num=5,
        n_evaluator_episode=5,
        stop_value=300,
        hardcore=False,
    ),
    policy=dict(
        cuda=False,
        random_collect_size=10000,
        model=dict(twin_critic=True, actor_head_hidden_size=256, critic_head_hidden_size=256),
        learn=dict(
            update_per_collect=64,
            batch_size=256,
            learning_rate_q=0.0003,
            learning_rate_policy=0.0003,
            learning_rate_alpha=0.0003,
            alpha=0.2,
            auto_alpha=True,
            target_theta=0.005,
            discount_factor=0.99,
        ),
        collect=dict(n_sample=64),
        eval=dict(evaluator=dict(eval_freq=2000)),
        other=dict(replay_buffer=dict(replay_buffer_size=300000)),
    ),
)
bipedalwalker_sac_config = EasyDict(bipedalwalker_sac_config)
main_config = bipedalwalker_sac_config

bipedalwalker_sac_create_config = dict(
    env=dict(type="bipedalwalker", import_names=["dizoo.box2d.bipedalwalker.envs.bipedalwalker_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="sac"),
)
bipedalwalker_sac_create_config = EasyDict(bipedalwalker_sac_create_config)
create_config = bipedalwalker_sac_create_config

if __name__ == "__main__":
    # or: ding -m serial -c bipedalwalker_sac_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)
