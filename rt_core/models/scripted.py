"""A scripted model for tests and demos, registered with litellm like any provider.

`scripted/<anything>` dispatches here through litellm's custom-provider map, so
code under test takes the real path (cache, retries, parsing, usage).
Replies come from a queue filled with `enqueue()`; when it is empty, an
optional `responder(messages, params)` answers. Every request is recorded in
`history` (model, messages, params) so tests can assert what was sent.

Set RT_SCRIPTED=demo to register it with the demo responder in an app process
(used by the browser tests, which cannot reach into the server process).
"""
from __future__ import annotations

import json
import os
import re
from collections import deque
from collections.abc import Callable
from typing import Any

from .. import fiveq
from ..errors import ConfigError
from . import registry

Reply = str | Exception | Callable[[list, dict], str]


class NoScriptedReply(RuntimeError):
    pass


def _make_class():
    from litellm import CustomLLM, ModelResponse  # noqa: PLC0415

    class ScriptedLLM(CustomLLM):
        def __init__(self) -> None:
            super().__init__()
            self.queue: deque[Reply] = deque()
            self.history: list[dict] = []
            self.responder: Callable[[list, dict], str] | None = None

        def enqueue(self, *replies: Reply) -> ScriptedLLM:
            self.queue.extend(replies)
            return self

        def reset(self) -> None:
            self.queue.clear()
            self.history.clear()
            self.responder = None

        def _reply(self, messages: list, params: dict) -> str:
            if self.queue:
                item = self.queue.popleft()
            elif self.responder is not None:
                item = self.responder
            else:
                raise NoScriptedReply("the scripted model has no reply queued")
            if isinstance(item, Exception):
                raise item
            return item(messages, params) if callable(item) else item

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any):
            params = dict(kwargs.get("optional_params") or {})
            self.history.append({"model": model, "messages": messages, "params": params})
            try:
                text = self._reply(messages, params)
            except NoScriptedReply as exc:  # litellm wraps it; the client unwraps (rt_error_in)
                raise ConfigError(str(exc)) from None
            words = lambda s: len(str(s).split())
            pt = sum(words(m.get("content", "")) for m in messages)
            return ModelResponse(model=model, choices=[{"index": 0, "finish_reason": "stop",
                                                        "message": {"role": "assistant",
                                                                    "content": text}}],
                                 usage={"prompt_tokens": pt, "completion_tokens": words(text),
                                        "total_tokens": pt + words(text)})

        async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any):
            return self.completion(model, messages, *args, **kwargs)

    return ScriptedLLM


_instance = None


# Served by this process like the embedded model, but answering at once and in parallel,
# so it stands in for an instruction model; a test that needs a serial base model
# declares one (`registry.declare("scripted/base", ...)`).
CAPABILITIES = registry.Capabilities(in_process=True)


def scripted_model():
    """The process-wide scripted model, registered as provider `scripted`."""
    global _instance
    if _instance is None:
        registry.litellm()  # the handler class subclasses litellm's
        _instance = _make_class()()
        registry.register_provider("scripted", CAPABILITIES, lambda: _instance)
    return _instance


def installed() -> bool:
    """Whether the scripted model serves `scripted/...` in this process (tests, RT_SCRIPTED=demo)."""
    return registry.registered("scripted")


# -- a responder that gives well-formed answers to every rt_core prompt ---------------

def _topic(messages: list) -> str:
    """A few content words from the paper titles in the prompt (or any text)."""
    text = " ".join(str(m.get("content", "")) for m in messages)
    titles = re.findall(r"^(?:Title: |- )([^:\n]+)", text, flags=re.M)
    source = " ".join(titles) or text
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z-]{4,}", source) if w.lower() not in _STOP]
    seen = list(dict.fromkeys(w.lower() for w in words))
    return " and ".join(seen[:2]) if len(seen) >= 2 else (seen[0] if seen else "these fields")


