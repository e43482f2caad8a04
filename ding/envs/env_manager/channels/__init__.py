"""Channels between the batch core and its workers: a pipe (``pipe``), ZeroMQ (``zmq``) and Ray calls (``ray``).

See :mod:`ding.envs.env_manager.core.channel` for the protocol they implement.
"""
