"""The owner's notes pages over a real server on loopback (httpx, no browser): the owner gate, browse, read,
search, attachments, history, and the two-step restore and edit through the real notes service, checked
at the origin. Every refusal is asserted by its exact rule."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from support.gitstreams import FILE, commit, forge_push
from support.web_harness import Console, serve_console
from support.web_notes import (
    HOSTILE_SVG,
    Signed,
    attach,
    delete,
    origin_head,
    origin_text,
    plant,
    png,
    sign_in,
    unsafe_markup,
    write,
)


def _rule(response) -> str | None:
    match = re.search(r'id="refusal" data-rule="([^"]+)"', response.text)
    return match.group(1) if match else None


def _field(response, name: str) -> str:
    match = re.search(rf'name="{name}" value="([^"]*)"', response.text)
    assert match, (name, response.text[:2000])
    return match.group(1)


@pytest.fixture
def served(vault: Path) -> Iterator[Console]:
    text = vault.read_text().replace("members = []", 'members = ["member"]', 1)
    vault.write_text(text)
    with serve_console(vault) as console:
        yield console


@pytest.fixture
def owner(served: Console) -> Signed:
    return sign_in(served, "owner")


PAGES = ["/notes", "/notes/projects", "/notes/rules/digest.md", "/search?q=x", "/history/rules/digest.md"]


@pytest.mark.parametrize("path", PAGES)
def test_a_stranger_is_sent_to_login(served: Console, path: str) -> None:
    import httpx2

    response = httpx2.get(f"{served.url}{path}", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"].startswith("/login?next=")


def test_a_post_without_a_session_is_refused(served: Console) -> None:
    import httpx2

    response = httpx2.post(f"{served.url}/edit/notes/x.md", data={"content": "x"}, headers={"Origin": served.url})
    assert response.status_code == 401 and _rule(response) == "login-required"


@pytest.mark.parametrize("path", [*PAGES, "/files/img/a.png", "/edit/notes/x.md"])
def test_a_member_is_not_the_owner(served: Console, path: str) -> None:
    member = sign_in(served, "member")
    response = member.client.get(path)
    assert response.status_code == 403 and _rule(response) == "console-not-owner"


def test_a_member_cannot_write_either(served: Console) -> None:
    member = sign_in(served, "member")
    response = member.post("/edit/notes/x.md", {"base": "absent", "content": "hi", "step": "confirm"})
    assert _rule(response) == "console-not-owner"
    assert origin_text(served, "notes/x.md") is None
    row = served.runtime.state.audit_rows(tool="web:edit")[-1]
    assert (row["login"], row["outcome"]) == ("member", "refused:console-not-owner")


def test_browse_read_and_search(served: Console, owner: Signed) -> None:
    write(served, "projects/alpha.md", "# Alpha\n\nSee [[beta|the beta note]] and [[nowhere]].\n")
    write(served, "projects/beta.md", "# Beta\n\nthe zanzibar plan\n")
    root = owner.client.get("/notes")
    assert root.status_code == 200 and 'href="/notes/projects"' in root.text
    folder = owner.client.get("/notes/projects")
    assert 'href="/notes/projects/alpha.md"' in folder.text
    note = owner.client.get("/notes/projects/alpha.md")
    assert '<a href="/notes/projects/beta.md" class="wikilink">the beta note</a>' in note.text
    assert '<span class="missing">nowhere</span>' in note.text
    hits = owner.client.get("/search", params={"q": "zanzibar plan"})
    assert 'data-path="projects/beta.md"' in hits.text and "projects/alpha.md" not in hits.text


def test_the_owner_sees_private_notes_as_a_trusted_session_does(served: Console, owner: Signed) -> None:
    write(served, "private/diary.md", "# Diary\n\nquokka sightings\n")
    assert "quokka sightings" in owner.client.get("/notes/private/diary.md").text
    assert 'data-path="private/diary.md"' in owner.client.get("/search", params={"q": "quokka"}).text


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("/notes/.obsidian/workspace.md", "path-hidden-segment"),
        ("/history/.git/config.md", "path-hidden-segment"),
        ("/edit/.obsidian/app.md", "path-hidden-segment"),
        ("/notes/projects/none.md", "no-such-note"),
        ("/notes/no-such-folder", "no-such-folder"),
        ("/files/img/none.png", "no-such-note"),
    ],
)
def test_paths_are_refused_by_the_services_rules(owner: Signed, path: str, rule: str) -> None:
    response = owner.client.get(path)
    assert _rule(response) == rule, response.text[:500]


def test_attachments_are_served_typed_and_svg_only_as_a_sandboxed_image(served: Console, owner: Signed) -> None:
    attach(served, "img/a.png", png())
    attach(served, "docs/paper.pdf", b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
    plant(served, "img/evil.svg", HOSTILE_SVG)
    image = owner.client.get("/files/img/a.png")
    assert image.status_code == 200 and image.content == png()
    assert image.headers["content-type"] == "image/png"
    assert image.headers["content-disposition"].startswith("inline;")
    assert image.headers["x-content-type-options"] == "nosniff"
    assert "sandbox" in image.headers["content-security-policy"]
    pdf = owner.client.get("/files/docs/paper.pdf")
    assert pdf.headers["content-type"] == "application/pdf"
    assert pdf.headers["content-disposition"].startswith("attachment;")
    svg = owner.client.get("/files/img/evil.svg")  # kept (Obsidian's help vault has 2,754): no script may run
    assert svg.status_code == 200 and svg.content == HOSTILE_SVG
    assert svg.headers["content-type"] == "image/svg+xml"
    assert svg.headers["x-content-type-options"] == "nosniff"
    policy = svg.headers["content-security-policy"]
    assert policy.startswith("default-src 'none';") and "sandbox" in policy and "script-src" not in policy


def test_embeds_show_vault_images_and_link_pdfs(served: Console, owner: Signed) -> None:
    attach(served, "img/a.png", png())
    attach(served, "docs/paper.pdf", b"%PDF-1.4\n%%EOF\n")
    plant(served, "img/evil.svg", HOSTILE_SVG)
    write(served, "notes/pics.md", "![[a.png]] ![alt](../img/a.png) ![[paper.pdf]] ![[evil.svg]]\n")
    page = owner.client.get("/notes/notes/pics.md").text
    assert page.count('<img src="/files/img/a.png"') == 2
    assert '<a href="/files/docs/paper.pdf" class="attachment">' in page
    assert page.count('<img src="/files/img/evil.svg"') == 1  # an SVG only ever as <img>: it runs no script there
    assert "<svg" not in page and "<object" not in page and "<iframe" not in page


def test_history_shows_each_revision_with_its_diff_and_trailers(served: Console, owner: Signed) -> None:
    write(served, "notes/h.md", "one\n")
    write(served, "notes/h.md", "one\ntwo\n")
    page = owner.client.get("/history/notes/h.md").text
    assert page.count('class="revision"') == 2
    assert '<span class="add">+two</span>' in page
    assert '<span class="connector">cli:import</span>' in page and '<span class="tier">trusted</span>' in page


def test_restore_a_deleted_note_in_two_steps(served: Console, owner: Signed) -> None:
    made = write(served, "notes/gone.md", "keep me\n")
    delete(served, "notes/gone.md")
    assert "This note was deleted" in owner.client.get("/notes/notes/gone.md").text
    history = owner.client.get("/history/notes/gone.md")
    assert f'name="commit" value="{made}"' in history.text
    preview = owner.post("/restore/notes/gone.md", {"commit": made, "base": "absent", "step": "preview"})
    assert preview.status_code == 200 and '<span class="add">+keep me</span>' in preview.text
    assert origin_text(served, "notes/gone.md") is None  # nothing yet
    done = owner.post("/restore/notes/gone.md", {"commit": made, "base": "absent", "step": "confirm"})
    assert done.status_code == 303 and done.headers["location"].startswith("/notes/notes/gone.md?committed=")
    assert origin_text(served, "notes/gone.md") == "keep me\n"
    head = origin_head(served)
    assert "Notegate-Connector: web:console" in head.message and head.author.email == "owner@notegate"
    rows = served.runtime.state.audit_rows(tool="web:restore")
    assert [r["outcome"] for r in rows][-2:] == ["preview", f"ok:{str(head.id)[:12]}"]


def test_a_confirm_without_its_preview_is_refused(served: Console, owner: Signed) -> None:
    made = write(served, "notes/gone.md", "keep me\n")
    delete(served, "notes/gone.md")
    response = owner.post("/restore/notes/gone.md", {"commit": made, "base": "absent", "step": "confirm"})
    assert response.status_code == 409 and _rule(response) == "two-step-required"
    assert origin_text(served, "notes/gone.md") is None


def test_edit_in_two_steps_commits_as_the_console(served: Console, owner: Signed) -> None:
    write(served, "notes/e.md", "old line\n")
    form = owner.client.get("/edit/notes/e.md")
    base = _field(form, "base")
    assert "old line" in form.text
    preview = owner.post("/edit/notes/e.md", {"base": base, "content": "new line\r\n", "step": "preview"})
    assert '<span class="del">-old line</span>' in preview.text and '<span class="add">+new line</span>' in preview.text
    assert origin_text(served, "notes/e.md") == "old line\n"
    done = owner.post("/edit/notes/e.md", {"base": base, "content": "new line\n", "step": "confirm"})
    assert done.status_code == 303
    assert origin_text(served, "notes/e.md") == "new line\n"
    assert "Notegate-Connector: web:console" in origin_head(served).message
    outcomes = [r["outcome"] for r in served.runtime.state.audit_rows(tool="web:edit")]
    assert outcomes[0] == "preview" and outcomes[-1].startswith("ok:")


def test_a_confirm_of_other_text_than_previewed_is_refused(served: Console, owner: Signed) -> None:
    write(served, "notes/e.md", "old\n")
    base = _field(owner.client.get("/edit/notes/e.md"), "base")
    owner.post("/edit/notes/e.md", {"base": base, "content": "shown\n", "step": "preview"})
    response = owner.post("/edit/notes/e.md", {"base": base, "content": "not shown\n", "step": "confirm"})
    assert _rule(response) == "two-step-required"
    assert origin_text(served, "notes/e.md") == "old\n"


def test_a_preview_gone_stale_is_refused_with_what_changed(served: Console, owner: Signed) -> None:
    write(served, "notes/e.md", "old\n")
    base = _field(owner.client.get("/edit/notes/e.md"), "base")
    owner.post("/edit/notes/e.md", {"base": base, "content": "mine\n", "step": "preview"})
    write(served, "notes/e.md", "theirs\n")  # another session wrote in between
    response = owner.post("/edit/notes/e.md", {"base": base, "content": "mine\n", "step": "confirm"})
    assert response.status_code == 409 and _rule(response) == "stale-revision"
    assert '<span class="add">+theirs</span>' in response.text
    assert origin_text(served, "notes/e.md") == "theirs\n"
    assert served.runtime.state.audit_rows(tool="web:edit")[-1]["outcome"] == "refused:stale-revision"


def test_an_expired_preview_is_refused(served: Console, owner: Signed) -> None:
    write(served, "notes/e.md", "old\n")
    base = _field(owner.client.get("/edit/notes/e.md"), "base")
    owner.post("/edit/notes/e.md", {"base": base, "content": "mine\n", "step": "preview"})
    served.clock.advance(served.runtime.policy.preview_ttl_seconds + 1)
    response = owner.post("/edit/notes/e.md", {"base": base, "content": "mine\n", "step": "confirm"})
    assert _rule(response) == "two-step-required"


@pytest.mark.parametrize("route", ["/edit/notes/e.md", "/restore/notes/e.md"])
def test_posts_without_the_csrf_token_are_refused_and_audited(served: Console, owner: Signed, route: str) -> None:
    response = owner.post(route, {"base": "absent", "content": "x", "step": "preview"}, csrf=False)
    assert response.status_code == 403 and _rule(response) == "csrf-missing"
    tool = "web:edit" if route.startswith("/edit") else "web:restore"
    assert served.runtime.state.audit_rows(tool=tool)[-1]["outcome"] == "refused:csrf-missing"


def test_a_cross_site_post_is_refused(served: Console, owner: Signed) -> None:
    response = owner.client.post(
        "/edit/notes/e.md",
        data={"csrf": owner.csrf, "base": "absent", "content": "x", "step": "confirm"},
        headers={"Origin": "https://evil.example"},
    )
    assert _rule(response) == "origin-mismatch"


def test_a_new_note_from_the_browser(served: Console, owner: Signed) -> None:
    form = owner.client.get("/edit/notes/fresh.md")
    assert _field(form, "base") == "absent"
    owner.post("/edit/notes/fresh.md", {"base": "absent", "content": "# Fresh\n", "step": "preview"})
    owner.post("/edit/notes/fresh.md", {"base": "absent", "content": "# Fresh\n", "step": "confirm"})
    assert origin_text(served, "notes/fresh.md") == "# Fresh\n"


def test_hostile_content_is_escaped_and_its_links_dropped(served: Console, owner: Signed) -> None:
    from support.web_notes import HOSTILE_NOTE

    plant(served, "notes/evil.svg", HOSTILE_SVG)
    write(served, "notes/hostile.md", HOSTILE_NOTE)
    page = owner.client.get("/notes/notes/hostile.md").text
    body = page.split('<article id="note"', 1)[1].split(">", 1)[1].split("</article>", 1)[0]
    assert unsafe_markup(body) == []
    assert "<script" not in body and "&lt;script&gt;" in body
    assert "<svg" not in body  # the SVG, if shown at all, is an <img>; never inlined


def test_every_notes_page_carries_the_security_headers(served: Console, owner: Signed) -> None:
    from support.web_harness import assert_strict

    write(served, "notes/h.md", "x\n")
    attach(served, "img/a.png", png())
    for path in [*PAGES, "/notes/notes/h.md", "/edit/notes/h.md", "/notes/.x/y.md"]:
        assert_strict(owner.client.get(path).headers)
    served_file = owner.client.get("/files/img/a.png").headers  # stricter still: no script source at all
    assert served_file["content-security-policy"].startswith("default-src 'none';")
    assert (
        "script-src" not in served_file["content-security-policy"]
        and "sandbox" in served_file["content-security-policy"]
    )
    assert served_file["x-content-type-options"] == "nosniff" and served_file["referrer-policy"] == "no-referrer"
    assert_strict(owner.post("/edit/notes/h.md", {"base": "absent", "content": "x", "step": "preview"}).headers)


def test_restore_an_older_revision_of_a_live_note(served: Console, owner: Signed) -> None:
    first = write(served, "notes/r.md", "first\n")
    write(served, "notes/r.md", "second\n")
    history = owner.client.get("/history/notes/r.md")
    base = _field(history, "base")
    assert history.text.count('class="restore"') == 1  # the current version is not offered
    preview = owner.post("/restore/notes/r.md", {"commit": first, "base": base, "step": "preview"})
    assert '<span class="del">-second</span>' in preview.text and '<span class="add">+first</span>' in preview.text
    owner.post("/restore/notes/r.md", {"commit": first, "base": base, "step": "confirm"})
    assert origin_text(served, "notes/r.md") == "first\n"
    assert f"restore notes/r.md to {first[:12]}" in origin_head(served).message


def test_a_large_note_is_edited_from_the_browser(served: Console, owner: Signed) -> None:
    big = "".join(f"line {i} with some words, ünïcode too\n" for i in range(4000))  # ~160 KB
    assert len(big.encode()) > 2 * (64 << 10)  # well over the 64 KiB of other console forms
    owner.post("/edit/notes/big.md", {"base": "absent", "content": big, "step": "preview"})
    done = owner.post("/edit/notes/big.md", {"base": "absent", "content": big, "step": "confirm"})
    assert done.status_code == 303 and origin_text(served, "notes/big.md") == big


def test_the_notes_services_gates_apply_to_the_browser(served: Console, owner: Signed) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    response = owner.post("/edit/notes/s.md", {"base": "absent", "content": f"token {token}\n", "step": "preview"})
    assert _rule(response) == "credential-warning" and token not in response.text
    response = owner.post("/edit/notes/CLAUDE.md", {"base": "absent", "content": "x\n", "step": "preview"})
    assert _rule(response) is not None and origin_text(served, "notes/CLAUDE.md") is None


def test_search_leaves_the_inbox_out_unless_asked(served: Console, owner: Signed) -> None:
    write(served, "inbox/captures/idea.md", "the wombat idea\n")
    assert "inbox/captures/idea.md" not in owner.client.get("/search", params={"q": "wombat"}).text
    asked = owner.client.get("/search", params={"q": "wombat", "inbox": "1"}).text
    assert 'data-path="inbox/captures/idea.md"' in asked


def test_search_says_when_more_notes_match_than_it_shows(served: Console, owner: Signed) -> None:
    from notegate.vault.store import ABSENT, Author, Change

    env = served.runtime.environment(served.runtime.config.default_environment)
    changes = [Change(f"many/n{i:02d}.md", b"a numbat note\n") for i in range(51)]
    env.store.commit(changes, {c.path: ABSENT for c in changes}, Author("o", "o"), "bulk\n", new_paths=())
    page = owner.client.get("/search", params={"q": "numbat"}).text
    assert page.count("<li data-path=") == 50 and 'id="more-hits"' in page and "than the 50 shown" in page
    write(served, "few/one.md", "a quokka note\n")
    assert 'id="more-hits"' not in owner.client.get("/search", params={"q": "quokka"}).text


def test_a_long_folder_pages_on(served: Console, owner: Signed) -> None:
    from notegate.vault.store import ABSENT, Author, Change

    env = served.runtime.environment(served.runtime.config.default_environment)
    changes = [Change(f"many/n{i:04d}.md", b"x\n") for i in range(1001)]
    env.store.commit(changes, {c.path: ABSENT for c in changes}, Author("o", "o"), "bulk\n", new_paths=())
    first = owner.client.get("/notes/many")
    assert first.text.count('class="note"') == 1000
    more = re.search(r'href="\?after=([^"]+)" id="more"', first.text)
    assert more is not None
    second = owner.client.get(f"/notes/many?after={more.group(1)}")
    assert second.text.count('class="note"') == 1 and "many/n1000.md" in second.text and 'id="more"' not in second.text


def test_a_pushed_change_is_shown_as_pushed_and_without_a_tier(served: Console, owner: Signed, tmp_path: Path) -> None:
    """Who made a change comes from the server's record only (issue 27): a commit that reached the origin by git
    is "pushed by" its committer, unverified, with no tier, on the history page and the note page."""
    origin = served.config_path.parent / "origin.git"
    scratch = pygit2.clone_repository(str(origin), str(tmp_path / "scratch.git"), bare=True)
    head = str(scratch.references["refs/heads/main"].target)
    tree = scratch[commit(scratch, [head], add={"notes/p.md": (FILE, b"# pushed\n")})].tree_id
    bob = pygit2.Signature("Bob", "bob@example.invalid", 1_800_000_000, 0)
    forge_push(origin, scratch, str(scratch.create_commit(None, bob, bob, "add p", tree, [pygit2.Oid(hex=head)])))
    served.runtime.sync("personal")
    page = owner.client.get("/history/notes/p.md").text
    assert 'pushed by <b class="login">Bob &lt;bob@example.invalid&gt; (unverified)</b>' in page
    assert 'class="tier"' not in page
    note = owner.client.get("/notes/notes/p.md").text
    assert "pushed by Bob &lt;bob@example.invalid&gt; (unverified) (not made by this server: no tier)" in note
