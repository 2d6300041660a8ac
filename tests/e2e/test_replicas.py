"""Two replicas, one origin, one PostgreSQL: two `notegate serve` processes, each with its own state_dir (its
own clone and search index), share the state database (`[state] url`) and push to one bare origin served
by `git daemon` over git:// (a real transport, so every push meets the origin's pre-receive hook, as
`notegate init` installs it). Everything is driven through the official MCP SDK client and plain HTTP.

What must hold across the two (issue 15):
* 32 concurrent writers spread over both: no lost update, exactly one winner per (note, base revision)
  and `stale-revision` for every loser, every acknowledged write's commit in the origin's history;
* a session handle minted on one replica is accepted on the other;
* a preview made on one replica is confirmed on the other;
* the DCR registration cap holds across both.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import pygit2
import pytest

from notegate.config import load_config
from notegate.policy import PUSHER_VARIABLES
from notegate.state import StateDB
from notegate.sync.hookfile import install_hook
from support import Server, free_port, mcp_http, mint, text_of

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(shutil.which("git") is None, reason="needs the git CLI (git daemon)"),
]

#: Registrations both replicas together may keep (oauth_max_registrations in both configs).
CAP = 5
#: How often each replica fetches the origin (the other replica's writes reach it no later than this).
FETCH_SECONDS = 2.0
#: Writers on notes of their own, and how many writes each makes (each based on its previous one).
SOLO_WRITERS, SOLO_WRITES = 20, 2
#: Notes several writers race to create from the same base (absent), and writers per note.
CONTESTED_NOTES, RACERS_PER_NOTE = 3, 4
assert SOLO_WRITERS + CONTESTED_NOTES * RACERS_PER_NOTE == 32


@dataclass
class Daemon:
    proc: subprocess.Popen
    port: int

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"


@contextlib.contextmanager
def git_daemon(base: Path, pusher: str | None = None) -> Iterator[Daemon]:
    """`git daemon` serving every repository under ``base`` on a free loopback port, pushes allowed; with
    ``pusher``, its hooks see NOTEGATE_PUSHER (what a forge that authenticates pushers would set)."""
    env = {k: v for k, v in os.environ.items() if k not in PUSHER_VARIABLES}
    if pusher is not None:
        env["NOTEGATE_PUSHER"] = pusher
    for _attempt in range(3):
        port = free_port()
        proc = subprocess.Popen(
            [
                "git",
                "daemon",
                "--export-all",
                "--enable=receive-pack",
                "--reuseaddr",
                "--informative-errors",
                f"--base-path={base}",
                f"--port={port}",
                "--listen=127.0.0.1",
                str(base),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
        )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and proc.poll() is None:
            probe = subprocess.run(
                ["git", "ls-remote", f"git://127.0.0.1:{port}/origin.git"], capture_output=True, timeout=20
            )
            if probe.returncode == 0:
                break
            time.sleep(0.05)
        if proc.poll() is None:
            try:
                yield Daemon(proc, port)
            finally:
                proc.terminate()
                proc.wait(timeout=20)
            return
    raise RuntimeError(f"git daemon did not start: {proc.stderr.read().decode(errors='replace')[-2000:]}")


def replica_config(vault: Path, name: str, origin_url: str, state_url: str) -> Path:
    """A copy of the vault's config with its own state_dir, the git:// origin and the shared PostgreSQL."""
    text = vault.read_text()
    assert 'state_dir = "state"\n' in text and 'origin = "origin.git"\n' in text
    text = text.replace('state_dir = "state"\n', f'state_dir = "state-{name}"\n')
    text = text.replace('origin = "origin.git"\n', f'origin = "{origin_url}"\n')
    assert "fetch_interval_seconds = 5.0\n" in text
    text = text.replace("fetch_interval_seconds = 5.0\n", f"fetch_interval_seconds = {FETCH_SECONDS}\n")
    lines = [ln for ln in text.splitlines() if ln.split("=")[0].strip() != "oauth_max_registrations"]
    text = "\n".join(lines).replace("[policy]\n", f"[policy]\noauth_max_registrations = {CAP}\n", 1)
    path = vault.with_name(f"replica-{name}.toml")
    path.write_text(text + f'\n[state]\nurl = "{state_url}"\n')
    return path


