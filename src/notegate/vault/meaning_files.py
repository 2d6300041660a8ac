"""Search by meaning's model files: which pinned artifact they come from, their digests and where they are
installed, in one place (the install step, the loader and the start-up check of ``[server] search_meaning``
all read these names).

Why files and not the ``wordllama`` package: notegate uses two of its files (the 16 MB table of one model and
its tokenizer description), not its code; the package with its dependencies (``tokenizers``,
``huggingface-hub``, ``hf-xet``...) grew an install by ~70 MB more than the two files, over issue 33's 100 MB.
The install step (``python -m notegate.vault.meaning_model install``, run by ``make``) downloads the pinned
wheel with pip, checks its digest, and copies these files out of it, each checked against its digest here;
nothing is downloaded at run time.  WordLlama is MIT-licensed: its licence is copied beside the files.

Pure: names and digests only.
"""

from __future__ import annotations

#: The ``meaning`` extra (pyproject.toml): what search by meaning imports beside the standard library.
MEANING_PACKAGES = ("numpy",)

PACKAGE = "wordllama"
VERSION = "0.4.0.post1"
#: One wheel of the release, whatever the machine (the files are data, the same in every wheel of it): pip
#: is asked for this platform and Python, so one digest pins it.
WHEEL = "wordllama-0.4.0.post1-cp311-cp311-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
WHEEL_SHA256 = "42c2c88907ace0b0681ac6f9092d6a300a6409a5d2d61071a3fb5e7159370c97"
WHEEL_PLATFORM = ("manylinux2014_x86_64", "3.11", "cp", "cp311")  # pip's --platform, --python-version, ...

WEIGHTS = "l2_supercat_256.safetensors"
TOKENIZER = "l2_supercat_tokenizer_config.json"
LICENSE = "LICENSE"
#: Installed name -> (its path inside the wheel, its SHA-256).
FILES: dict[str, tuple[str, str]] = {
    WEIGHTS: (
        "wordllama/weights/l2_supercat_256.safetensors",
        "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5",
    ),
    TOKENIZER: (
        "wordllama/tokenizers/l2_supercat_tokenizer_config.json",
        "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68",
    ),
    LICENSE: (
        "wordllama-0.4.0.post1.dist-info/licenses/LICENSE",
        "a1e482c45bfab76056845e542ad4c95acfc4f38dd63be1c5b663c16065529fc8",
    ),
}
#: Where the files live, under the environment's prefix (``sys.prefix``: the virtual environment notegate
#: is installed in), beside what pip installed.
PARTS = ("share", "notegate", f"{PACKAGE}-{VERSION}")
INSTALL_COMMAND = "python -m notegate.vault.meaning_model install"
