"""The zmq channel: workers on this host, on other hosts or in Ray actors, reached over CURVE-secured ZeroMQ.

- :mod:`.protocol`: the wire format; :mod:`.keys`: CURVE keys and the authenticator; :mod:`.socket`: the
  manager's bound ROUTER socket;
- :mod:`.registry` and :mod:`.hub`: the manager's end (registered workers and liveness; requests and replies);
- :mod:`.worker`: the worker's end (``ding -m worker`` and the processes a manager starts);
- :mod:`.channel`: :class:`~.channel.ZmqChannel`, the core's channel protocol over the hub;
- :mod:`.placement`: where workers run (:class:`~.placement.ZmqPlacement`; local processes plus remote
  registration), :mod:`.ray_actors` and :mod:`.ray_worker`: workers in Ray actors;
- :mod:`.manager` and :mod:`.ray_manager`: ``ZmqEnvManager`` and ``RayZmqEnvManager``.
"""
