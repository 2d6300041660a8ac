"""``notegate setup claude-code|codex``: connect a client in one step, and undo exactly that with --remove.

What each client gets, and where (README, "Set up a client"):

* a token file (``$XDG_CONFIG_HOME/notegate/token``): an existing one is used as it is; otherwise, given the
  server's ``--config``, a workstation token is minted for the environment's owner (restricted unless
  ``--tier trusted``), written before it is live (auth/tokens.issue_token);
* ``client.toml`` (url, token_file) where the hooks look for it;
* Claude Code: ``claude mcp add --scope user`` and the plugin (its hooks call this very ``notegate`` by its
  absolute path), through the real ``claude`` CLI when it is on PATH, else the exact commands are printed;
* Codex: a ``[mcp_servers.notegate]`` table appended to ``~/.codex/config.toml`` (the rest of the file kept
  byte for byte).

Everything done is journaled in ``$XDG_CONFIG_HOME/notegate/setup-CLIENT.json``; ``--remove`` replays that
journal backwards and touches nothing else: a file changed since is left where it is (and said so), a
folder is removed only if setup created it and it is empty. A step that fails undoes the steps before it.
"""
