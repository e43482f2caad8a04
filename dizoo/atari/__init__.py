"""The Atari suite: any ALE game through ale-py, with DQN configs for Pong, Breakout, Q*bert and Space Invaders."""
