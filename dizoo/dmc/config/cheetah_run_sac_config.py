"""dm_control cheetah-run from states with SAC; shapes come from the env's declared spaces.

Train with ``ding -m serial -c dizoo/dmc/config/cheetah_run_sac_config.py -s 0`` (or run this file).
An episode is 1000 control steps (2-step action repeat: 500 agent steps). The stop value is about what SAC reaches
within 500k env steps; this config has not been run to it here.
"""

from easydict import EasyDict

cheetah_run_sac_config = dict(
    exp_name="cheetah_run_sac_seed0",
    env=dict(
        domain_name="cheetah",
        task_name="run",
        from_pixels=False,
        frame_skip=2,
        collector_env_num=1,
        evaluator_env_num=8,
        n_evaluator_episode=8,
        stop_value=700,
    ),
    policy=dict(
        cuda=False,
        random_collect_size=5000,
        model=dict(twin_critic=True, actor_head_hidden_size=256, critic_head_hidden_size=256),
        learn=dict(
            update_per_collect=1,
            batch_size=256,
            learning_rate_q=0.0003,
            learning_rate_policy=0.0003,
            learning_rate_alpha=0.0003,
            alpha=0.1,
            auto_alpha=True,
            target_theta=0.005,
            discount_factor=0.99,
        ),
        collect=dict(n_sample=1),
        eval=dict(evaluator=dict(eval_freq=5000)),
        other=dict(replay_buffer=dict(replay_buffer_size=1000000)),
    ),
)
cheetah_run_sac_config = EasyDict(cheetah_run_sac_config)
main_config = cheetah_run_sac_config

cheetah_run_sac_create_config = dict(
    env=dict(type="dmc", import_names=["dizoo.dmc.envs.dmc_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="sac"),
)
cheetah_run_sac_create_config = EasyDict(cheetah_run_sac_create_config)
create_config = cheetah_run_sac_create_config

if __name__ == "__main__":
    # or: ding -m serial -c cheetah_run_sac_config.py -s 0
    from ding.entry import serial_pipeline

    raise SystemExit(serial_pipeline((main_config, create_config), seed=0).exit_status)
