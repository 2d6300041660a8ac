"""`notegate backup` and `notegate restore` as the owner runs them: real CLI processes, real git repositories,
a real server on loopback.  Backup -> restore --to -> serve; --rehearse passes its named checks, also for a
backup taken while a server was accepting writes; and every failure mode is refused with its exact rule."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pygit2
import pyrage
import pytest

from notegate.config import load_config
from notegate.services.backup_manifest import CONFIG_FILE, MANIFEST_NAME, SEAL_NAME, STATE_FILE
from notegate.state import SCHEMA_VERSION, StateDB
from support import Server, mcp_http, mint, notegate, text_of
from support.backup import CHECKS, keypair, make_backup, refused_with, restore

pytestmark = pytest.mark.anyio


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, str]:
    return keypair(tmp_path)


@pytest.fixture
def backup(vault: Path, tmp_path: Path, keys: tuple[Path, str]) -> Path:
    mint(vault, name="laptop")
    return make_backup(vault, tmp_path / "backups", keys[1])


# ------------------------------------------------------------------ the promises
async def test_backup_restores_into_a_new_directory_that_serves_it(
    vault: Path, backup: Path, keys: tuple[Path, str], tmp_path: Path
) -> None:
    listing = sorted(p.name for p in backup.iterdir())
    assert listing == sorted([CONFIG_FILE, MANIFEST_NAME, SEAL_NAME, STATE_FILE, "env-personal.bundle.age"])
    assert all((p.stat().st_mode & 0o077) == 0 for p in backup.iterdir())  # the owner's only
    target = tmp_path / "restored"
    done = restore(backup, "--identity", str(keys[0]), "--to", str(target))
    assert done.returncode == 0, done.stderr
    config = load_config(target / "notegate.toml")
    assert config.state_dir == (target / "state").resolve()
    assert config.environment("personal").origin_url == str((target / "origins" / "personal.git").resolve())
    original = pygit2.Repository(str(load_config(vault).environment("personal").origin_url))
    restored = pygit2.Repository(config.environment("personal").origin_url)
    assert restored.references["refs/heads/main"].target == original.references["refs/heads/main"].target
    db = StateDB(config.state_dir / "state.sqlite")
    try:
        assert [row["name"] for row in db.tokens()] == ["laptop"]  # the token survived, by its hash
    finally:
        db.close()
    server = Server(target / "notegate.toml").start()
    try:
        async with mcp_http(server.url, mint(target / "notegate.toml", name="after")) as client:
            read = await client.call_tool("read_note", {"path": "rules/digest.md"})
            assert not read.is_error, text_of(read)
            blob = original.revparse_single("main:rules/digest.md")
            assert read.structured_content["text"].encode() == blob.data
    finally:
        server.stop()
    # a second restore into the same (now full) directory is refused, nothing touched
    again = restore(backup, "--identity", str(keys[0]), "--to", str(target))
    refused_with(again, "restore-target-not-empty")
    assert sorted(p.name for p in target.iterdir()) == [
        "notegate.toml",
        "origins",
        f"serve-{server.port}.log",
        "state",
    ]


@pytest.mark.parametrize("as_json", [False, True])
def test_rehearse_passes_every_named_check(backup: Path, keys: tuple[Path, str], as_json: bool) -> None:
    done = restore(backup, "--identity", str(keys[0]), "--rehearse", *(["--json"] if as_json else []))
    assert done.returncode == 0, done.stdout + done.stderr
    if as_json:
        checks = json.loads(done.stdout)
        assert [(c["check"], c["status"]) for c in checks] == [(name, "pass") for name in CHECKS]
        return
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines[:-1]] == [f"PASS {name}" for name in CHECKS]
    assert lines[-1] == f"Rehearsal: {len(CHECKS)} of {len(CHECKS)} checks passed"


async def test_a_backup_taken_while_the_server_accepts_writes_restores_consistently(
    vault: Path, tmp_path: Path, keys: tuple[Path, str]
) -> None:
    server = Server(vault).start()
    token = mint(vault, name="writer", tier="trusted")
    acknowledged: list[tuple[float, str]] = []  # (when the write returned, its path)
    stop = threading.Event()
    errors: list[str] = []

    async def write_until_stopped() -> None:
        async with mcp_http(server.url, token) as client:
            i = 0
            while not stop.is_set():
                path = f"notes/n{i}.md"
                result = await client.call_tool(
                    "write_note",
                    {"path": path, "content": f"# n{i}\n\nbody {i}\n", "base_revision": "absent", "confirmed": True},
                )
                if result.is_error or result.structured_content["status"] != "committed":
                    errors.append(text_of(result))
                    return
                acknowledged.append((time.monotonic(), path))
                i += 1

    import anyio

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(write_until_stopped)
            while len(acknowledged) < 3:
                await anyio.sleep(0.01)
            started = time.monotonic()
            folder = await anyio.to_thread.run_sync(make_backup, vault, tmp_path / "backups", keys[1])
            while len(acknowledged) < 3 + sum(1 for at, _ in acknowledged if at < started):
                await anyio.sleep(0.01)  # writes went on during and after the backup
            stop.set()
    finally:
        server.stop()
    assert not errors, errors
    before = {path for at, path in acknowledged if at < started}
    rehearsal = restore(folder, "--identity", str(keys[0]), "--rehearse")
    assert rehearsal.returncode == 0, rehearsal.stdout + rehearsal.stderr
    assert rehearsal.stdout.count("PASS ") == len(CHECKS)
    target = tmp_path / "restored"
    assert restore(folder, "--identity", str(keys[0]), "--to", str(target)).returncode == 0
    restored = pygit2.Repository(str(target / "origins" / "personal.git"))
    tree = restored.revparse_single("main").peel(pygit2.Tree)
    present = {f"notes/{entry.name}" for entry in tree["notes"].peel(pygit2.Tree)} if "notes" in tree else set()
    assert before <= present  # every write acknowledged before the backup began is in it
    # and the restored main is one real commit of the live history, not a mix
    live = pygit2.Repository(load_config(vault).environment("personal").origin_url)
    assert restored.references["refs/heads/main"].target in live


# ------------------------------------------------------------------ failure modes, each by its rule
def test_without_an_identity_it_fails_loudly(backup: Path, tmp_path: Path) -> None:
    stderr = refused_with(restore(backup, "--rehearse"), "backup-no-identity")
    assert "no identity given" in stderr
    assert not (tmp_path / "restored").exists()


def test_the_wrong_identity_is_named_as_exactly_that(backup: Path, tmp_path: Path) -> None:
    other, _ = keypair(tmp_path, "other")
    stderr = refused_with(restore(backup, "--identity", str(other), "--rehearse"), "backup-wrong-identity")
    assert "this backup is not encrypted to that identity" in stderr


def test_an_identity_file_without_an_identity_is_refused(backup: Path, tmp_path: Path) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("not a key\n")
    refused_with(restore(backup, "--identity", str(junk), "--rehearse"), "backup-identity-invalid")
    refused_with(restore(backup, "--identity", str(tmp_path / "absent.txt"), "--rehearse"), "backup-identity-invalid")


@pytest.mark.parametrize("name", [STATE_FILE, CONFIG_FILE, "env-personal.bundle.age"])
def test_a_truncated_file_is_named(backup: Path, keys: tuple[Path, str], name: str) -> None:
    path = backup / name
    path.write_bytes(path.read_bytes()[:-100])
    stderr = refused_with(restore(backup, "--identity", str(keys[0]), "--rehearse"), "backup-file-truncated")
    assert f"the backup file {name} is truncated" in stderr


@pytest.mark.parametrize("name", [STATE_FILE, "env-personal.bundle.age"])
def test_an_altered_file_is_named(backup: Path, keys: tuple[Path, str], name: str, tmp_path: Path) -> None:
    path = backup / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    stderr = refused_with(
        restore(backup, "--identity", str(keys[0]), "--to", str(tmp_path / "restored")), "backup-file-altered"
    )
    assert f"the backup file {name} was altered" in stderr
    assert not (tmp_path / "restored").exists()


def test_an_altered_manifest_is_caught_by_the_seal(backup: Path, keys: tuple[Path, str]) -> None:
    """Whoever edits a file and its entry in the plain manifest still fails: the seal holds the manifest's hash."""
    manifest = json.loads((backup / MANIFEST_NAME).read_text())
    manifest["state"]["tables"]["tokens"] += 1
    (backup / MANIFEST_NAME).write_text(json.dumps(manifest))
    stderr = refused_with(restore(backup, "--identity", str(keys[0]), "--rehearse"), "backup-file-altered")
    assert f"the backup file {MANIFEST_NAME} was altered" in stderr


