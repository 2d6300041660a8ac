"""The LiveSync door: Obsidian's Self-hosted LiveSync plugin on each device, through a gate in front of CouchDB.

* :mod:`~notegate.livesync.settings` -- the ``[livesync]`` table.
* :mod:`~notegate.livesync.keys` -- a device's key pair and the Setup URI that carries its private key, once.
* :mod:`~notegate.livesync.gate` -- the ASGI gate: verifies each device's token with that device's key only,
  forwards only what replication needs on the one notes database (``notegate.policy.livesync`` decides).

The decisions are in :mod:`notegate.policy.livesync` (pure); the device rows in :mod:`notegate.state.livesync`.
"""