_STOP = {"about", "their", "there", "these", "those", "which", "using", "towards", "through",
         "question", "proposal", "research", "researcher", "papers", "persona", "interesting",
         "important", "problem", "approach", "results", "hasn", "solved", "before", "components",
         "strengths", "weaknesses", "review", "reviewer", "format", "exactly", "headings"}


def _asked(prompt: str) -> str:
    """The reviewed proposal's question, quoted (a review that names what it read shows
    which version of a proposal it is about); '' when the prompt holds none."""
    head = fiveq.QUESTIONS[0].heading + "\n"
    if head not in prompt:
        return ""
    question = prompt.split(head, 1)[1].strip().split("\n", 1)[0]
    return f': "{" ".join(question.split()[:16])}"' if question else ""


def demo_responder(messages: list, params: dict) -> str:
    """Plausible, well-formed replies so demos and UI tests exercise the whole flow."""
    prompt = str(messages[-1].get("content", ""))
    topic = _topic(messages)
    if params.get("stop"):  # stem style: one line
        if prompt.rstrip().endswith(":") and "score" in prompt.lower()[-80:]:
            return " 6"
        return f" combine {topic} into one testable study."
    if "Rate from 1 to 10" in prompt:
        return ('{"topic": 7, "method": 6, "factual": 6, "claim": 6, "application_context": 7, '
                '"overall": 6, "novelty_reference": 7, "feasibility_reference": 8, '
                '"novelty_generated": 7, "feasibility_generated": 6, "rationale": "Close in topic."}')
    if "list of separate points" in prompt:
        body = prompt.split("add none.", 1)[-1]
        points = [p.strip(" -*•\t") for p in re.split(r"[\n.;]", body) if len(p.strip()) > 8]
        return "\n".join(f"- {p}" for p in points[:8]) or "- (no points)"
    if "Summarise the reviews" in prompt:
        return (f"Strengths:\n- Reviewers value the link between {topic}.\n- The plan is concrete.\n"
                f"Weaknesses:\n- Evaluation details are thin.\n- Data access is uncertain.")
    if "Score:" in prompt and "Strengths:" in prompt:
        return (f"Strengths:\n- A fresh combination of {topic}.\n- Clear research question{_asked(prompt)}.\n"
                f"Weaknesses:\n- The data plan is vague.\n- Baselines are not named.\nScore: 6")
    if "whose keys are" in prompt:  # study judge (rt_core/run/prompts/study.yaml)
        keys = re.search(r"whose keys are ([\w, ]+), each", prompt).group(1).split(", ")
        pair = "Proposal B:" in prompt  # a pair: always "A", so the demo judge shows position bias
        return json.dumps({k: "A" if pair else 4 + len(prompt) % 5 for k in keys})
    if 'exactly "Winner: A"' in prompt:  # tournament judge (prompts/candidates.yaml)
        a, _, b = prompt.partition("Proposal B:")
        return f"Both are sound; one is stated more concretely.\nWinner: {'A' if a > 'Proposal A:' + b else 'B'}"
    if "The direction of this proposal:" in prompt:  # a led candidate: its own topic
        quoted = re.findall(r"'([^']+)'", prompt.split("The direction of this proposal:", 1)[1])
        topic = " and ".join(quoted[:2]) or topic
    if "neutral academic style" in prompt:  # study restyling: the proposal, unchanged
        return prompt[prompt.index(fiveq.QUESTIONS[0].heading):]
    if fiveq.QUESTIONS[0].heading in prompt:
        answers = [f"How can methods from {topic} be combined to answer a new question?",
                   f"It links communities around {topic}.",
                   "The fields use different data, scales and standards of evidence.",
                   "Prior work stayed inside one field.",
                   f"We build a shared benchmark on {topic} and measure transfer."]
        return "\n".join(f"{q.heading}\n{a}" for q, a in zip(fiveq.QUESTIONS, answers, strict=True))
    return f"I study {topic}. I care about careful measurement and methods that travel across fields."


def maybe_install_from_env() -> None:
    """Register the scripted model with the demo responder when RT_SCRIPTED=demo."""
    if os.environ.get("RT_SCRIPTED") == "demo":
        scripted_model().responder = demo_responder
