"""The tools gateway (issue 32): the person's other MCP servers behind the one connector.

Layout: :mod:`.settings` the ``[tools]`` rows (pure); :mod:`.sealing` credentials sealed to the tools process;
:mod:`.tokens` the per-call tokens (minted by the knowledge service, verified by the tools process);
:mod:`.install` pinned entries installed offline from the local cache; :mod:`.upstream` one supervised
upstream per mount; :mod:`.app` the tools process (``notegate tools serve``); :mod:`.proxy` the knowledge
service's side (the MCP door's one hook). The decisions are in :mod:`notegate.policy.tools`. The theory of
operation is in docs/explanation/security-model.md, "The tools process".

Nothing is imported here: ``notegate.config`` reads :mod:`.settings` and must not pull in the rest.
"""
