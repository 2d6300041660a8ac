"""The one case table of the policy: caller, action, path -> the exact rule that decides.

It drives tests/test_policy_cases.py (the pure decisions) and the restricted matrices of the services and
the real server, so a broken rule fails a test that names it instead of being hidden by a later check.
Each row is written out by hand, never computed: reading a row tells you what the policy must answer.

Columns: the path, the caller, the rule for every read action (read, list, search, history), then the rule
for create, overwrite, append, move, delete and restore.  Callers: R restricted hosted, W restricted
workstation, T trusted workstation, H trusted hosted, M machine, X an unknown tier.
"""

from __future__ import annotations

from notegate.policy import Action, Caller

CALLERS: dict[str, Caller] = {
    "R": Caller("phone", "Phone", "chat-app", "hosted", "restricted", connector="token:r"),
    "W": Caller("cloud", "Cloud", "cloud-agent", "workstation", "restricted", connector="token:w"),
    "T": Caller("owner", "Owner", "laptop", "workstation", "trusted", connector="token:t"),
    "H": Caller("owner", "Owner", "claude-ai", "hosted", "trusted", connector="token:h"),
    "M": Caller("cron", "Cron", "health-app", "machine", "machine", connector="token:m"),
    "X": Caller("odd", "Odd", "odd", "workstation", "root", connector="token:x"),
}

READS = (Action.READ, Action.LIST, Action.SEARCH, Action.HISTORY)
WRITES = (Action.CREATE, Action.OVERWRITE, Action.APPEND, Action.MOVE, Action.DELETE, Action.RESTORE)

OUT = "restricted-outside-inbox"
ONLY = "inbox-append-only"
NAME = "instruction-file-name"
HIDDEN = "no-such-note"

