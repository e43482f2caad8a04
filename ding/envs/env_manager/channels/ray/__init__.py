"""Ray as a place for env workers: Ray starts, places and restarts them; a channel carries their messages.

- :mod:`.cluster`: joining (or starting) a Ray cluster, and leaving it as it was found;
- :mod:`.config`: the ray manager's settings and their checks;
- :mod:`.actors`: the workers' actors: what they ask Ray for, watching, killing and outliving them;
- :mod:`.call_channel` and :mod:`.call_worker`: transport ``"ray"``, one Ray call per message;
- :mod:`.actor_pipe` and :mod:`.actor_pipe_worker`: transport ``"shm"``, the pipe channel with actors on this node
  as its placement;
- :mod:`.manager`: ``RayEnvManager`` and ``RayShmEnvManager``, the batch core over those channels;
- :mod:`.transports`: which manager class runs each value of ``env.manager.transport``.

Nothing here imports Ray at import time: ding imports without it, and a ray manager asks for it when built.
"""