def test_a_re_encrypted_file_with_its_manifest_entry_changed_is_caught(backup: Path, keys: tuple[Path, str]) -> None:
    """Someone holding the public key swaps in another state file and fixes its size and hash in the manifest."""
    manifest = json.loads((backup / MANIFEST_NAME).read_text())
    forged = pyrage.encrypt(b"SQLite format 3\x00 forged", [pyrage.x25519.Recipient.from_str(_public(keys[0]))])
    (backup / STATE_FILE).write_bytes(forged)
    import hashlib

    manifest["files"][STATE_FILE]["size"] = len(forged)
    manifest["files"][STATE_FILE]["sha256"] = hashlib.sha256(forged).hexdigest()
    (backup / MANIFEST_NAME).write_text(json.dumps(manifest))
    refused_with(restore(backup, "--identity", str(keys[0]), "--rehearse"), "backup-file-altered")


def _public(identity_file: Path) -> str:
    line = next(ln for ln in identity_file.read_text().splitlines() if ln.startswith("AGE-SECRET-KEY-"))
    return str(pyrage.x25519.Identity.from_str(line).to_public())


@pytest.mark.parametrize("name", [STATE_FILE, "env-personal.bundle.age", SEAL_NAME, MANIFEST_NAME])
def test_a_missing_file_is_named(backup: Path, keys: tuple[Path, str], name: str) -> None:
    (backup / name).unlink()
    stderr = refused_with(restore(backup, "--identity", str(keys[0]), "--rehearse"), "backup-file-missing")
    assert f"the backup file {name} is missing" in stderr