# fmt: off
TABLE: list[tuple[str, str, str, tuple[str, str, str, str, str, str]]] = [
    # path                      who  reads           create, overwrite, append, move, delete, restore
    ("notes/a.md",                "R", "visible",      (OUT,) * 6),
    ("notes/a.md",                "W", "visible",      (OUT,) * 6),
    ("notes/a.md",                "T", "visible",      ("trusted-write",) * 6),
    ("notes/a.md",                "H", "visible",      ("trusted-write",) * 6),
    ("notes/a.md",                "M", "machine-no-mcp", ("machine-no-mcp",) * 6),
    ("notes/a.md",                "X", "unknown-tier", ("unknown-tier",) * 6),
    ("rules/digest.md",           "R", "visible",      (OUT,) * 6),
    ("rules/digest.md",           "T", "visible",      ("protected-trusted",) * 6),
    ("RULES/Digest.md",           "T", "visible",      ("protected-trusted",) * 6),  # globs ignore case
    ("rules/digest.md",           "M", "machine-no-mcp", ("machine-no-mcp",) * 6),
    ("handoffs/notegate.md",      "R", "visible",      (OUT,) * 6),
    ("rules/new.md",              "R", "visible",      (OUT,) * 6),
    ("log/notegate.md",           "R", "visible",      (OUT,) * 6),
    ("design/notegate.md",        "R", "visible",      (OUT,) * 6),
    ("projects/notegate.md",      "R", "visible",      (OUT,) * 6),
    ("scratch.md",                "R", "visible",      (OUT,) * 6),
    ("private/x.md",              "R", HIDDEN,         (HIDDEN,) * 6),
    ("inbox/README.md",           "R", "visible",      ("inbox-reserved",) * 6),
    ("handoffs/notegate.md",      "H", "visible",      ("trusted-write",) * 6),
    ("log/notegate.md",           "W", "visible",      (OUT,) * 6),
    ("private/secret.md",         "R", HIDDEN,         (HIDDEN,) * 6),
    ("private/secret.md",         "W", HIDDEN,         (HIDDEN,) * 6),
    ("Private/Secret.md",         "R", HIDDEN,         (HIDDEN,) * 6),  # a case variant is just as private
    ("private/secret.md",         "T", "visible",      ("trusted-write",) * 6),
    ("private/secret.md",         "M", "machine-no-mcp", ("machine-no-mcp",) * 6),
    ("inbox/_held.md",            "R", "visible",      ("inbox-reserved",) * 6),
    ("INBOX/_Held.md",            "R", "visible",      ("inbox-reserved",) * 6),
    ("inbox/README.md",           "W", "visible",      ("inbox-reserved",) * 6),
    ("inbox/_held.md",            "T", "visible",      ("trusted-write",) * 6),
    ("inbox/other/x.md",          "R", "visible",      (OUT,) * 6),
    ("inbox/log/notegate.md",     "R", "visible",      ("inbox-write", ONLY, "inbox-write", ONLY, ONLY, ONLY)),
    ("inbox/log/notegate.md",     "W", "visible",      ("inbox-write", ONLY, "inbox-write", ONLY, ONLY, ONLY)),
    ("inbox/handoffs/notegate.md", "R", "visible",     ("inbox-write", ONLY, "inbox-write", ONLY, ONLY, ONLY)),
    ("inbox/decisions/notegate.md", "R", "visible",    ("inbox-write", ONLY, "inbox-write", ONLY, ONLY, ONLY)),
    ("inbox/captures/idea.md",    "R", "visible",      ("inbox-write", ONLY, "inbox-write", ONLY, ONLY, ONLY)),
    ("inbox/log/notegate.md",     "T", "visible",      ("trusted-write",) * 6),
    ("inbox/log/Notegate.md",     "R", "visible",      (OUT,) * 6),  # the project slug is lowercase
    ("INBOX/log/notegate.md",     "R", "visible",      (OUT,) * 6),  # a case variant of the inbox is no item
    ("іnbox/log/notegate.md",     "R", "visible",      (OUT,) * 6),  # Cyrillic і: not the inbox at all
    ("inbox/log/a.b.md",          "R", "visible",      (OUT,) * 6),  # not a slug
    ("inbox/handoffs/claude.md",  "R", "visible",      (NAME, NAME, NAME, NAME, ONLY, NAME)),
    ("inbox/log/agents.md",       "W", "visible",      (NAME, NAME, NAME, NAME, ONLY, NAME)),
    ("inbox/captures/gemini.md",  "R", "visible",      (NAME, NAME, NAME, NAME, ONLY, NAME)),
    ("projects/CLAUDE.md",        "T", "visible",      (NAME, NAME, NAME, NAME, "trusted-write", NAME)),
    ("projects/ＣＬＡＵＤＥ.md",  "T", "visible",      (NAME, NAME, NAME, NAME, "trusted-write", NAME)),
    ("a/claude.local.md",         "H", "visible",      (NAME, NAME, NAME, NAME, "trusted-write", NAME)),
    ("CLAUDE.md/notes.md",        "T", "visible",      (NAME, NAME, NAME, NAME, "trusted-write", NAME)),
    ("rules/CLAUDE.md",           "T", "visible",      (NAME, NAME, NAME, NAME, "protected-trusted", NAME)),
    ("rules/CLAUDE.md",           "R", "visible",      (NAME, NAME, NAME, NAME, OUT, NAME)),
    ("private/AGENTS.md",         "R", HIDDEN,         (HIDDEN,) * 6),  # invisible first: says nothing more
    ("private/AGENTS.md",         "T", "visible",      (NAME, NAME, NAME, NAME, "trusted-write", NAME)),
    ("design/claude-hooks.md",    "T", "visible",      ("trusted-write",) * 6),
]
# fmt: on


def cases() -> list[tuple[str, str, Action, str]]:
    """Every (path, caller key, action, expected rule) the table names."""
    out = []
    for path, who, reads, writes in TABLE:
        out += [(path, who, action, reads) for action in READS]
        out += [(path, who, action, rule) for action, rule in zip(WRITES, writes, strict=True)]
    return out


def expected(who: str, action: Action, path: str) -> str:
    """The table's rule for one case (KeyError if the table does not name it)."""
    for p, w, a, rule in cases():
        if (p, w, a) == (path, who, action):
            return rule
    raise KeyError((path, who, action))
