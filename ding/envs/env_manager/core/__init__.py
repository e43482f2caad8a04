"""The batch core: the engine of the worker-based env managers, one state machine over a small channel protocol.

- :mod:`.channel`: the protocol a transport implements (open, start, send, poll, receive, stop, close, pids);
- :mod:`.failure`: the one failure value carried from a worker to the raised error;
- :mod:`.batch_core`: the engine, and a step's path out (actions to buffers, one wake-up per worker) and back
  (rows to timesteps, accounted once in the manager's ledger);
- :mod:`.groups`: which envs each worker holds; :mod:`.link`: the messages to and from the workers (step numbers,
  replies decoded, late or undecodable ones refused);
- :mod:`.workers`: launch, restarts and control commands (resets, seeds, videos, env calls);
- :mod:`.in_flight`: envs stepped but not yet received: partial batches and the send / recv API;
- :mod:`.results`: reading results from the step buffers (shared memory, or rows the replies carried);
- :mod:`.sequence`: the step number every step message carries and every step reply names;
- :mod:`.replies` and :mod:`.codec`: what a reply carries besides rows, and how it is encoded (pickle for the
  trainer's own workers, data only for zmq peers).
"""