@pytest.mark.parametrize(("key", "value"), [("schema_version", SCHEMA_VERSION + 1), ("format_version", 2)])
def test_a_manifest_from_a_newer_schema_is_refused(backup: Path, keys: tuple[Path, str], key: str, value: int) -> None:
    manifest = json.loads((backup / MANIFEST_NAME).read_text())
    (manifest["state"] if key == "schema_version" else manifest)[key] = value
    (backup / MANIFEST_NAME).write_text(json.dumps(manifest))
    stderr = refused_with(restore(backup, "--identity", str(keys[0]), "--rehearse"), "backup-manifest-newer")
    assert str(value) in stderr


def test_a_folder_that_is_not_a_backup_is_refused(tmp_path: Path, keys: tuple[Path, str]) -> None:
    folder = tmp_path / "not-a-backup"
    folder.mkdir()
    (folder / MANIFEST_NAME).write_text('{"format": "something else"}')
    refused_with(restore(folder, "--identity", str(keys[0]), "--rehearse"), "backup-manifest-invalid")


def test_a_recipient_that_is_not_an_age_key_is_refused(vault: Path, tmp_path: Path) -> None:
    done = notegate("backup", "--config", str(vault), "--to", str(tmp_path / "b"), "--recipient", "ssh-ed25519 AAAA")
    refused_with(done, "backup-recipient-invalid")
    assert not any((tmp_path / "b").glob("notegate-backup-*"))


# ------------------------------------------------------------------ deploy/ examples
DEPLOY = Path(__file__).parents[2] / "deploy"


def _backup_argv_of_units() -> list[list[str]]:
    import plistlib
    import shlex

    line = next(
        x
        for x in (DEPLOY / "systemd" / "notegate-backup.service").read_text().splitlines()
        if x.startswith("ExecStart=")
    )
    with open(DEPLOY / "launchd" / "org.notegate.backup.plist", "rb") as handle:
        launchd = plistlib.load(handle)["ProgramArguments"][1:]
    return [shlex.split(line.removeprefix("ExecStart="))[1:], launchd]


