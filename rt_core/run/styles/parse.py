"""Reading model output back into structure, whatever heading style it used.

Models write the five questions as `[Question 1]`, `**[Question 1] - What is
the problem?**`, `### Q1`, `Question 1:`, `1.`, as JSON, or under the bare
question text, often after a title line. Parsers here return what they found
and say what is missing; they never invent or silently blank a part.
"""
from __future__ import annotations

import json
import re

from ...fiveq import QUESTION_KEYS

_DECOR = r"[\s#>*_`|]*"
# Strong headings name the question explicitly: [Question 1], Question 1, Q1.
_STRONG = re.compile(
    rf"^{_DECOR}(?:\[\s*(?:question|q)\s*([1-5])\s*\]|(?:question|q)\s*([1-5])\b)"
    rf"{_DECOR}(?:[-–—:.)]{_DECOR})?(.*)$", re.IGNORECASE)
# Weak headings are bare list numbers: "1." "2)" — only trusted in sequence.
_WEAK = re.compile(rf"^{_DECOR}([1-5])\s*[.):]\s*{_DECOR}(.*)$")
_TITLES = [
    (1, r"what\s+is\s+the\s+(?:research\s+)?problem"),
    (2, r"why\s+is\s+it\s+(?:interesting|important)"),
    (3, r"why\s+is\s+it\s+hard"),
    (4, r"why\s+ha(?:s|s\s*n['’]?t|ve|s\s+not)\s*(?:it\s+)?(?:not\s+)?(?:been\s+)?solved"),
    (5, r"what\s+are\s+the\s+key\s+components"),
]
_TITLE_RES = [(n, re.compile(rf"^{_DECOR}{pat}[^?\n]*\??{_DECOR}[-–—:]?{_DECOR}(.*)$", re.I))
              for n, pat in _TITLES]
_TITLE_ANY = re.compile("|".join(p for _, p in _TITLES), re.I)


def _clean_answer(text: str) -> str:
    text = text.strip()
    text = re.sub(r"^[\s*_`#]+|[\s*_`]+$", "", text)
    return text.strip()


def _strip_title_prefix(rest: str) -> str:
    """Drop a repeated question title or a short label ('Research question:') from a heading line."""
    rest = rest.strip().strip("*_` ")
    m = _TITLE_ANY.match(rest)
    if m:
        tail = rest[m.end():]
        tail = re.sub(r"^[^?]*\?", "", tail, count=1) if "?" in tail[:80] else tail
        rest = tail.strip().lstrip("*_`:-–— ").strip()
    label = re.match(r"^([A-Za-z][\w' ]{0,40}?):\s+(.+)$", rest)
    if label and len(label.group(1).split()) <= 6:
        rest = label.group(2)
    return rest.strip("*_` ")


def json_object(text: str) -> dict | None:
    """The outermost {...} in a reply (models wrap JSON in prose or code fences), or None."""
    m = re.search(r"\{.*\}", text or "", re.S)
    if not m:
        return None
    try:
        data = json.loads(m.group(0))
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def _from_json(text: str) -> dict[str, str] | None:
    data = json_object(text)
    if data is None:
        return None
    out = {}
    for i, key in enumerate(QUESTION_KEYS, 1):
        for cand in (key, key.upper(), f"question{i}", f"question_{i}", f"Question {i}", str(i)):
            if isinstance(data.get(cand), str) and data[cand].strip():
                out[key] = data[cand].strip()
                break
    return out or None


def parse_five_questions(text: str) -> tuple[dict[str, str], list[str]]:
    """Return ({'q1': ..., ...}, missing keys). Preambles and titles are ignored."""
    text = text or ""
    found = _from_json(text)
    if found is None:
        found = _from_headings(text)
    answers = {k: found.get(k, "") for k in QUESTION_KEYS}
    missing = [k for k in QUESTION_KEYS if not answers[k].strip()]
    return answers, missing


def _from_headings(text: str) -> dict[str, str]:
    lines = text.splitlines()
    strong = any(_STRONG.match(line) for line in lines)
    titled = sum(1 for line in lines if any(r.match(line) for _, r in _TITLE_RES)) >= 2
    sections: dict[int, list[str]] = {}
    current: int | None = None
    for line in lines:
        n, rest = _heading(line, strong, titled, current)
        if n is not None and n not in sections:
            current = n
            sections[n] = [rest] if rest else []
            continue
        if current is not None:
            sections[current].append(line)
    return {f"q{n}": _clean_answer("\n".join(body)) for n, body in sections.items()}


def _heading(line: str, strong: bool, titled: bool, current: int | None) -> tuple[int | None, str]:
    if strong:
        m = _STRONG.match(line)
        if m:
            return int(m.group(1) or m.group(2)), _strip_title_prefix(m.group(3))
        return None, ""
    if titled:
        for n, r in _TITLE_RES:
            m = r.match(line)
            if m:
                return n, _strip_title_prefix(m.group(1))
        return None, ""
    m = _WEAK.match(line)
    if m and int(m.group(1)) == (current or 0) + 1:
        return int(m.group(1)), _strip_title_prefix(m.group(2))
    return None, ""


# -- reviews --------------------------------------------------------------------

_SECTION = re.compile(
    rf"^{_DECOR}(strengths?|weaknesses?|(?:overall\s+)?(?:score|rating))\b{_DECOR}[:\-–—]?{_DECOR}(.*)$",
    re.IGNORECASE)


