"""The MCP door: thin tools over the services; refusals become ToolErrors the model can read.

Layout: :mod:`.server` wires one MCPServer; :mod:`.caller` decides who calls; :mod:`.calls` is the one
path from a tool to a service (keyword arguments only); :mod:`.args` and :mod:`.results` are the wire
shapes; :mod:`.refusals` turns refusals into readable ToolErrors; ``tools_*`` hold the tools by area.
"""

from notegate.doors.mcp.caller import SESSION_HEADER, SESSION_LABEL, CallerResolver, session_label
from notegate.doors.mcp.prompts import REVIEW_PROMPT
from notegate.doors.mcp.refusals import install_log_redaction, refusal
from notegate.doors.mcp.server import INSTRUCTIONS, build_mcp

__all__ = [
    "INSTRUCTIONS",
    "REVIEW_PROMPT",
    "SESSION_HEADER",
    "SESSION_LABEL",
    "CallerResolver",
    "build_mcp",
    "install_log_redaction",
    "refusal",
    "session_label",
]
