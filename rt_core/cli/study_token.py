"""`python -m rt_core study-token CODE`: an organiser token for a study made before organiser
tokens existed (the m009 migration left it without one, so no one could open its results or
close it). Only the store's operator runs the command line, which is why it, and not the app,
gives the token out; a study that has a token keeps it (rt_core.store.studies)."""
from __future__ import annotations

from urllib.parse import urlencode

from ..store import open_store


def add_parser(sub) -> None:
    t = sub.add_parser("study-token", help="give an older study (made before organiser links) "
                       "its organiser token, printed once")
    t.add_argument("code", help="the study's code (the six characters of its rater link)")
    t.set_defaults(fn=cmd_study_token)


def cmd_study_token(args) -> int:
    store = open_store(args.db)
    token = store.studies.issue_organiser_token(args.code)
    study = store.studies.by_code(args.code)
    print(f"Organiser token of study {study['code']} ({study['name']}), shown once: {token}")
    print("Paste it on the app's Study results page, or open "
          f"<the app's address>/study_results?{urlencode({'organiser': token})}")
    return 0
