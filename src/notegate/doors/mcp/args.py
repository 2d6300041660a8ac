"""The argument types and annotations the MCP tools share: what a model reads about each argument.

Why in one place: the same argument (environment, base_revision, confirmed, …) must read the same in
every tool, and a description changed here changes it everywhere at once.
"""

from __future__ import annotations

from typing import Annotated

from mcp_types import ToolAnnotations
from pydantic import Field

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITE_IDEMPOTENT = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
#: Holding an item changes only inbox/_held.md and the item can be promoted once it changes: nothing is lost.
HOLD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
APPEND = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
SESSION = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)

EnvArg = Annotated[str | None, Field(description="Vault environment; omit to use your default.")]
BaseArg = Annotated[
    str,
    Field(description="The revision your change is based on, as returned by read_note; 'absent' for a new note."),
]
SecretArg = Annotated[
    bool,
    Field(description="Trusted callers only: commit even though the text looks like it holds a credential."),
]
ConfirmArg = Annotated[
    bool,
    Field(description="false (default): preview only, nothing is written. true: commit and push the previewed change."),
]
HandleArg = Annotated[
    str | None,
    Field(
        description="Hosted clients only (others may omit it): the handle session_start returned. "
        "Call session_start first."
    ),
]
GrantArg = Annotated[
    str | None,
    Field(
        description="Only after request_elevation, once the owner approved it: the grant it returned, which "
        "makes this call trusted. Omit it otherwise."
    ),
]
