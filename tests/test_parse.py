from hypothesis import given, settings
from hypothesis import strategies as st

from rt_core.fiveq import QUESTION_KEYS, QUESTION_TITLES
from rt_core.run.styles.parse import parse_five_questions, parse_review, parse_score, split_bullets

TITLES = [QUESTION_TITLES[k] for k in QUESTION_KEYS]
STYLES = {
    "bracket": lambda i, t: f"[Question {i}] {t}",
    "bold": lambda i, t: f"**[Question {i}] - {t}**",
    "hash": lambda i, t: f"### Q{i}",
    "qcolon": lambda i, t: f"Q{i}: {t}",
    "question": lambda i, t: f"Question {i}: {t}",
    "numbered": lambda i, t: f"{i}. {t}",
    "title_only": lambda i, t: f"**{t}**",
}

# Answer text: words that cannot themselves look like a heading.
word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=9)
answer = st.lists(word, min_size=1, max_size=25).map(lambda ws: "Answer " + " ".join(ws) + ".")


@settings(max_examples=150, deadline=None)
@given(style=st.sampled_from(sorted(STYLES)), answers=st.lists(answer, min_size=5, max_size=5),
       preamble=st.sampled_from(["", "Title: A bold idea\n\n", "Here is my proposal:\n"]),
       blank=st.booleans())
def test_any_heading_style_round_trips(style, answers, preamble, blank):
    sep = "\n\n" if blank else "\n"
    text = preamble + sep.join(f"{STYLES[style](i, t)}\n{a}" for i, (t, a) in
                               enumerate(zip(TITLES, answers, strict=True), 1))
    parsed, missing = parse_five_questions(text)
    assert missing == []
    assert [parsed[k] for k in QUESTION_KEYS] == answers


@settings(max_examples=80, deadline=None)
@given(answers=st.lists(answer, min_size=5, max_size=5), drop=st.sets(st.integers(1, 5), max_size=4))
def test_missing_parts_are_reported_never_blank(answers, drop):
    text = "\n".join(f"[Question {i}] {TITLES[i-1]}\n{a}" for i, a in enumerate(answers, 1) if i not in drop)
    parsed, missing = parse_five_questions(text)
    assert missing == [f"q{i}" for i in sorted(drop)]
    for i, a in enumerate(answers, 1):
        if i not in drop:
            assert parsed[f"q{i}"] == a


def test_answer_on_the_heading_line_and_numbered_lists_inside_q5():
    text = ("1. Research question: How can we map stars?\n2. Why it matters: Because.\n"
            "3. Why it is hard: Noise.\n4. Gap: Nobody tried.\n5. We will do it:\n1. step one\n2. step two")
    parsed, missing = parse_five_questions(text)
    assert missing == []
    assert parsed["q1"] == "How can we map stars?"
    assert "step two" in parsed["q5"]


def test_json_reply_is_read():
    parsed, missing = parse_five_questions('```json\n{"q1": "a", "q2": "b", "q3": "c", "q4": "d", "q5": "e"}\n```')
    assert missing == [] and parsed["q3"] == "c"


def test_nothing_recognisable_means_all_missing():
    parsed, missing = parse_five_questions("I cannot help with that.")
    assert missing == list(QUESTION_KEYS)


@given(st.integers(1, 10), st.sampled_from(["Score: {}", "Overall score: {}/10", "**Rating**: {}", "score - {}",
                                            "Score (1-10): {}", "Overall score on a 1 to 10 scale: {}",
                                            "Rating: {} (out of 10)"]))
def test_review_scores_in_any_style(n, fmt):
    data, missing = parse_review(f"Strengths:\n- good\nWeaknesses:\n- bad\n{fmt.format(n)}")
    assert data["score"] == n and missing == []


def test_review_parts_missing_are_listed():
    data, missing = parse_review("Strengths:\n- good only")
    assert missing == ["weaknesses", "score"]


def test_review_json():
    data, missing = parse_review('{"strengths": ["a", "b"], "weaknesses": ["c"], "score": 4}')
    assert data == {"strengths": "- a\n- b", "weaknesses": "- c", "score": 4} and missing == []


@given(st.integers(-5, 40))
def test_parse_score_only_accepts_1_to_10(n):
    got = parse_score(str(n))
    assert got == (n if 1 <= n <= 10 else None)


def test_split_bullets_joins_wrapped_lines_and_falls_back_to_sentences():
    assert split_bullets("- one\n  more\n* two\n1. three") == ["one more", "two", "three"]
    assert split_bullets("First point. Second point!") == ["First point.", "Second point!"]
