"""The backup manifest is read strictly: what `notegate backup` writes reads back as itself, anything else is
refused as ``backup-manifest-invalid`` (and nothing else escapes), in time linear in the file; the decisions
a restore takes on it (policy.py) name their exact rules; the restored config renders as TOML that reads
back as the same document; and the state database's online backup is one consistent state while a writer
goes on."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.policy import decide_backup_file, decide_backup_manifest, decide_restore_target
from notegate.services.backup_manifest import (
    CONFIG_FILE,
    STATE_FILE,
    EnvironmentEntry,
    FileEntry,
    Manifest,
    ManifestInvalid,
    RecordedQuery,
    Seal,
    bundle_name,
    parse_manifest,
    parse_seal,
)
from notegate.state import StateDB, integrity_problems
from notegate.vault.layout import render_toml
from support.timing import assert_catches_quadratic, assert_linear, fill

SLUG = "abcdefghijklmnopqrstuvwxyz0123456789_-"
sha = st.binary(min_size=32, max_size=32).map(bytes.hex)
oid = st.binary(min_size=20, max_size=20).map(bytes.hex)
env_name = st.text(SLUG, min_size=1, max_size=8)
ref = st.builds(
    "refs/{}/{}".format, st.sampled_from(["heads", "tags", "remotes/origin"]), st.text(SLUG, min_size=1, max_size=8)
)
table = st.builds(str.__add__, st.sampled_from("abcdefgh"), st.text(SLUG.replace("-", ""), max_size=8))
file_entry = st.builds(FileEntry, st.integers(0, 1 << 40), sha, st.integers(0, 1 << 40), sha)


@st.composite
def manifests(draw) -> Manifest:
    envs: dict[str, EnvironmentEntry] = {}
    files = {STATE_FILE: draw(file_entry), CONFIG_FILE: draw(file_entry)}
    for name in draw(st.lists(env_name, max_size=3, unique=True)):
        refs = draw(st.dictionaries(ref, oid, max_size=3))
        file = bundle_name(name) if refs else None
        if file is not None:
            files[file] = draw(file_entry)
        envs[name] = EnvironmentEntry(file=file, refs=refs)
    return Manifest(
        format_version=draw(st.integers(1, 5)),
        notegate_version=draw(st.sampled_from(["0.1.0", "1.2.3+local", "2.0.0rc1"])),
        created_at="2026-12-01T02:00:00Z",
        schema_version=draw(st.integers(1, 9)),
        tables=draw(st.dictionaries(table, st.integers(0, 1 << 40), max_size=5)),
        secret_digests=draw(st.dictionaries(st.sampled_from(["tokens", "oauth_tokens", "elevation_grants"]), sha)),
        environments=envs,
        files=files,
    )


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifests())
def test_what_backup_writes_reads_back_as_itself(manifest: Manifest) -> None:
    assert parse_manifest(manifest.to_json()) == manifest


@settings(deadline=None)
@given(st.binary(max_size=2000))
def test_any_bytes_are_a_manifest_or_refused_by_its_rule(raw: bytes) -> None:
    try:
        parse_manifest(raw)
    except ManifestInvalid as exc:
        assert exc.rule == "backup-manifest-invalid"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifests(), st.data())
def test_changing_any_one_value_gives_the_manifest_it_says_or_a_refusal(manifest: Manifest, data) -> None:
    """Replace one value anywhere in a good manifest with any JSON value: the parser answers a manifest or
    ``ManifestInvalid``, never another exception."""
    doc = json.loads(manifest.to_json())
    path, node = [], doc
    while isinstance(node, dict) and node:
        key = data.draw(st.sampled_from(sorted(node)))
        path.append(key)
        if not isinstance(node[key], dict) or data.draw(st.booleans()):
            break
        node = node[key]
    target = doc
    for key in path[:-1]:
        target = target[key]
    if path:
        target[path[-1]] = data.draw(json_values)
    with contextlib.suppress(ManifestInvalid):
        parse_manifest(json.dumps(doc).encode())


def _good() -> dict:
    files = {
        name: {"size": 1, "sha256": "a" * 64, "plain_size": 1, "plain_sha256": "b" * 64}
        for name in (STATE_FILE, CONFIG_FILE, "env-p.bundle.age")
    }
    return {
        "format": "notegate-backup",
        "format_version": 1,
        "notegate_version": "0.1.0",
        "created_at": "2026-12-01T02:00:00Z",
        "state": {"schema_version": 1, "tables": {"tokens": 2}, "secret_digests": {"tokens": "c" * 64}},
        "environments": {"p": {"file": "env-p.bundle.age", "refs": {"refs/heads/main": "d" * 40}}},
        "files": files,
    }


def _with(change) -> bytes:
    doc = _good()
    change(doc)
    return json.dumps(doc).encode()


HOSTILE = [
    # (why, bytes)
    ("a file name that is a path", _with(lambda d: d["files"].update({"../x.age": d["files"].pop(CONFIG_FILE)}))),
    ("an absolute file name", _with(lambda d: d["environments"]["p"].update(file="/etc/passwd.age"))),
    ("a bundle the files do not list", _with(lambda d: d["environments"]["p"].update(file="env-q.bundle.age"))),
    ("a listed file nothing names", _with(lambda d: d["files"].update({"extra.age": d["files"][STATE_FILE]}))),
    ("no state file", _with(lambda d: d["files"].pop(STATE_FILE))),
    ("a boolean as a size", _with(lambda d: d["files"][STATE_FILE].update(size=True))),
    ("a negative size", _with(lambda d: d["files"][STATE_FILE].update(size=-1))),
    ("a float as a count", _with(lambda d: d["state"]["tables"].update(tokens=2.0))),
    ("an upper-case hash", _with(lambda d: d["files"][STATE_FILE].update(sha256="A" * 64))),
    ("a short object id", _with(lambda d: d["environments"]["p"]["refs"].update({"refs/heads/x": "d" * 39}))),
    ("a ref outside refs/", _with(lambda d: d["environments"]["p"]["refs"].update({"HEAD": "d" * 40}))),
    ("refs without a bundle", _with(lambda d: d["environments"]["p"].update(file=None))),
    ("an unknown key", _with(lambda d: d.update(extra=1))),
    ("a missing key", _with(lambda d: d.pop("created_at"))),
    ("another format", _with(lambda d: d.update(format="tar"))),
    ("format version 0", _with(lambda d: d.update(format_version=0))),
    ("a time with an offset", _with(lambda d: d.update(created_at="2026-12-01T02:00:00+01:00"))),
    ("a duplicate key", b'{"format": "notegate-backup", "format": "notegate-backup"}'),
    ("NaN", json.dumps(_good()).replace('"format_version": 1', '"format_version": NaN').encode()),
    ("not UTF-8", b"\xff\xfe{}"),
    ("a list", b"[]"),
    ("deep nesting", b"[" * 100_000 + b"]" * 100_000),
    ("larger than the cap", b" " * ((1 << 20) + 1) + b"{}"),
]


def test_the_good_manifest_parses() -> None:
    assert parse_manifest(json.dumps(_good()).encode()).environments["p"].refs == {"refs/heads/main": "d" * 40}


@pytest.mark.parametrize("raw", [raw for _, raw in HOSTILE], ids=[why for why, _ in HOSTILE])
def test_each_hostile_manifest_is_refused_by_its_rule(raw: bytes) -> None:
    with pytest.raises(ManifestInvalid) as caught:
        parse_manifest(raw)
    assert caught.value.rule == "backup-manifest-invalid"
    assert "\n" not in caught.value.explain()


def test_the_seal_reads_back_and_refuses_anything_else() -> None:
    seal = Seal("e" * 64, (RecordedQuery("p", "digest", ("rules/digest.md",)),), "p", "rules/digest.md", "f" * 64)
    assert parse_seal(seal.to_json()) == seal
    for raw in (b"{}", b'{"manifest_sha256": "x", "queries": [], "read": null}', b"null"):
        with pytest.raises(ManifestInvalid):
            parse_seal(raw)


def _quiet_parse(text: str) -> None:
    with contextlib.suppress(ManifestInvalid):
        parse_manifest(text.encode())


def _many_refs(n: int) -> str:
    doc = _good()
    refs = {f"refs/heads/b{i:07d}": "d" * 40 for i in range(n // 70)}
    doc["environments"]["p"]["refs"] = refs
    return json.dumps(doc)


def test_the_parser_grows_linearly() -> None:
    assert_linear(_quiet_parse, _many_refs)  # a valid manifest with many refs
    assert_linear(_quiet_parse, lambda n: fill('{"a": ', n))  # an unclosed nest (refused)
    assert_linear(_quiet_parse, lambda n: '"' + fill("\\u00e9", n) + '"')  # one long escaped string


def test_the_ratio_catches_a_quadratic_scan() -> None:
    assert_catches_quadratic(_many_refs)


# ------------------------------------------------------------------ the decisions (policy.py)
@pytest.mark.parametrize(
    ("exists", "entries", "rule"),
    [(False, 0, "restore-target"), (True, 0, "restore-target"), (True, 1, "restore-target-not-empty")],
)
def test_restore_target(exists: bool, entries: int, rule: str) -> None:
    decision = decide_restore_target(exists, entries)
    assert (decision.rule, decision.allowed) == (rule, rule == "restore-target")


@pytest.mark.parametrize(
    ("fmt", "schema", "rule"),
    [
        (1, 1, "backup-manifest"),
        (1, 2, "backup-manifest-newer"),
        (2, 1, "backup-manifest-newer"),
        (1, 0, "backup-manifest"),
    ],
)
def test_manifest_version(fmt: int, schema: int, rule: str) -> None:
    decision = decide_backup_manifest(fmt, schema, supported_format=1, supported_schema=1)
    assert (decision.rule, decision.allowed) == (rule, rule == "backup-manifest")


@pytest.mark.parametrize(
    ("present", "size", "digest", "rule"),
    [
        (True, 10, "a", "backup-file"),
        (False, 0, "", "backup-file-missing"),
        (True, 9, "", "backup-file-truncated"),
        (True, 0, "", "backup-file-truncated"),
        (True, 11, "", "backup-file-altered"),  # longer than recorded: something was added
        (True, 10, "b", "backup-file-altered"),
    ],
)
def test_backup_file(present: bool, size: int, digest: str, rule: str) -> None:
    decision = decide_backup_file(
        "x.age", present=present, expected_size=10, size=size, expected_sha256="a", sha256=digest
    )
    assert (decision.rule, decision.allowed) == (rule, rule == "backup-file")
    assert decision.allowed or "x.age" in decision.reason


# ------------------------------------------------------------------ the restored config
toml_scalars = st.booleans() | st.integers(-(1 << 60), 1 << 60) | st.text(max_size=20)
toml_keys = st.text(min_size=1, max_size=10)
toml_docs = st.recursive(
    st.dictionaries(toml_keys, toml_scalars | st.lists(st.text(max_size=10), max_size=3), max_size=4),
    lambda inner: st.dictionaries(toml_keys, inner, max_size=3),
    max_leaves=12,
)


@settings(deadline=None)
@given(toml_docs)
def test_the_restored_config_reads_back_as_the_same_document(doc: dict) -> None:
    assert tomllib.loads(render_toml(doc)) == doc


# ------------------------------------------------------------------ the state database's online backup
def test_an_online_backup_is_one_committed_state_while_a_writer_goes_on(tmp_path: Path) -> None:
    db = StateDB(tmp_path / "state.sqlite")
    stop = threading.Event()
    written = [0]

    def write() -> None:
        writer = StateDB(tmp_path / "state.sqlite")
        while not stop.is_set():
            with writer.tx() as conn:  # two rows per transaction: a torn copy would hold an odd count
                conn.execute("INSERT INTO previews (key, expires_at) VALUES (?, 1)", (f"a{written[0]}",))
                conn.execute("INSERT INTO previews (key, expires_at) VALUES (?, 1)", (f"b{written[0]}",))
            written[0] += 1
        writer.close()

    thread = threading.Thread(target=write)
    thread.start()
    try:
        while written[0] < 20:
            pass
        copies = []
        for i in range(3):
            copy = tmp_path / f"copy{i}.sqlite"
            db.backup_to(copy)
            copies.append(copy)
    finally:
        stop.set()
        thread.join()
    for copy in copies:
        assert integrity_problems(copy) == []
        assert not Path(f"{copy}-wal").exists()  # self-contained: no WAL beside it
        count = sqlite3.connect(copy).execute("SELECT COUNT(*) FROM previews").fetchone()[0]
        assert count % 2 == 0 and 40 <= count <= 2 * written[0]
    restored = StateDB(copies[-1])
    assert (
        restored.table_counts()["previews"]
        == sqlite3.connect(copies[-1]).execute("SELECT COUNT(*) FROM previews").fetchone()[0]
    )
    assert set(restored.secret_digests()) == {"tokens", "oauth_tokens", "elevation_grants"}
    restored.close()
    db.close()
