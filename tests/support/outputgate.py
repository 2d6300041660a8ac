"""Answers the output gate accepts, shared by the gate's and the review's tests."""

from __future__ import annotations

from typing import Any

REFLECT_MANIFEST = ["conv:2026-11-30#12", "conv:2026-11-30#13", "note:design/notegate.md"]


REFLECT_OK: dict[str, Any] = {
    "session_state": "Designing the output gate; tests at 412 passed.",
    "proposals": [
        {
            "kind": "durable-candidate",
            "title": "Output gate refuses prose-wrapped JSON",
            "content": "Only known envelopes or one whole fenced block are unwrapped (v1.2.3, 2026-11-30).",
            "sources": ["conv:2026-11-30#12"],
            "confidence": 0.8,
            "expiry": None,
        },
        {
            "kind": "provisional-candidate",
            "title": "Grants last 4 h",
            "content": "Owner-approved grants expire after 4 hours.",
            "sources": ["conv:2026-11-30#13", "note:design/notegate.md"],
            "confidence": 1,
            "expiry": "2027-01-31",
        },
    ],
    "sources_reviewed": ["conv:2026-11-30#12", "conv:2026-11-30#13"],
    "limitations": ["Only the last 40 turns were read."],
}


SESSION_OK: dict[str, Any] = {
    "log_entry": "Built the output gate and its corpus; 412 tests pass.",
    "handoff": {
        "where_it_stopped": "Content gates done.",
        "next_step": "Wire check_output into notegate review.",
        "open_questions": "",
        "repo_state": "Clean tree on main at 3f2a9c1.",
    },
    "session_note": {
        "summary": "Output gate: strict JSON, envelopes, schemas, six content gates, citations.",
        "tags": ["notegate", "safety"],
        "bullets": [f"Bullet {i}: done." for i in range(6)],
    },
}
