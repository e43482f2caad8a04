from dizoo.atari.envs.atari_env import AtariEnv, AtariEnvMR, atari_ram_chain

__all__ = ["AtariEnv", "AtariEnvMR", "atari_ram_chain"]
