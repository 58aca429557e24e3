"""A run, its candidates and its sources as files (Markdown, JSON, CSV, BibTeX)."""
