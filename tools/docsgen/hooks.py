"""MkDocs hooks (``mkdocs.yml``: ``hooks:``): add the generated reference pages and the printable security
model to the site as it is built. Nothing is written into ``docs/``: each page exists only in the build."""

from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/, so `docsgen` imports

from docsgen import PAGES
from docsgen.printview import PRINT_PAGE, print_page


def on_files(files, config):
    from mkdocs.structure.files import File

    for path, module in PAGES.items():
        files.append(File.generated(config, path, content=import_module(f"docsgen.{module}").page()))
    files.append(File.generated(config, PRINT_PAGE, content=print_page(Path(config["docs_dir"]), config["nav"])))
    return files
