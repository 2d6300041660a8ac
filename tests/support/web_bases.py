"""A small vault built on Obsidian Bases, shaped like real ones (Obsidian help, "Bases syntax", "Views"): books
with typed properties (links, numbers, dates, tag lists, a cover image), a person, an archived book, a private
one, a base with three views (table sorted, cards with a cover and a view filter, list), a category page that
embeds a view and holds a ```base block, and a base using a function this console does not evaluate."""

from __future__ import annotations

BOOKS_BASE = """filters:
  and:
    - file.hasTag("book")
    - 'file.ext == "md"'
    - not:
        - file.inFolder("Archive")
formulas:
  stars: '"*".repeat(rating)'
  state: 'if(status == "read", "done", "open")'
  age_days: '((now() - finished) / 86400000).round()'
properties:
  author:
    displayName: Author
  formula.stars:
    displayName: Stars
views:
  - type: table
    name: All books
    order:
      - file.name
      - author
      - rating
      - formula.stars
      - status
    sort:
      - property: rating
        direction: DESC
    summaries:
      rating: Average
  - type: cards
    name: Shelf
    image: note.cover
    filters: 'status != "to-read"'
    order:
      - file.name
      - author
  - type: list
    name: Reading
    filters:
      and:
        - status == "reading"
    order:
      - file.name
      - formula.state
"""

UNSUPPORTED_BASE = """filters:
  and:
    - file.name.matches(/dune/i)
views:
  - type: table
    name: Regex
"""

NOTES = {
    "Books/Dune.md": """---
type: book
author: "[[Frank Herbert]]"
rating: 5
status: read
finished: 2025-03-02
tags:
  - book
  - scifi
cover: "[[dune.png]]"
---
# Dune

A desert planet. See [[Frank Herbert]].
""",
    "Books/Neuromancer.md": """---
type: book
author: William Gibson
rating: 4
status: reading
tags: [book, scifi/cyberpunk]
---
Cyberspace.
""",
    "Books/Emma.md": """---
type: book
author: Jane Austen
rating: 3
status: to-read
---
A novel. #book #classic
""",
    "People/Frank Herbert.md": "---\ntype: person\n---\n# Frank Herbert\n",
    "Archive/Old Book.md": "---\nrating: 2\nstatus: read\ntags: [book]\n---\nArchived.\n",
    "private/Secret Book.md": "---\nrating: 9\nstatus: read\ntags: [book]\n---\nNever in a view.\n",
    "Categories/Science fiction.md": """# Science fiction

![[Books.base#Shelf]]

```base
filters:
  and:
    - file.hasTag("scifi")
views:
  - type: table
    name: Sci-fi
    order: [file.name, rating]
    sort:
      - property: file.name
        direction: ASC
```
""",
}
