"""How the Run page's widgets keep their values while the user is on another page.

Streamlit's own `persist_state="session"`, on every widget keyed by a setting in
`state.PERSISTENT`. The older cure, writing every value back (`ss[k] = ss[k]`) on every
run, made each Run-page rerun send every field's value, as it was when that run started,
back to the browser. A rerun that started before the user committed a field could land
after they had typed, and the browser kept the older value: the Base URL that reverted to
the provider's preset in the browser tests, and for real users in the same rare case.
A value the app itself sets (a provider preset, settings restored from History) is still
a plain session-state write, which Streamlit sends to the field once.
"""
from __future__ import annotations

ACROSS_PAGES = "session"