@contextlib.contextmanager
def two_replicas(vault: Path, pg_cluster, pusher: str | None = None) -> Iterator[tuple[Server, Server, Path]]:
    origin = vault.parent / "origin.git"
    if pusher is not None:  # the hook's config lists the replicas' push account among the owner's
        text = vault.read_text().replace("owner_pushers = []\n", f'owner_pushers = ["owner", "{pusher}"]\n', 1)
        vault.write_text(text)
    url = pg_cluster.new_database()
    with git_daemon(vault.parent, pusher) as daemon:
        configs = [replica_config(vault, name, daemon.url("origin.git"), url) for name in ("a", "b")]
        # The hook `notegate init` installs; over git:// every push, the servers' included, runs it. It names a
        # replica's config: the servers' commits pass it because the state database they share (which that
        # config names) records them as the servers' own (docs/explanation/security-model.md, "Where provenance
        # comes from").
        install_hook(origin, configs[0], "personal")
        first = Server(configs[0]).start()
        try:
            second = Server(configs[1]).start()
            try:
                yield first, second, origin
            finally:
                second.stop()
        finally:
            first.stop()


@pytest.fixture
def replicas(vault: Path, pg_cluster) -> Iterator[tuple[Server, Server, Path]]:
    with two_replicas(vault, pg_cluster) as served:
        yield served


def _origin_state(origin: Path) -> tuple[set[str], pygit2.Tree, pygit2.Repository]:
    repo = pygit2.Repository(str(origin))
    head = repo.references["refs/heads/main"].target
    return {str(c.id) for c in repo.walk(head)}, repo[head].peel(pygit2.Tree), repo


async def test_32_writers_over_two_replicas_lose_nothing_and_one_wins_each_race(
    replicas: tuple[Server, Server, Path], vault: Path
) -> None:
    first, second, origin = replicas
    token = mint(replicas[0].config_path, name="desk", tier="trusted")
    servers = (first, second)
    acknowledged: dict[str, list[tuple[int, str, str]]] = {}  # path -> [(sequence, content, commit)]
    outcomes: dict[str, list[str]] = {}  # contested path -> "won" / refusal rule per racer
    errors: list[str] = []
    sequence = iter(range(1_000_000))
    start = anyio.Event()

    async def write(client, path: str, content: str, base: str):
        return await client.call_tool(
            "write_note", {"path": path, "content": content, "base_revision": base, "confirmed": True}
        )

    async def solo(w: int) -> None:
        path = f"replicas/solo-{w}.md"
        async with mcp_http(servers[w % 2].url, token) as client:
            await start.wait()
            base = "absent"
            for i in range(SOLO_WRITES):
                content = f"writer {w} write {i}\n"
                result = await write(client, path, content, base)
                if result.is_error:
                    errors.append(f"{path} #{i} on {'ab'[w % 2]}: {text_of(result)[:300]}")
                    return
                done = result.structured_content
                acknowledged.setdefault(path, []).append((next(sequence), content, done["commit"]))
                base = done["new_revision"]

    async def racer(n: int, r: int) -> None:
        path = f"replicas/contested-{n}.md"
        async with mcp_http(servers[(n + r) % 2].url, token) as client:
            await start.wait()
            content = f"racer {r} on note {n}\n"
            result = await write(client, path, content, "absent")
            if result.is_error:
                rule = re.search(r"Refused \[([a-z-]+)\]: ", text_of(result))
                outcomes.setdefault(path, []).append(rule.group(1) if rule else text_of(result)[:300])
            else:
                acknowledged.setdefault(path, []).append((next(sequence), content, result.structured_content["commit"]))
                outcomes.setdefault(path, []).append("won")

    began = time.monotonic()
    with anyio.fail_after(80):
        async with anyio.create_task_group() as tg:
            for w in range(SOLO_WRITERS):
                tg.start_soon(solo, w)
            for n in range(CONTESTED_NOTES):
                for r in range(RACERS_PER_NOTE):
                    tg.start_soon(racer, n, r)
            await anyio.sleep(0.5)  # let every client connect, then release them together
            start.set()
    elapsed = time.monotonic() - began

    assert errors == []
    for n in range(CONTESTED_NOTES):
        got = sorted(outcomes[f"replicas/contested-{n}.md"])
        assert got == ["stale-revision"] * (RACERS_PER_NOTE - 1) + ["won"], got
    history, tree, repo = _origin_state(origin)
    commits = [commit for writes in acknowledged.values() for _s, _c, commit in writes]
    assert len(commits) == len(set(commits)) == SOLO_WRITERS * SOLO_WRITES + CONTESTED_NOTES  # one commit per write
    assert set(commits) <= history  # every acknowledged write is in the origin's history
    for path, writes in acknowledged.items():  # no lost update: the last acknowledged write is at HEAD
        last = max(writes)[1]
        assert repo[tree[path].id].data.decode() == last, path
    # Each replica's own clone and search index catch up with what the other wrote (its periodic fetch).
    final = {path: max(writes)[1] for path, writes in acknowledged.items()}
    caught_up = time.monotonic()
    for server in servers:
        async with mcp_http(server.url, token) as client:
            with anyio.fail_after(6 * FETCH_SECONDS):
                while True:
                    reads = [await client.call_tool("read_note", {"path": path}) for path in final]
                    found = await client.call_tool("search_notes", {"query": "racer"})
                    hits = {h["path"] for h in found.structured_content["hits"]}
                    pairs = zip(final, reads, strict=True)
                    texts = {p: r.structured_content["text"] for p, r in pairs if not r.is_error}
                    if texts == final and {f"replicas/contested-{n}.md" for n in range(CONTESTED_NOTES)} <= hits:
                        break
                    await anyio.sleep(0.2)
    # Fairness: replicas queue for the origin (StateDB.push_lock), so a group pushes at most twice. A group
    # that waited for the lock fetches first and pushes once; one that found the lock free just after the
    # other replica's push still builds on its own, older tip and pushes a second time.
    pushes = push_counts(servers)
    print(
        f"\n{len(commits)} acknowledged writes over two replicas in {elapsed:.1f} s; "
        f"both replicas served them all {time.monotonic() - caught_up:.1f} s later; "
        f"writes by the pushes each needed: {dict(sorted(pushes.items()))}"
    )
    assert 1 <= max(pushes) <= 2, pushes


