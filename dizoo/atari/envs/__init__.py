from dizoo.atari.envs.atari_env import AtariEnv, atari_ram_chain

__all__ = ["AtariEnv", "atari_ram_chain"]
