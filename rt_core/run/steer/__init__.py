"""Steering an idea: the user edits an answer of a finished proposal (or comments on it
as a reviewer would), and the run's community reviews, and if asked revises, from that
version. Every version is a node of a tree kept beside the run (tree.py, table.py);
community.py is the community's part, steer.py puts them together. No Streamlit here."""
