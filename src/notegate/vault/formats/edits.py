"""Generic edits of notes of any shape: read one ``## <heading>`` section, append a block under one.

Used for design notes (promoted decisions land under ``## Proposed``) and other hand-written notes: the
rest of the note stays byte for byte, and front matter is skipped by its delimiters without being read.
"""

from __future__ import annotations

from notegate.vault.formats.sections import section_text, sections
from notegate.vault.frontmatter import FormatError, FrontMatterError, front_matter_end
from notegate.vault.lines import check_inline, escape_lines, strip_blank_edges


def section(text: str, heading: str) -> str | None:
    """The text of the first ``## <heading>`` section (up to the next ``#``/``##`` heading), or None.

    Undoes the layout separator and the escaping, so for notes this module
    wrote it returns exactly the text that was put in.
    """
    for found in sections(text, front_matter_end(text)):
        if found.level == 2 and found.title == heading:
            return section_text(text, found)
    return None


def append_under_heading(text: str | None, heading: str, block: str, *, title: str) -> str:
    """Append ``block`` at the end of the ``## <heading>`` section; the rest stays byte for byte.

    Used to route promoted decisions under ``## Proposed`` in design notes.
    The block's leading and trailing blank lines are dropped and its lines are
    escaped (:func:`escape_lines`), so it cannot open a section of its own.  It
    lands after the section's last non-blank line, preceded by a blank line.
    A missing section is added at the end of the note; a missing (``None`` or
    empty) note becomes ``# <title>`` plus the section.
    """
    check_inline(heading, "heading")
    check_inline(title, "title")
    if not isinstance(block, str):
        raise FormatError("the block must be a string.", rule="format-value")
    block = strip_blank_edges(block)
    if not block.strip():
        raise FormatError("the block to append is empty.", rule="format-value")
    body = escape_lines(block)
    if not text:
        return f"# {title}\n\n## {heading}\n\n{body}\n"
    start = front_matter_end(text)
    if start == 0 and text.split("\n", 1)[0].rstrip("\r") == "---":
        # An unclosed front matter: a '---' line in what we append would close it and swallow the note.
        raise FrontMatterError(
            "the note opens front matter with '---' but it is unclosed or has CRLF line endings.",
            remedy="Close the front matter with a '---' line and save the note with LF line endings.",
        )
    for found in sections(text, start):
        if found.level == 2 and found.title == heading:
            content = found.content(text)
            insert_at = found.body
            if content.strip():  # after the '\n' that ends the section's last non-blank line
                newline = content.find("\n", len(content.rstrip()))
                insert_at += len(content) if newline == -1 else newline + 1
            lead = "" if text[:insert_at].endswith("\n") else "\n"
            return text[:insert_at] + lead + f"\n{body}\n" + text[insert_at:]
    prefix = text if text.endswith("\n") else text + "\n"
    return prefix + f"\n## {heading}\n\n{body}\n"