@pytest.mark.parametrize("argv", _backup_argv_of_units())
def test_the_deploy_examples_call_notegate_backup_as_the_parser_knows_it(argv: list[str]) -> None:
    from notegate.cli import build_parser

    args = build_parser().parse_args(argv)
    assert args.command == "backup" and args.config.endswith("notegate.toml") and args.recipient == "age1REPLACE_ME"


def test_the_systemd_timer_runs_nightly() -> None:
    timer = (DEPLOY / "systemd" / "notegate-backup.timer").read_text()
    assert "OnCalendar=*-*-* 03:15:00" in timer and "Persistent=true" in timer


def test_a_rehearsal_that_finds_a_difference_says_fail_and_exits_1(backup: Path, keys: tuple[Path, str]) -> None:
    """A seal (re-encrypted here with the identity's own key) whose recorded hits and note differ from what the
    backup holds: the index and serve checks say FAIL, the others still PASS, exit status 1."""
    identity = pyrage.x25519.Identity.from_str(
        next(ln for ln in keys[0].read_text().splitlines() if ln.startswith("AGE-SECRET-KEY-"))
    )
    seal = json.loads(pyrage.decrypt((backup / SEAL_NAME).read_bytes(), [identity]))
    seal["queries"][0]["hits"] = ["no/such/note.md"]
    seal["read"]["sha256"] = "0" * 64
    (backup / SEAL_NAME).write_bytes(pyrage.encrypt(json.dumps(seal).encode(), [identity.to_public()]))
    done = restore(backup, "--identity", str(keys[0]), "--rehearse")
    assert done.returncode == 1
    verdicts = {line.split(":")[0].split(" ", 1)[1]: line.split(" ", 1)[0] for line in done.stdout.splitlines()[:-1]}
    assert verdicts == {name: "FAIL" if name in ("index personal", "serve") else "PASS" for name in CHECKS}
    assert "the note read over MCP differs from the one backed up" in done.stdout
    assert done.stdout.splitlines()[-1] == f"Rehearsal: {len(CHECKS) - 2} of {len(CHECKS)} checks passed"


def test_every_environment_is_backed_up_and_an_empty_one_restores_empty(
    vault: Path, tmp_path: Path, keys: tuple[Path, str]
) -> None:
    from notegate.services.notes import NotesService
    from notegate.services.runtime import Runtime
    from support.callers import make_caller

    for name in ("household", "spare"):
        pygit2.init_repository(str(vault.parent / f"{name}.git"), bare=True, initial_head="main")
    extra = (
        '[environments.household]\norigin = "household.git"\nowner = "partner"\n\n'
        '[environments.spare]\norigin = "spare.git"\nowner = "owner"\n\n[policy]'
    )
    vault.write_text(vault.read_text().replace("[policy]", extra, 1))
    runtime = Runtime(load_config(vault))
    try:
        partner = make_caller(tier="trusted", login="partner")
        partner = partner.__class__(**{**partner.__dict__, "environment": "household"})
        NotesService(runtime).write_note(
            partner, "projects/home.md", "# Home\n\nthe boiler\n", "absent", confirmed=True
        )
    finally:
        runtime.close()  # "spare" was never opened: the server has no clone of it yet
    folder = make_backup(vault, tmp_path / "backups", keys[1])
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    assert manifest["environments"]["spare"] == {"file": None, "refs": {}}
    assert manifest["environments"]["household"]["file"] == "env-household.bundle.age"
    rehearsal = restore(folder, "--identity", str(keys[0]), "--rehearse")
    assert rehearsal.returncode == 0, rehearsal.stdout + rehearsal.stderr
    for name in ("personal", "household", "spare"):
        assert f"PASS refs {name}:" in rehearsal.stdout and f"PASS index {name}:" in rehearsal.stdout
    target = tmp_path / "restored"
    assert restore(folder, "--identity", str(keys[0]), "--to", str(target)).returncode == 0
    config = load_config(target / "notegate.toml")
    assert sorted(config.environments) == ["household", "personal", "spare"]
    home = pygit2.Repository(config.environment("household").origin_url).revparse_single("main:projects/home.md")
    assert home.data == b"# Home\n\nthe boiler\n"
    spare = pygit2.Repository(config.environment("spare").origin_url)
    assert spare.head_is_unborn and list(spare.references) == []


