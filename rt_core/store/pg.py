"""PostgreSQL behind the same connection interface the store uses for SQLite.

The store's SQL is written once, in SQLite's spelling; this module is the one place that
knows how PostgreSQL differs, so `corpus.py`, `runs.py` and the rest never ask which
engine they hold:

- `?` placeholders become `%s` (and a literal `%` becomes `%%`);
- `BEGIN IMMEDIATE` (SQLite: one writer at a time) becomes `BEGIN` plus a transaction-level
  advisory lock, so read-then-write transactions stay serialised exactly as on SQLite;
- `DESC` sorts NULLs last and `LIKE` ignores case, as SQLite does;
- SQLite's `datetime`, `json_extract` and `json_set` exist as small SQL functions
  (`COMPAT_FUNCTIONS`, created before migrations run);
- migration DDL: `BLOB` is `BYTEA`, `REAL` is `DOUBLE PRECISION` (PostgreSQL's REAL has
  only six digits), `INTEGER PRIMARY KEY AUTOINCREMENT` is an identity column;
- rows answer both `row[0]` and `row["name"]`, like `sqlite3.Row`;
- PostgreSQL text cannot hold the NUL character, which SQLite stores: it is written as
  U+FFFD (the replacement character) rather than failing the write.

Full-text search differs too much for rewriting and lives in `search.py`.
"""
from __future__ import annotations

import functools
import re
from urllib.parse import urlsplit

import psycopg
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import TransactionStatus
from psycopg.types.string import StrDumperUnknown

from ..errors import ConfigError, RTError

WRITE_LOCK = 0x5254_5354  # the advisory lock id every writing transaction takes ("RTST")
CONNECT_TIMEOUT = 10

COMPAT_FUNCTIONS = (
    # SQLite's datetime('now') and datetime('now', '-7 days'): UTC text, second precision.
    """CREATE OR REPLACE FUNCTION datetime(t text) RETURNS text LANGUAGE sql STABLE AS
       $$ SELECT to_char((CASE WHEN t = 'now' THEN now() ELSE t::timestamptz END)
                         AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') $$""",
    """CREATE OR REPLACE FUNCTION datetime(t text, modifier text) RETURNS text LANGUAGE sql
       STABLE AS $$ SELECT to_char((CASE WHEN t = 'now' THEN now() ELSE t::timestamptz END)
                         AT TIME ZONE 'UTC' + modifier::interval, 'YYYY-MM-DD HH24:MI:SS') $$""",
    # json_extract / json_set over JSON kept as text, for '$.a.b' paths.
    """CREATE OR REPLACE FUNCTION json_extract(doc text, path text) RETURNS text
       LANGUAGE sql IMMUTABLE AS
       $$ SELECT (doc::jsonb) #>> string_to_array(substr(path, 3), '.') $$""",
    """CREATE OR REPLACE FUNCTION json_set(doc text, path text, val text) RETURNS text
       LANGUAGE sql IMMUTABLE AS
       $$ SELECT jsonb_set(doc::jsonb, string_to_array(substr(path, 3), '.'),
                           to_jsonb(val))::text $$""",
)


class StoreUnavailable(RTError):
    """The PostgreSQL server went away (restart, network): this call failed, the next one
    reconnects."""

    hint = ("Check that the PostgreSQL server is running; finished work is kept, and an "
            "interrupted run can be resumed once the server is back.")


def display_url(url: str) -> str:
    """The URL without its password, for messages, logs and the Settings page."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "postgresql://(unreadable address)"
    user = f"{parts.username}@" if parts.username else ""
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"


def check_url(url: str) -> None:
    """A malformed URL is named before any connection is tried."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError on a port that is not a number)
        conninfo_to_dict(url)
    except (ValueError, psycopg.ProgrammingError) as exc:
        raise ConfigError(f"RT_DB is not a valid PostgreSQL address: {display_url(url)} ({exc})",
                          "Write it as postgresql://user:password@host:5432/database.") from None
    if not parts.path.strip("/"):
        raise ConfigError(f"RT_DB names no database: {display_url(url)}",
                          "Add the database name: postgresql://user:password@host:5432/database.")