def push_counts(servers: tuple[Server, ...]) -> Counter[int]:
    """How many acknowledged writes needed each number of push attempts (each server's commit events)."""
    found = Counter(int(m) for s in servers for m in re.findall(r"\bcommit .*?\bpushes=(\d+)", s.log.read_text()))
    assert found, "no commit events in the servers' logs"
    return found


async def test_a_handle_and_a_preview_cross_replicas(replicas: tuple[Server, Server, Path]) -> None:
    first, second, origin = replicas
    hosted = mint(first.config_path, name="phone", client_class="hosted", tier="trusted")
    async with mcp_http(first.url, hosted, start_session=True) as on_first:
        handle = on_first.handle
        preview = await on_first.call_tool(
            "write_note", {"path": "replicas/two-step.md", "content": "previewed on a\n", "base_revision": "absent"}
        )
        assert not preview.is_error, text_of(preview)
        assert preview.structured_content["status"] == "preview"
    async with mcp_http(second.url, hosted) as on_second:
        listed = await on_second.call_tool("list_notes", {"handle": handle})
        assert not listed.is_error, text_of(listed)
        confirmed = await on_second.call_tool(
            "write_note",
            {
                "path": "replicas/two-step.md", "content": "previewed on a\n", "base_revision": "absent",
                "confirmed": True, "handle": handle,
            },
        )  # fmt: skip
        assert not confirmed.is_error, text_of(confirmed)
        assert confirmed.structured_content["status"] == "committed"
        again = await on_second.call_tool(  # the preview is spent: a second confirmation finds none
            "write_note",
            {
                "path": "replicas/two-step.md", "content": "previewed on a\n", "base_revision": "absent",
                "confirmed": True, "handle": handle,
            },
        )  # fmt: skip
        assert again.is_error
    history, tree, repo = _origin_state(origin)
    assert confirmed.structured_content["commit"] in history
    assert repo[tree["replicas/two-step.md"].id].data == b"previewed on a\n"


