"""What a study is made of: its rubric, settings, items (proposals) and units (what a rater judges).

The records themselves live with the store that keeps them (store/study_types.py);
they are importable from here too. Pure functions, no store: `build_items` turns stored runs into blinded items grouped
into arms (plus the real paper's five answers as a hidden arm), `build_units` makes one unit per
item (absolute mode) or one per pair of arms on the same target (pairwise mode), plus an optional
gold pair with a known answer.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from functools import cache
from itertools import combinations
from pathlib import Path

from ..errors import InputError
from ..fiveq import QUESTION_KEYS
from ..store.study_types import CODE_ALPHABET as CODE_ALPHABET
from ..store.study_types import DEFAULT_CRITERIA as DEFAULT_CRITERIA
from ..store.study_types import MODES as MODES
from ..store.study_types import SESSION_CRITERIA as SESSION_CRITERIA
from ..store.study_types import Criterion, StudyItem, Unit
from ..store.study_types import StudyClosedError as StudyClosedError
from ..store.study_types import StudySettings as StudySettings
from ..store.study_types import Task as Task
from ..store.study_types import check_rater_id as check_rater_id
from ..store.study_types import neutral as neutral
from ..types import Run

REAL_ARM = "real paper"  # the hidden arm; stats.picked_real_rate's default
GOLD_ARM = "gold decoy"  # the deliberately weak side of a gold pair
# Run settings an organiser can group arms by (RunConfig field names).
ARM_BY = ("mode", "model", "temperature", "num_reviewers", "prompt_style", "embedder")


def parse_criteria(text: str) -> list[Criterion]:
    """Extra criteria, one per line: `name | question | anchor for 1 | anchor for 10`."""
    out = []
    for n, line in enumerate((text or "").splitlines(), 1):
        if not line.strip():
            continue
        parts = [p.strip() for p in line.split("|")]
        if len(parts) != 4 or not all(parts):
            raise InputError(f"criterion line {n} needs four parts separated by |",
                             "Write: name | question | what 1 means | what 10 means.")
        out.append(Criterion(parts[0].lower(), *parts[1:]))
    return out


@cache
def replay_targets() -> dict[str, dict[str, str]]:
    """paper id -> the five answers written for that paper (bundled with the app)."""
    path = Path(__file__).resolve().parents[2] / "assets" / "community" / "replay_targets.json"
    if not path.exists():
        return {}
    return {t["paper_id"]: dict(t["five_q"]) for t in json.loads(path.read_text("utf-8"))}


def arm_of(run: Run, arm_by: str) -> str:
    if arm_by not in ARM_BY:
        raise InputError(f"cannot group arms by {arm_by!r}", f"Choose one of {', '.join(ARM_BY)}.")
    return f"{arm_by}: {getattr(run.config, arm_by)}"


def target_of(run: Run) -> str:
    """Pairs compare proposals for the same target: the reference paper, else the neighbourhood."""
    if run.config.reference_paper_id:
        return run.config.reference_paper_id
    ids = ",".join(sorted(run.config.researcher_ids)) + "|" + ",".join(sorted(run.config.paper_ids))
    return "hood:" + hashlib.sha1(ids.encode()).hexdigest()[:10]


def real_answers(run: Run, targets: Mapping[str, Mapping[str, str]]) -> dict[str, str] | None:
    """The real paper's five answers for a run's own reference (the one it was started
    with): the bundled ones, else those its similarity used; None without a reference.
    A comparison made afterwards (store.comparisons) never supplies them."""
    pid = run.config.reference_paper_id
    if not pid:
        return None
    if pid in targets:
        return dict(targets[pid])
    ref = run.similarity.reference if run.similarity else None
    if ref is not None and any(getattr(ref, k).strip() for k in QUESTION_KEYS):
        return ref.answers()
    return None


def has_real_answers(runs: Iterable[Run], targets: Mapping[str, Mapping[str, str]] | None = None) -> bool:
    """Whether the hidden real-paper arm would hold anything: some run's reference has the
    real paper's five answers. Without one, offering the arm would promise an item that
    `build_items` cannot make."""
    targets = replay_targets() if targets is None else targets
    return any(real_answers(run, targets) for run in runs)


def _item_id(*parts: str) -> str:
    return "it-" + hashlib.sha1("\x1f".join(parts).encode()).hexdigest()[:10]


def build_items(runs: Iterable[Run], arm_by: str = "mode", real_arm: bool = True,
                targets: Mapping[str, Mapping[str, str]] | None = None) -> list[StudyItem]:
    """Runs with a proposal become items in arms; with `real_arm`, each target that has the
    real paper's answers gets one more item in the hidden REAL_ARM."""
    targets = replay_targets() if targets is None else targets
    items: list[StudyItem] = []
    real: dict[str, dict[str, str]] = {}
    for run in runs:
        if run.proposal is None or not any(getattr(run.proposal, k).strip() for k in QUESTION_KEYS):
            continue
        target = target_of(run)
        items.append(StudyItem(_item_id(run.id), arm_of(run, arm_by), target, "run",
                               run.proposal.answers(), run_id=run.id))
        if real_arm and target not in real and (ans := real_answers(run, targets)):
            real[target] = ans
    if not items:
        raise InputError("none of the chosen runs has a proposal", "Pick finished runs from the history.")
    items += [StudyItem(_item_id("real", t), REAL_ARM, t, "real", a) for t, a in sorted(real.items())]
    return sorted(items, key=lambda i: (i.target, i.arm, i.item_id))


# A deliberately vague proposal for gold pairs: any attentive rater prefers the other side.
GOLD_DECOY = {
    "q1": "Can AI make science better in general?",
    "q2": "Science is important and AI is popular, so this matters.",
    "q3": "It is hard because science is complicated.",
    "q4": "Nobody has done exactly this yet.",
    "q5": "We will use a large model on some data and see what happens.",
}


def build_units(items: list[StudyItem], mode: str, gold_check: bool = False) -> tuple[list[StudyItem], list[Unit]]:
    """(items, units). Pairwise: every pair of items in different arms on the same target.
    A gold pair adds the decoy item and pits it against the first real (or generated) item."""
    if mode == "absolute":
        units = [Unit("u-" + i.item_id[3:], i.item_id) for i in items]
    else:
        by_target: dict[str, list[StudyItem]] = {}
        for i in items:
            by_target.setdefault(i.target, []).append(i)
        units = [Unit("u-" + hashlib.sha1(f"{a.item_id}|{b.item_id}".encode()).hexdigest()[:10],
                      a.item_id, b.item_id)
                 for group in by_target.values() for a, b in combinations(group, 2) if a.arm != b.arm]
        if not units:
            raise InputError("no two arms share a target, so there is nothing to compare",
                             "Pick runs of at least two arms on the same reference paper or "
                             "neighbourhood, or add the real paper as an arm.")
    if gold_check and mode == "pairwise":
        anchor = next((i for i in items if i.source == "real"), items[0])
        decoy = StudyItem(_item_id("gold", anchor.item_id), GOLD_ARM, anchor.target, "gold", dict(GOLD_DECOY))
        items = [*items, decoy]
        units.append(Unit("u-gold", anchor.item_id, decoy.item_id, gold_item=anchor.item_id))
    return items, units
