"""The vault layout comes from the policy only (issue 29 §3): an owner who moves every layout setting (the
routes, the inbox templates, the digest, the project summary, the session notes) gets the whole session loop
in the new places, against a real server, the real hooks and the real MCP tools: session start injects the
digest and the last handoff from there, session end writes the log, the handoff, the session note and the
summary there, a restricted session's inbox writes land in the new inbox, and promotion follows the new
routes.  Nothing may be read from or written to the default folders."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from notegate.services.vaultinit import init_directory
from notegate.vault.formats import Handoff, ProjectSummary, parse_log
from support import running
from support.hookrun import (
    Served,
    Transcript,
    base_env,
    client_toml,
    good_answer,
    make_repo,
    run_hook,
    session_end_payload,
    session_start_payload,
    vault_client,
)
from support.standins import CliAnswer, FakeClaude

P = "moved"
T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC).timestamp()
#: Every layout setting moved away from its default (the config lines ``notegate init`` writes, replaced).
MOVED = {
    'handoff = "handoffs/{project}.md"': 'handoff = "notes/handoff/{project}.md"',
    'log = "log/{project}.md"': 'log = "notes/journal/{project}.md"',
    'decision = "design/{project}.md"': 'decision = "notes/decided/{project}.md"',
    'handoff = "inbox/handoffs/{project}.md"': 'handoff = "inbox/from-sessions/handoff/{project}.md"',
    'log = "inbox/log/{project}.md"': 'log = "inbox/from-sessions/log/{project}.md"',
    'decision = "inbox/decisions/{project}.md"': 'decision = "inbox/from-sessions/decision/{project}.md"',
    'capture = "inbox/captures/{slug}.md"': 'capture = "inbox/from-sessions/capture/{slug}.md"',
    'digest_path = "rules/digest.md"': 'digest_path = "house/digest.md"',
    'project_summary = "projects/{project}.md"': 'project_summary = "notes/summary/{project}.md"',
    'session_notes = "sessions/{project}"': 'session_notes = "notes/sessions/{project}"',
}
#: Where the defaults would have put each note: the loop must touch none of them.
DEFAULT_PLACES = (
    f"handoffs/{P}.md",
    f"log/{P}.md",
    f"design/{P}.md",
    f"projects/{P}.md",
    f"inbox/handoffs/{P}.md",
    f"inbox/log/{P}.md",
    f"inbox/decisions/{P}.md",
)


@pytest.fixture(scope="module")
def moved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    config = init_directory(tmp_path_factory.mktemp("layoutvault") / "vault")
    text = config.read_text()
    for old, new in MOVED.items():
        assert text.count(f"\n{old}\n") == 1, old
        text = text.replace(f"\n{old}\n", f"\n{new}\n")
    config.write_text(text)
    with running(config) as server:
        yield Served(config, server)


def _handoff(where: str) -> str:
    return Handoff(
        project=P,
        branch="main",
        written=datetime(2026, 11, 1, 12, 0, tzinfo=UTC),
        session="earlier",
        client="claude-code",
        where_it_stopped=where,
        next_step="Finish the parser.",
        open_questions="None.",
        repo_state="Clean.",
    ).render()


def _session(moved: Served, home: Path, fake: FakeClaude, tier: str, session_id: str):
    repo = make_repo(home.parent / f"work-{tier}", P, branch="main")
    transcript = Transcript(home / ".claude" / "projects" / f"{session_id}.jsonl", session_id, repo)
    transcript.exchange(2)
    models = f'[models]\nchain = ["claude-cli"]\ntimeout_seconds = 20\n[models.claude-cli]\ncommand = "{fake.path}"\n'
    client_toml(home / ".config" / "notegate" / "client.toml", models=models)
    env = base_env(
        home,
        NOTEGATE_URL=moved.url,
        NOTEGATE_TOKEN=moved.token(tier=tier),
        NOTEGATE_HOOK_FOREGROUND="1",
        NOTEGATE_NOW=str(T0),
    )
    return repo, transcript, env


def test_every_layout_setting_moves_the_whole_session_loop(moved: Served, tmp_path: Path) -> None:
    owner = vault_client(moved.url, moved.token())
    owner.write("house/digest.md", "# House rules (moved)\n\n- Digest read from the moved place.\n", "absent")
    owner.write(f"notes/handoff/{P}.md", _handoff("Handoff read from the moved place."), "absent")
    summary = ProjectSummary(project=P, context_to_resume="Resume from the moved summary.").render()
    owner.write(f"notes/summary/{P}.md", summary, "absent")
    owner.write(f"handoffs/{P}.md", _handoff("Handoff from the OLD default place."), "absent")

    # Session start: the digest, the handoff and the context to resume come from the moved places.
    fake = FakeClaude(tmp_path, CliAnswer.json(good_answer()))
    home = tmp_path / "trusted"
    home.mkdir()
    repo, transcript, env = _session(moved, home, fake, "trusted", "3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b")
    started = run_hook("session-start", session_start_payload("s-1", transcript.path, repo / "src"), env)
    assert started.returncode == 0, started.stderr
    context = started.output()["hookSpecificOutput"]["additionalContext"]
    assert "Digest read from the moved place." in context
    assert "Handoff read from the moved place." in context and "OLD default place" not in context
    assert "Resume from the moved summary." in context
    layout = owner.start(P, "main")["layout"]
    assert layout == {
        "handoff": f"notes/handoff/{P}.md",
        "log": f"notes/journal/{P}.md",
        "summary": f"notes/summary/{P}.md",
        "sessions": f"notes/sessions/{P}",
    }

    # Session end (trusted): the log, the handoff, the session note and the summary land in the moved places.
    ended = run_hook("session-end", session_end_payload(transcript.session_id, transcript.path, repo / "src"), env)
    assert ended.returncode == 0, ended.stderr
    assert "wrote log, handoff, session-note, summary" in ended.stderr, ended.stderr
    assert parse_log(owner.read(f"notes/journal/{P}.md")[0])[0].text == good_answer()["log_entry"]
    assert Handoff.parse(owner.read(f"notes/handoff/{P}.md")[0]).next_step == "Add the benchmark for large inputs."
    assert owner.list_paths(f"notes/sessions/{P}") == [f"notes/sessions/{P}/2026-11-30-3f2a9c1e.md"]
    rebuilt = owner.read(f"notes/summary/{P}.md")[0]
    assert f"[[notes/sessions/{P}/2026-11-30-3f2a9c1e]]" in rebuilt and "Resume from the moved summary." in rebuilt
    assert owner.list_paths(f"sessions/{P}") == []

    # Session end (restricted): both inbox writes land in the moved inbox.
    home = tmp_path / "restricted"
    home.mkdir()
    repo, transcript, env = _session(moved, home, fake, "restricted", "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b")
    ended = run_hook("session-end", session_end_payload(transcript.session_id, transcript.path, repo / "src"), env)
    assert "wrote inbox-log, inbox-handoff" in ended.stderr, ended.stderr
    writer = vault_client(moved.url, moved.token(tier="restricted"))
    writer.inbox("decision", "Keep the parser streaming.", P)

    # Promotion follows the moved routes.
    items = {i["path"]: i["version"] for i in owner.call("list_inbox", {})["items"]}
    moved_items = [f"inbox/from-sessions/{kind}/{P}.md" for kind in ("log", "handoff", "decision")]
    assert set(moved_items) <= set(items)
    for item in moved_items:
        owner.call("promote_inbox", {"item": item, "version": items[item]})
    assert len(parse_log(owner.read(f"notes/journal/{P}.md")[0])) == 2
    assert "Keep the parser streaming." in owner.read(f"notes/decided/{P}.md")[0]
    assert Handoff.parse(owner.read(f"notes/handoff/{P}.md")[0]).session == "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b"
    for path in DEFAULT_PLACES:
        if path != f"handoffs/{P}.md":  # the decoy the owner wrote: left as it was
            assert owner.read(path)[0] is None, path
    assert "OLD default place" in owner.read(f"handoffs/{P}.md")[0]
