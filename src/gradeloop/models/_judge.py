"""AnthropicJudge: the provider-neutral judge (:mod:`._model_judge`) on the Messages API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._client import judge_model, make_client
from ._messages_api import MessagesAPI
from ._model_judge import (
    ModelJudge,
    ReplyCache,
    Resample,
    SampledVerdict,
    Structured,
    check_settings,
)

__all__ = ["AnthropicJudge", "ReplyCache", "Resample", "SampledVerdict", "Structured"]


class AnthropicJudge(ModelJudge):
    """Judges a draft against judge-filled criteria, one Messages-API request each.

    The SDK's own client (``anthropic.Anthropic``) is sent the request through its
    public ``messages.with_raw_response.create`` (parameters, retries, headers, typed
    errors and spans are all the SDK's), and the reply's JSON is read without building
    the SDK's models (:mod:`._messages_api`); any other client (a fake, a replaying
    cassette) is asked through ``messages.parse``.

    Each evaluation is a fresh context: one user message holding only the task and
    the draft (tagged as data); the instructions and criteria are one system text
    block, byte-identical for the same criteria and marked for prompt caching with
    ``cache_ttl`` (``"5m"`` or ``"1h"``).

    ``structured`` picks how the verdict's shape is enforced:

    * ``"native"`` - ``output_config`` with the per-rubric JSON Schema
      (constrained decoding on the Anthropic API);
    * ``"json"`` - for servers that silently drop ``output_config`` (Ollama,
      llama.cpp): the schema goes in the system text, the reply's JSON is
      validated, and one repair request is made before giving up;
    * ``"auto"`` (default) - native, switching to JSON mode for good when a reply
      is plain prose, the sign of a server that ignored ``output_config``; and when
      a server *refuses* ``output_config`` (HTTP 400/422/500 naming it or the
      schema), stepping down to JSON mode for every judge on that client, said once
      as a :class:`~gradeloop.errors.StructuredFormWarning`. A refusal is never a
      verdict and does not spend the repair attempt.

    ``cache`` (a :class:`~gradeloop.JudgeCache`) reuses the reply of an identical
    earlier request instead of sending it; only valid verdicts are stored, and a
    reused one is recorded as a call with ``cached=True`` and no tokens.

    :meth:`aevaluate` is the async twin, on an ``anthropic.AsyncAnthropic`` built
    lazily with the sync client's settings (or ``async_client``, if given; a client
    that is not the SDK's is run in a worker thread).

    Failures raise :class:`~gradeloop.errors.JudgeError` (``reason`` ``"refusal"``,
    ``"max_tokens"``, ``"no_text"``, ``"invalid"`` or ``"api_error"``); none is ever
    a pass. Every request is recorded in ``.calls``.

    ``samples=k`` (k > 1) asks ``k`` times in parallel and decides each key on all
    the answers (majority for pass/fail keys, a tie not met; the median, rounded
    down, for scored ones), returning a :class:`~gradeloop.grading._samples.SampledVerdict`
    whose ``samples`` hold each key's raw answers and their agreement.
    ``resample="doubtful"`` asks once, then ``k - 1`` more times only about the keys
    that failed or scored within ``margin`` of their threshold, with a schema built
    for those keys alone. Each sample has its own cache key. With ``shuffle`` (the
    default), sample 0 shows the criteria in the rubric's order and every later sample
    a shuffle seeded by ``seed`` (:func:`~gradeloop.judging._orders.sample_order`), so
    order effects average out; the orders are recorded on the verdict (``orders``).
    Each order's system prompt is byte-identical from draft to draft, so it is cached
    once per order (``k`` prefixes instead of one: see docs/judging.md).

    :meth:`prefer` (and :meth:`aprefer`) answer which of two drafts better meets each
    judge key, ``"first"``, ``"second"`` or ``"tie"``, with the same modes, cache and
    strictness (:mod:`._prefer`); :func:`gradeloop.judging.compare_drafts` asks in both orders.
    :meth:`ask` makes one structured request on the same model and forms (gradeloop's
    ``propose`` and ``align`` use it).
    """

    def __init__(
        self,
        client: Any = None,
        model: str | None = None,
        max_tokens: int = 2048,
        *,
        cache_ttl: str = "5m",
        structured: Structured = "auto",
        feedback: bool = False,
        extra_body: Mapping[str, Any] | None = None,
        cache: ReplyCache | None = None,
        async_client: Any = None,
        samples: int = 1,
        resample: Resample = "all",
        margin: float = 1,
        shuffle: bool = True,
        seed: int = 0,
    ) -> None:
        # a bad setting is named before a client is built from the environment
        check_settings(
            max_tokens=max_tokens,
            cache_ttl=cache_ttl,
            structured=structured,
            samples=samples,
            resample=resample,
            margin=margin,
        )
        adapter = MessagesAPI(
            client if client is not None else make_client(),
            async_client=async_client,
            fan_out=samples,
        )
        super().__init__(
            adapter,
            judge_model(model),
            max_tokens,
            cache_ttl=cache_ttl,
            structured=structured,
            feedback=feedback,
            extra_body=extra_body,
            cache=cache,
            samples=samples,
            resample=resample,
            margin=margin,
            shuffle=shuffle,
            seed=seed,
        )
        self._async = adapter.twin  # the async client per event loop