def connect(url: str, reached_before: bool = False) -> PgConnection:
    """A new connection. Failing to reach a server this store has reached before is an
    outage (`StoreUnavailable`: finished work is kept, resume later), not a wrong address."""
    try:
        raw = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT,
                              row_factory=_row_factory)
    except psycopg.OperationalError as exc:
        reason = (str(exc).strip().splitlines() or ["no reason given"])[-1]
        if reached_before:
            raise StoreUnavailable(f"the PostgreSQL store at {display_url(url)} cannot be reached "
                                   f"any more: {reason}") from None
        raise ConfigError(f"cannot open the PostgreSQL store at {display_url(url)}: {reason}",
                          "Start the server, or check the host, port, user, password and "
                          "database name in RT_DB (or --db).") from None
    raw.adapters.register_dumper(str, _NulSafeStr)
    # Plan every statement for its own values: a prepared (generic) plan cannot tell a word
    # in most papers from a rare one, and picks one slow plan for both.
    raw.prepare_threshold = None
    return PgConnection(raw, url)


class _NulSafeStr(StrDumperUnknown):
    def dump(self, obj: str):
        return super().dump(obj.replace("\x00", "\ufffd"))


class PgConnection:
    """The subset of `sqlite3.Connection` the store uses, over one psycopg connection."""

    dialect = "postgresql"

    def __init__(self, raw: psycopg.Connection, url: str = ""):
        self.raw = raw
        self.url = url

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != TransactionStatus.IDLE

    @property
    def broken(self) -> bool:
        """Lost (the server went away): the store opens a new connection instead."""
        return self.raw.closed or self.raw.broken

    def execute(self, sql: str, params=()):
        try:
            if sql.strip().upper() == "BEGIN IMMEDIATE":
                self.raw.execute("BEGIN")
                return self.raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            return self.raw.execute(translate(sql), tuple(params))
        except psycopg.OperationalError as exc:
            self._lost(exc)
            raise

    def executemany(self, sql: str, seq) -> None:
        try:
            with self.raw.cursor() as cur:
                cur.executemany(translate(sql), [tuple(p) for p in seq])
        except psycopg.OperationalError as exc:
            self._lost(exc)
            raise

    def _lost(self, exc: Exception) -> None:
        """A lost connection becomes one clear error; other operational errors stay as they are."""
        if self.broken:
            reason = (str(exc).strip().splitlines() or ["connection lost"])[0]
            raise StoreUnavailable(f"lost the connection to the PostgreSQL store at "
                                   f"{display_url(self.url)}: {reason}") from None

    def executescript_ddl(self, statement: str) -> None:
        """One migration statement, with SQLite's column types spelled for PostgreSQL."""
        self.execute(translate_ddl(statement))

    def close(self) -> None:
        self.raw.close()

    def __del__(self) -> None:  # a thread that ended takes its connection with it
        self.raw.close()


@functools.lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    out, quote = [], ""
    for ch in sql:
        if quote:
            out.append("%%" if ch == "%" else ch)
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        else:
            out.append({"?": "%s", "%": "%%"}.get(ch, ch))
    text = "".join(out)
    text = re.sub(r"\bDESC\b(?!\s+NULLS)", "DESC NULLS LAST", text, flags=re.IGNORECASE)
    return re.sub(r"\bLIKE\b", "ILIKE", text)


def translate_ddl(sql: str) -> str:
    sql = re.sub(r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b",
                 "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", sql)
    sql = re.sub(r"\bBLOB\b", "BYTEA", sql)
    return re.sub(r"\bREAL\b", "DOUBLE PRECISION", sql)


def install_compat(conn: PgConnection) -> None:
    for statement in COMPAT_FUNCTIONS:
        conn.raw.execute(statement)


@functools.lru_cache(maxsize=256)
def _row_class(names: tuple[str, ...]) -> type:
    index = {n: i for i, n in enumerate(names)}

    class Row(tuple):
        """A tuple that also answers by column name (what sqlite3.Row offers)."""

        __slots__ = ()

        def __getitem__(self, key):
            if isinstance(key, str):
                return tuple.__getitem__(self, index[key])
            return tuple.__getitem__(self, key)

        def keys(self) -> list[str]:
            return list(names)

    return Row


def _row_factory(cursor):
    if cursor.description is None:
        return tuple
    cls = _row_class(tuple(d.name for d in cursor.description))
    return cls
