"""Mutate one policy rule at a time and check that some test fails and names it (issue 9's standard).

Run: .venv/bin/python tools/mutate_policy.py  (about a minute per mutation on 2 cores). Restores the module
after each mutation, also on Ctrl-C. Prints one line per mutation: caught (with the first failing test)
or SURVIVED.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
POLICY = ROOT / "src" / "notegate" / "policy"  # the package: each mutation's text is in exactly one module
TESTS = [
    "tests/test_policy_cases.py",
    "tests/test_policy.py",
    "tests/services/test_inbox.py",
    "tests/services/test_write_rules.py",
    "tests/auth/test_devices_verifier.py",
    "tests/auth/test_oauth.py",
    "tests/auth/test_passkeys.py",
]

# (name, text in the policy package, replacement): each breaks exactly one rule.
MUTATIONS = [
    (
        "is_inbox ignores case",
        'return path.casefold().startswith(self.inbox_root + "/")',
        'return path.startswith(self.inbox_root + "/")',
    ),
    (
        "is_reserved ignores case",
        "return any(path.casefold() == r.casefold() for r in self.inbox_reserved)",
        "return any(path == r for r in self.inbox_reserved)",
    ),
    (
        "restricted may overwrite items",
        "if action in (Action.CREATE, Action.APPEND):",
        "if action in (Action.CREATE, Action.APPEND, Action.OVERWRITE):",
    ),
    ("private visible to restricted", "    return not policy.is_private(path)", "    return True"),
    ("names checked on delete too", "if action is not Action.DELETE:", "if True:"),
    (
        "names never checked",
        'if entry is None:\n        return allow("name")',
        'if True:\n        return allow("name")',
    ),
    ("an author may promote", "same = author.connector == caller.connector_id if", "same = author.connector == '' if"),
    ("legacy parts match nobody", "else author.person == caller.login", "else False"),
    (
        "quota off by one",
        "if limits.writes and writes + 1 > limits.writes:",
        "if limits.writes and writes > limits.writes:",
    ),
    ("quota ignores bytes", "if limits.bytes and used_bytes + size > limits.bytes:", "if False:"),
    (
        "protected needs no two-step",
        "    if policy.is_protected(path):\n        return True",
        "    if False:\n        return True",
    ),
    (
        "restricted may review",
        'if caller.tier != "trusted":\n        return deny(\n            "review-trusted-only"',
        'if caller.tier == "machine":\n        return deny(\n            "review-trusted-only"',
    ),
    (
        "routes may reach the inbox",
        "if self.is_inbox(target) or self.names_instruction_file(target):",
        "if self.names_instruction_file(target):",
    ),
    ("machines may read", 'if caller.tier == "machine" or caller.client_class == "machine":', "if False:"),
    # issue 10: device keys, OAuth redirects and registrations, persons
    (
        "a device lifts any class",
        'if caller.client_class != "workstation" or caller.tier not in',
        "if False and caller.tier not in",
    ),
    ("a device lifts any person", "if not verdict.person or verdict.person != caller.login:", "if not verdict.person:"),
    (
        "an unverified device counts",
        "    if not verdict.trusted:\n        return deny(",
        "    if False:\n        return deny(",
    ),
    (
        "any registered redirect is allowed",
        '    return deny("redirect-not-allowed"',
        '    return allow("redirect-not-allowed"',
    ),
    (
        "loopback ports match any host",
        'entry[: -len(":*")] == f"http://{loop[0]}"',
        'entry.startswith("http://")',
    ),
    ("registration cap off by one", "    if count < cap:", "    if count <= cap:"),
    ("anyone is a person", "    if login in persons:", "    if login:"),
]


def main(argv: list[str]) -> int:
    """``tools/mutate_policy.py [WORD …]`` runs only the mutations whose name contains one of the words."""
    originals = {path: path.read_text(encoding="utf-8") for path in sorted(POLICY.glob("*.py"))}
    survived = 0
    chosen = [m for m in MUTATIONS if not argv or any(word in m[0] for word in argv)]
    try:
        for name, before, after in chosen:
            holders = [path for path, text in originals.items() if text.count(before)]
            if len(holders) != 1 or originals[holders[0]].count(before) != 1:
                print(f"?? {name}: the text to mutate is not in the policy package exactly once")
                survived += 1
                continue
            target = holders[0]
            target.write_text(originals[target].replace(before, after), encoding="utf-8")
            run = subprocess.run(
                [sys.executable, "-m", "pytest", "-x", "-q", "-n", "2", "-p", "no:cacheprovider", *TESTS],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=False,
            )
            failed = [ln for ln in run.stdout.splitlines() if ln.startswith("FAILED")]
            if run.returncode == 0:
                survived += 1
                print(f"SURVIVED  {name}")
            else:
                print(f"caught    {name}: {failed[0][7:110] if failed else run.stdout.splitlines()[-1]}")
            target.write_text(originals[target], encoding="utf-8")
    finally:
        for path, text in originals.items():
            if path.read_text(encoding="utf-8") != text:
                path.write_text(text, encoding="utf-8")
    print(f"{len(chosen) - survived}/{len(chosen)} mutations caught")
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