async def test_the_registration_cap_holds_across_replicas(replicas: tuple[Server, Server, Path]) -> None:
    first, second, _origin = replicas
    body = {
        "client_name": "probe",
        "redirect_uris": ["http://127.0.0.1:33333/callback"],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    answers: list[httpx2.Response] = []
    async with httpx2.AsyncClient(timeout=30) as http:

        async def register(i: int) -> None:
            answers.append(await http.post(f"{(first, second)[i % 2].url}/register", json=body))

        async with anyio.create_task_group() as tg:
            for i in range(3 * CAP):
                tg.start_soon(register, i)
    # At the cap each new registration evicts the oldest one that never completed a consent (a flood cannot
    # lock the owner's new connector out); the two replicas together still keep exactly CAP.
    assert [a.status_code for a in answers] == [201] * (3 * CAP)
    db = StateDB.for_config(load_config(first.config_path))
    try:
        assert db.query("SELECT COUNT(*) FROM oauth_clients")[0][0] == CAP
    finally:
        db.close()


async def test_a_revision_acknowledged_on_one_replica_is_a_base_on_the_other(
    replicas: tuple[Server, Server, Path],
) -> None:
    """The other replica has not fetched yet (it fetches every FETCH_SECONDS): a write based on the origin's
    newest revision must not be refused as stale against its older clone; and racers on both replicas from
    one such base still have exactly one winner."""
    first, second, origin = replicas
    token = mint(first.config_path, name="desk", tier="trusted")
    path = "replicas/hop.md"
    args = {"path": path, "confirmed": True}
    async with mcp_http(first.url, token) as on_first, mcp_http(second.url, token) as on_second:
        made = await on_first.call_tool("write_note", {**args, "content": "from a\n", "base_revision": "absent"})
        assert not made.is_error, text_of(made)
        base = made.structured_content["new_revision"]
        hopped = await on_second.call_tool("write_note", {**args, "content": "then b\n", "base_revision": base})
        assert not hopped.is_error, text_of(hopped)
        base = hopped.structured_content["new_revision"]
        outcomes: list[str] = []

        async def race(client, r: int) -> None:
            result = await client.call_tool("write_note", {**args, "content": f"racer {r}\n", "base_revision": base})
            rule = re.search(r"Refused \[([a-z-]+)\]: ", text_of(result))
            outcomes.append((rule.group(1) if rule else text_of(result)[:300]) if result.is_error else "won")

        async with anyio.create_task_group() as tg:
            for r in range(4):
                tg.start_soon(race, (on_first, on_second)[r % 2], r)
    assert sorted(outcomes) == ["stale-revision"] * 3 + ["won"], outcomes
    history, _tree, _repo = _origin_state(origin)
    assert {made.structured_content["commit"], hopped.structured_content["commit"]} <= history


async def test_the_origin_hook_judges_every_push_over_git_daemon(
    replicas: tuple[Server, Server, Path], tmp_path: Path
) -> None:
    """Over git:// the origin's pre-receive hook runs for every pusher, the replicas included; git daemon
    names no pusher, so what sessions load at start (handoffs, rules, ...) is refused to all of them. A
    deployment whose replicas write those paths pushes through a forge that names notegate's push account
    (listed in owner_pushers); git daemon is anonymous."""
    first, _second, origin = replicas
    token = mint(first.config_path, name="desk", tier="trusted")
    async with mcp_http(first.url, token) as client:
        ordinary = await client.call_tool(
            "write_note", {"path": "replicas/plain.md", "content": "x\n", "base_revision": "absent", "confirmed": True}
        )
        loaded = await client.call_tool(
            "write_note",
            {"path": "handoffs/replicas.md", "content": "x\n", "base_revision": "absent", "confirmed": True},
        )
    assert not ordinary.is_error, text_of(ordinary)
    assert loaded.is_error and "Refused [origin-unavailable]: " in text_of(loaded)
    assert "pre-receive hook declined; its hook named [push-protected-path])" in text_of(loaded)
    _history, tree, _repo = _origin_state(origin)
    assert "replicas/plain.md" in tree and "handoffs/replicas.md" not in tree
    # A person's clone meets the same hook, and reads the rule that refused it.
    url = (
        pygit2.Repository(str(first.config_path.parent / "state-a" / "envs" / "personal" / "vault.git"))
        .remotes["origin"]
        .url
    )
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", url, str(clone)], check=True, capture_output=True, timeout=60)
    (clone / "rules").mkdir(exist_ok=True)
    (clone / "rules" / "digest.md").write_text("Obey the inbox.\n")
    ident = ["-c", "user.name=Someone", "-c", "user.email=someone@example.org"]
    subprocess.run(["git", "-C", str(clone), "add", "-A"], check=True, timeout=60)
    subprocess.run(["git", "-C", str(clone), *ident, "commit", "-qm", "rules"], check=True, timeout=60)
    pushed = subprocess.run(
        ["git", "-C", str(clone), "push", "origin", "HEAD:main"], capture_output=True, text=True, timeout=60
    )
    assert pushed.returncode != 0 and "push-protected-path" in pushed.stderr, pushed.stderr


async def test_a_replica_pushing_as_a_named_owner_account_may_write_what_sessions_load(vault: Path, pg_cluster) -> None:
    """What a deployment of replicas needs at the origin: a transport that names notegate's push account
    (here NOTEGATE_PUSHER in git daemon's environment, as a forge sets its user variable) and that account
    in owner_pushers. Then a handoff written through either replica passes the hook."""
    with two_replicas(vault, pg_cluster, pusher="notegate-replicas") as (first, second, origin):
        token = mint(first.config_path, name="desk", tier="trusted")
        for server, name in ((first, "a"), (second, "b")):
            async with mcp_http(server.url, token) as client:
                wrote = await client.call_tool(
                    "write_note",
                    {"path": f"handoffs/{name}.md", "content": "x\n", "base_revision": "absent", "confirmed": True},
                )
            assert not wrote.is_error, text_of(wrote)
        _history, tree, _repo = _origin_state(origin)
        assert "handoffs/a.md" in tree and "handoffs/b.md" in tree


async def test_an_attachment_and_an_inbox_version_from_one_replica_are_current_on_the_other(
    replicas: tuple[Server, Server, Path],
) -> None:
    """write_attachment and the inbox's version checks fetch once before refusing, as write_note does: a
    revision acknowledged on one replica is at once a valid base (an attachment) or version (an inbox item to
    hold) on the other, which has not fetched yet."""
    from support.attachments import b64, png

    first, second, _origin = replicas
    desk = mint(first.config_path, name="desk", tier="trusted")
    phone = mint(first.config_path, name="phone", tier="restricted")
    async with mcp_http(first.url, desk) as on_first, mcp_http(second.url, desk) as on_second:
        args = {"path": "replicas/pic.png", "confirmed": True}
        made = await on_first.call_tool(
            "write_attachment", {**args, "content_base64": b64(png("one")), "base_revision": "absent"}
        )
        assert not made.is_error, text_of(made)
        base = made.structured_content["new_revision"]
        hopped = await on_second.call_tool(
            "write_attachment", {**args, "content_base64": b64(png("two")), "base_revision": base}
        )
        assert not hopped.is_error, text_of(hopped)
        # A stale base is still refused by its rule, on either replica.
        again = await on_first.call_tool(
            "write_attachment", {**args, "content_base64": b64(png("three")), "base_revision": base}
        )
        assert again.is_error and "Refused [stale-revision]: " in text_of(again), text_of(again)
        async with mcp_http(first.url, phone) as writer:
            wrote = await writer.call_tool("inbox_write", {"kind": "capture", "title": "hop item", "text": "x\n"})
        assert not wrote.is_error, text_of(wrote)
        item, version = wrote.structured_content["path"], wrote.structured_content["new_revision"]
        held = await on_second.call_tool("hold_inbox", {"item": item, "version": version, "reason": "checked on b"})
        assert not held.is_error, text_of(held)
        stale = await on_first.call_tool("hold_inbox", {"item": item, "version": "0" * 40, "reason": "again"})
        assert stale.is_error and "Refused [stale-revision]: " in text_of(stale), text_of(stale)
