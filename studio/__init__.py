"""The shared Streamlit layer of ResearchTown Studio (the pages in pages/ use it).

- state: the per-browser-session schema, neighbourhood edits, share links, live runs
- request: provider presets, the one key precedence, session -> RunRequest
- resources: cached, process-wide objects (the store, presets, picker data)
- render: safe text, error and flash messages, captions, the sidebar
- charts: the community graph and bar charts (plotly); graphview: where the graph's nodes
  and labels go; chance: the chance band beside a run's similarity

Every piece of text that came from a model, a paper source or an upload is
untrusted: it is shown with render.show_text (no Markdown, no HTML), or after
render.md_escape where Streamlit parses Markdown. Nothing uses unsafe_allow_html.
"""
