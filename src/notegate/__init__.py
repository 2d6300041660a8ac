"""notegate: one shared Markdown memory for every AI session, versioned in git, behind one guarded door."""

__version__ = "0.1.0"
