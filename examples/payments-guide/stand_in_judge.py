"""A deterministic stand-in for the judge model, for docs/migrating-a-criterion.md.

It is **not** a model. It answers the Messages API requests that gradeloop's
``AnthropicJudge`` sends, with verdicts computed by simple rules, so the worked
example can be run (and re-run by the test suite) with no key and no network.
Its rules are deliberately fallible in the ways a real judge is:

* ``sentence_len``: it skips code but reads a bullet list as running prose (so a
  list of short items can look like one long sentence), and it lets a sentence
  of up to 45 words through as "about 40" - unless the criterion's description
  tells it to treat list items as separate sentences and to count exactly;
* ``api_cited``: three ``(see 4.x)`` citations are enough for it;
* ``errors_named`` and ``no_invention``: keyword checks.

Asked to propose checkers for a key (``gradeloop propose``), it answers with a few
fixed guesses built from the number in the key's description: the right checker,
a plausible wrong one, and a pattern that gradeloop refuses to run (its repeat is
unbounded), with one note for a person.

Asked for a draft (a request with no schema: ``gradeloop optimize``'s generator), it
is a stand-in *writer*: the first draft is ``draft.md`` (its code fails ``code_runs``
and a 58-word sentence fails ``sentence_len``), and any revision is draft ``d01`` of
``drafts.jsonl`` (both fixed). With a real model as the judge, that runs the whole
loop offline in seconds (docs/models.md, "Run gradeloop on a local model").

Run it as a script to serve it on 127.0.0.1 (it prints the base URL to pass as
``--base-url``; ``--port N`` picks the port; stop it with Ctrl-C)::

    python examples/payments-guide/stand_in_judge.py --port 8100
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from gradeloop.testing import text_reply, verdict_reply

ERROR_CODES = ("invalid_request", "auth_failed", "card_declined", "rate_limited")
INVENTED = ("refund", "webhook", "/v3/")
_FENCE = re.compile(r"```.*?```", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _asked(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The pass/fail and scored keys the request's wire schema names."""
    schema = body.get("output_config", {}).get("format", {}).get("schema", {})
    defs = schema.get("$defs", {})
    met = list(defs.get("CriteriaMet", {}).get("properties", {}))
    scored = list(defs.get("Scores", {}).get("properties", {}))
    return met, scored


def _tagged(text: str, name: str) -> str:
    found = re.search(rf"<{name}>\n(.*)\n</{name}>", text, re.DOTALL)
    return found.group(1) if found else ""


def longest_sentence(draft: str, *, lists_apart: bool) -> int:
    """Words in the longest 'sentence', the stand-in's way (code skipped)."""
    prose = _FENCE.sub(" ", draft)
    blocks = re.split(r"\n\s*\n", prose)
    if lists_apart:
        blocks = [line for b in blocks for line in b.splitlines()]
    words = [len(s.split()) for b in blocks for s in _SENTENCE_END.split(b.strip()) if s]
    return max(words, default=0)


def judge(draft: str, system: str, keys: list[str]) -> dict[str, Any]:
    """The verdict object for ``draft`` on ``keys``."""
    careful = "list item" in system and "exactly" in system
    longest = longest_sentence(draft, lists_apart=careful)
    rules = {
        "api_cited": (draft.count("(see 4.") >= 3, "cite a spec section for each claim"),
        "errors_named": (all(c in draft for c in ERROR_CODES), "name all four failure codes"),
        "no_invention": (
            not any(w in draft.lower() for w in INVENTED),
            "remove what the spec does not describe",
        ),
        "sentence_len": (
            longest <= (40 if careful else 45),
            f"a sentence runs to about {longest} words; split it",
        ),
    }
    met = {k: rules[k][0] if k in rules else True for k in keys}
    issues = [f"{k}: {rules[k][1]}" for k in keys if k in rules and not met[k]]
    reasoning = (
        f"Citations: {draft.count('(see 4.')}. Longest sentence: about {longest} "
        "words. "
        + (
            "Every criterion is met."
            if not issues
            else "Not met: " + ", ".join(k for k in keys if not met[k]) + "."
        )
    )
    return {"reasoning": reasoning, "criteria_met": met, "passed": not issues, "issues": issues}


def propose(body: dict[str, Any]) -> Any:
    """A reply to a ``gradeloop propose`` request: guesses from the description's number."""
    criterion = json.loads(_tagged(body["messages"][0]["content"], "criterion") or "{}")
    found = re.search(r"\d+", criterion.get("description", ""))
    n = int(found.group()) if found else 40
    candidates = [
        {"checker": "sentence_len", "options": {"max_words": n}, "why": "the limit, per sentence"},
        {"checker": "length", "options": {"max_words": n * 5}, "why": "a limit on the whole text"},
        {
            "checker": "regex",
            "options": {"pattern": "[^.]{250,}", "must_match": False},
            "why": "no run of 250 characters without a full stop",
        },
    ]
    note = "Whether a list item is a sentence of its own is a choice for a person."
    return text_reply(json.dumps({"candidates": candidates, "notes": [note]}))


HERE = Path(__file__).resolve().parent


def write(body: dict[str, Any]) -> Any:
    """A draft: ``draft.md`` first, then the fixed draft ``d01`` for any revision."""
    prompt = body["messages"][0]["content"]
    if "<previous_draft>" not in prompt:
        return text_reply((HERE / "draft.md").read_text(encoding="utf-8"))
    with (HERE / "drafts.jsonl").open(encoding="utf-8") as lines:
        fixed = next(d for d in map(json.loads, lines) if d["id"] == "d01")
    return text_reply(fixed["draft"])


def respond(body: dict[str, Any]) -> Any:
    """The emulator responder: a verdict reply for a judge request, a draft for a
    generator's request (one with no schema)."""
    if "output_config" not in body:
        return write(body)
    schema = body.get("output_config", {}).get("format", {}).get("schema", {})
    if "candidates" in schema.get("properties", {}):
        return propose(body)
    met_keys, scored = _asked(body)
    system = "".join(b.get("text", "") for b in body.get("system") or [])
    user = body["messages"][0]["content"]
    verdict = judge(_tagged(user, "draft"), system, met_keys)
    if scored:  # the payments example has none; score them all 8 if a rubric adds some
        verdict["scores"] = dict.fromkeys(scored, 8)
    return verdict_reply(verdict)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the stand-in judge and writer.")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: free)")
    port = parser.parse_args(argv).port
    sys.path.insert(0, str(HERE.parents[1]))
    from tests.support.emulator import Emulator  # the test suite's Messages-API emulator

    server = Emulator(port=port)
    server.responder = respond
    print(json.dumps({"base_url": server.base_url}), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.close()


if __name__ == "__main__":
    main()