def _identity(identity_file: Path) -> pyrage.x25519.Identity:
    return pyrage.x25519.Identity.from_str(
        next(ln for ln in identity_file.read_text().splitlines() if ln.startswith("AGE-SECRET-KEY-"))
    )


@pytest.mark.parametrize("target_exists", [False, True])
def test_a_file_that_decrypts_to_other_bytes_is_refused_and_the_target_left_as_it_was(
    backup: Path, keys: tuple[Path, str], tmp_path: Path, target_exists: bool
) -> None:
    """Someone with the identity re-encrypts another bundle, fixes the manifest and re-seals it: the
    plaintext hash recorded in the manifest still differs, and nothing of the restore is left behind."""
    import hashlib

    identity = _identity(keys[0])
    name = "env-personal.bundle.age"
    forged = pyrage.encrypt(b"# v2 git bundle\n\n", [identity.to_public()])
    (backup / name).write_bytes(forged)
    manifest = json.loads((backup / MANIFEST_NAME).read_text())
    manifest["files"][name].update(size=len(forged), sha256=hashlib.sha256(forged).hexdigest())
    raw = json.dumps(manifest).encode()
    (backup / MANIFEST_NAME).write_bytes(raw)
    seal = json.loads(pyrage.decrypt((backup / SEAL_NAME).read_bytes(), [identity]))
    seal["manifest_sha256"] = hashlib.sha256(raw).hexdigest()
    (backup / SEAL_NAME).write_bytes(pyrage.encrypt(json.dumps(seal).encode(), [identity.to_public()]))
    target = tmp_path / "restored"
    if target_exists:
        target.mkdir()
    stderr = refused_with(restore(backup, "--identity", str(keys[0]), "--to", str(target)), "backup-file-altered")
    assert f"the backup file {name} decrypted to other bytes than recorded" in stderr
    assert (target.exists(), list(target.iterdir()) if target.exists() else []) == (target_exists, [])


def test_a_backup_that_fails_leaves_no_folder(vault: Path, tmp_path: Path, keys: tuple[Path, str]) -> None:
    clone = load_config(vault).state_dir / "envs" / "personal" / "vault.git"
    (clone / "refs" / "heads" / "broken").write_text("0123456789abcdef0123456789abcdef01234567\n")
    done = notegate("backup", "--config", str(vault), "--to", str(tmp_path / "b"), "--recipient", keys[1])
    refused_with(done, "backup-failed")
    assert list((tmp_path / "b").iterdir()) == []


def test_a_file_where_the_target_should_be_is_refused(backup: Path, keys: tuple[Path, str], tmp_path: Path) -> None:
    target = tmp_path / "restored"
    target.write_text("mine\n")
    refused_with(restore(backup, "--identity", str(keys[0]), "--to", str(target)), "restore-target-not-empty")
    assert target.read_text() == "mine\n"


def test_an_oversized_seal_is_refused_before_it_is_read(backup: Path, keys: tuple[Path, str]) -> None:
    with (backup / SEAL_NAME).open("ab") as handle:
        handle.truncate(8 << 20)
    stderr = refused_with(restore(backup, "--identity", str(keys[0]), "--rehearse"), "backup-file-altered")
    assert f"the backup file {SEAL_NAME} was altered" in stderr


def test_the_backup_line_counts_the_files_it_wrote(vault: Path, tmp_path: Path, keys: tuple[Path, str]) -> None:
    done = notegate("backup", "--config", str(vault), "--to", str(tmp_path / "b"), "--recipient", keys[1])
    assert done.returncode == 0, done.stderr
    [folder] = list((tmp_path / "b").iterdir())
    written = len(list(folder.iterdir()))
    assert done.stdout.strip() == f"Backup written to {folder} ({written} files: {written - 2} encrypted)"