_RANGE = re.compile(r"\(?\b1\s*(?:-|–|to)\s*10\b\)?|\(?\bout\s+of\s+10\b\)?|\bon\s+a\s+scale\b|\bscale\b",
                    re.I)
# A line that declares the score: "Score: 7", "**Overall rating** - 6/10", "Score (1-10): 8".
# The label may not hold digits (after the scale is removed), so "Question 1" is never a label.
_SCORE_LINE = re.compile(rf"^{_DECOR}(?:overall\s+|final\s+)?(?:score|rating)\b[^:\n\d]{{0,40}}?"
                         rf"[:=\-–—]{_DECOR}(.*)$", re.I)
# The declared value itself: a number at the start, optionally "/10", and no other digit after it.
_SCORE_VALUE = re.compile(r"^[\s*_`\"'(]*(\d{1,2}(?:\.\d+)?)(?!\.?\d)(\s*/\s*10\b)?(.*)$", re.S)


def _score_value(text: str) -> int | None:
    """The number a declared value starts with; a later number makes it ambiguous unless
    the value says '/10' ('8/10, though 2 issues remain' is 8; '2 issues, so 4' is None)."""
    m = _SCORE_VALUE.match(_RANGE.sub(" ", text or "").strip())
    if not m or (not m.group(2) and re.search(r"\d", m.group(3))):
        return None
    value = float(m.group(1))
    return int(value + 0.5) if 1 <= value <= 10 else None


def parse_score(text: str) -> int | None:
    """The 1-10 score a reply *declares*, or None. Declared means: a 'Score:' (or 'Rating:')
    line whose value starts with the number ('Score: 6.5' -> 7, half up; 'Overall score
    (1-10): 8' -> 8, the restated scale is not the score), the number on the line after a
    bare 'Score:' heading, or a reply that is nothing but the number ('7', '7/10', a schema
    field). Numbers anywhere else ('There are 2 issues, so I give 4', '[Question 1]') are
    never taken as the score: the caller asks again instead of guessing."""
    text = text or ""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _SCORE_LINE.match(_RANGE.sub(" ", line))
        if not m:
            continue
        value = m.group(1).strip()
        if not value:  # "Score:" alone: the value is on the next non-empty line
            value = next((x for x in lines[i + 1:] if x.strip()), "")
        return _score_value(value)
    return _score_value(text) if len(lines) <= 1 else None


def strip_heading(text: str) -> str:
    """A re-asked part sometimes comes back under its heading ('[Question 5] ...', 'Q5:',
    or the question title): drop that first line's heading and keep *all* the rest, so an
    answer that is a numbered list is not cut to its first item."""
    lines = (text or "").strip().splitlines()
    if not lines:
        return ""
    first, body = lines[0], lines[1:]
    m = _STRONG.match(first)
    rest = None
    if m:
        rest = _strip_title_prefix(m.group(3))
    else:
        for _, r in _TITLE_RES:
            t = r.match(first)
            if t:
                rest = _strip_title_prefix(t.group(1))
                break
    if rest is None:
        return _clean_answer(text)
    return _clean_answer("\n".join(([rest] if rest else []) + body))


def parse_review(text: str) -> tuple[dict[str, object], list[str]]:
    """Return ({'strengths', 'weaknesses', 'score'}, missing parts)."""
    text = text or ""
    data = _review_from_json(text)
    if data is None:
        data = _review_from_sections(text)
    missing = [k for k in ("strengths", "weaknesses") if not str(data.get(k) or "").strip()]
    if data.get("score") is None:
        missing.append("score")
    return data, missing


def _review_from_json(text: str) -> dict | None:
    obj = json_object(text)
    if obj is None or not ({"strengths", "weaknesses"} & set(obj)):
        return None

    def as_text(v):
        return "\n".join(f"- {x}" for x in v) if isinstance(v, list) else str(v or "")

    score = obj.get("score", obj.get("rating"))
    return {"strengths": as_text(obj.get("strengths")).strip(),
            "weaknesses": as_text(obj.get("weaknesses")).strip(),
            "score": parse_score(str(score)) if score is not None else None}


def _review_from_sections(text: str) -> dict:
    parts: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            word = m.group(1).lower()
            current = ("strengths" if word.startswith("strength") else
                       "weaknesses" if word.startswith("weakness") else "score")
            parts.setdefault(current, [])
            if m.group(2).strip():
                parts[current].append(m.group(2))
            continue
        if current:
            parts[current].append(line)
    return {"strengths": _clean_answer("\n".join(parts.get("strengths", []))),
            "weaknesses": _clean_answer("\n".join(parts.get("weaknesses", []))),
            "score": parse_score(text) if "score" in parts else None}


def split_bullets(text: str) -> list[str]:
    """Points of a review: list items if there are any, else sentences."""
    items = []
    for line in (text or "").splitlines():
        m = re.match(r"^\s*(?:[-*•‣]|\d+[.)])\s+(.*\S)", line)
        if m:
            items.append(m.group(1).strip())
        elif items and line.strip() and not re.match(r"^\s*$", line):
            items[-1] += " " + line.strip()
    if items:
        return items
    sentences = re.split(r"(?<=[.!?])\s+", (text or "").strip())
    return [s.strip() for s in sentences if len(s.strip()) > 3]


def parse_judge(text: str) -> dict | None:
    return json_object(text)
