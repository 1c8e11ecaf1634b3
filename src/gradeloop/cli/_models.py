"""Model options shared by the commands that call a model."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError, InputError, RubricWarning
from ..grading._judge_specs import JudgeSpec, parse_judge_spec


def add_model_options(parser: argparse.ArgumentParser, *, generator: bool) -> None:
    group = parser.add_argument_group("model")
    group.add_argument(
        "--provider",
        choices=PROVIDERS,
        default=None,
        help="the API to call: 'anthropic' (Messages API, default) or 'openai-compatible' "
        "(chat completions: vLLM, Ollama, llama.cpp, LM Studio, LiteLLM; needs "
        "gradeloop[openai]) (default: $GRADELOOP_PROVIDER, else anthropic)",
    )
    if generator:
        group.add_argument(
            "--model", help="generator model (default: $GRADELOOP_MODEL or gradeloop's default)"
        )
    group.add_argument(
        "--judge-model",
        action=_JudgeModels,
        metavar="[PROVIDER:]MODEL[@URL]",
        help="judge model (default: the rubric's judge_models, else $GRADELOOP_JUDGE_MODEL, "
        "then $GRADELOOP_MODEL); give it several times for a jury across providers, e.g. "
        "--judge-model anthropic:claude-sonnet-4-5 --judge-model "
        "openai-compatible:qwen3-32b@http://localhost:8000/v1",
    )
    parser.set_defaults(judge_models=None)
    group.add_argument(
        "--jury-policy",
        choices=["majority", "median"],
        help="with several judges: a key is met by a majority of the judges that answered "
        "(default), or scored keys take the median score",
    )
    group.add_argument(
        "--jury-on",
        choices=["all", "doubtful"],
        help="with several judges: ask every judge (all, default), or the first and then the "
        "others only about its failed or near-threshold keys (doubtful)",
    )
    group.add_argument(
        "--quorum",
        type=int,
        metavar="N",
        help="with several judges: how many must answer (default: a majority of them)",
    )
    group.add_argument(
        "--base-url",
        help="the server's base URL, e.g. a local server (default: $ANTHROPIC_BASE_URL; "
        "with --provider openai-compatible, $OPENAI_BASE_URL, e.g. http://localhost:8000/v1)",
    )
    group.add_argument(
        "--structured",
        choices=["auto", "native", "json"],
        default="auto",
        help="how the judge gets structured output; 'json' for servers "
        "without it (Ollama, llama.cpp)",
    )
    group.add_argument(
        "--samples",
        type=_positive_int,  # refused at once, with --code-only too (no judge asked)
        default=1,
        metavar="K",
        help="ask the judge K times and decide each key by majority (scored keys: the "
        "median); reports each key's agreement (default 1)",
    )
    group.add_argument(
        "--resample",
        choices=["all", "doubtful"],
        default="all",
        help="with --samples K: 'all' asks K full times; 'doubtful' asks once, then K-1 "
        "times only about keys that failed or scored within --margin of the threshold",
    )
    group.add_argument(
        "--margin",
        type=float,
        default=1.0,
        metavar="M",
        help="with --resample doubtful: a score within M of its threshold is doubtful (default 1)",
    )


class _JudgeModels(argparse.Action):
    """``--judge-model``, once or several times: every value in ``judge_models``, the
    first in ``judge_model`` (what a one-judge command reads)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        models = [*(getattr(namespace, "judge_models", None) or []), str(values)]
        namespace.judge_models = models
        namespace.judge_model = models[0]


PROVIDERS = ("anthropic", "openai-compatible")


def provider(args: argparse.Namespace) -> str:
    """``--provider``, else ``$GRADELOOP_PROVIDER``, else ``"anthropic"``."""
    chosen = getattr(args, "provider", None) or os.environ.get("GRADELOOP_PROVIDER", "").strip()
    if not chosen:
        return "anthropic"
    if chosen not in PROVIDERS:
        raise ConfigError(
            f"GRADELOOP_PROVIDER={chosen!r} is not a provider; use one of: {', '.join(PROVIDERS)}"
        )
    return chosen


def add_cache_options(parser: argparse.ArgumentParser) -> None:
    """``--no-cache`` and ``--cache-ttl`` for a command that asks the judge."""
    group = parser.add_argument_group("verdict cache")
    group.add_argument(
        "--no-cache",
        action="store_true",
        help="ask the judge even when an identical request was answered before "
        "(the cache is $GRADELOOP_HOME/cache.db; see `gradeloop cache stats`)",
    )
    group.add_argument(
        "--cache-ttl",
        type=duration,
        metavar="AGE",
        help="reuse cached verdicts only up to this age: 90s, 30m, 12h, 7d (default: any age)",
    )


def add_jobs_option(parser: argparse.ArgumentParser, *, what: str = "drafts") -> None:
    """``--jobs N``: how many drafts are graded at once."""
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        default=8,
        metavar="N",
        help=f"{what} graded at once (default 8; 429/529 answers slow everything down)",
    )


_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def duration(text: str) -> float:
    """Seconds from ``90``, ``90s``, ``30m``, ``12h`` or ``7d`` (an argparse type)."""
    raw = text.strip().lower()
    unit = _UNITS.get(raw[-1:])
    number = raw[:-1] if unit is not None else raw
    try:
        value = float(number) * (unit or 1.0)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a duration; write e.g. 90s, 30m, 12h or 7d"
        ) from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r}: a duration must be positive")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1")
    return value


def model_configured(args: argparse.Namespace) -> bool:
    """A key in the environment, or a base URL (a local server needs no key)."""
    if provider(args) == "openai-compatible":
        return bool(
            getattr(args, "base_url", None)
            or os.environ.get("OPENAI_BASE_URL")
            or os.environ.get("OPENAI_API_KEY")
        )
    return bool(
        os.environ.get("ANTHROPIC_API_KEY")
        or os.environ.get("ANTHROPIC_AUTH_TOKEN")
        or getattr(args, "base_url", None)
        or os.environ.get("ANTHROPIC_BASE_URL")
    )


def judges_configured(args: argparse.Namespace, rubric: Any = None) -> bool:
    """Whether every judge the options (or the rubric's ``judge_models``) name can be
    reached: its own base URL, or its provider configured as :func:`model_configured`
    checks the ``--provider`` (a key, a base URL)."""
    specs = judge_specs(args, rubric)
    if not specs:
        return model_configured(args)
    return all(spec.base_url or _provider_configured(args, spec.provider) for spec in specs)


def _provider_configured(args: argparse.Namespace, name: str | None) -> bool:
    if name is None or name == provider(args):
        return model_configured(args)
    env = ("OPENAI_BASE_URL", "OPENAI_API_KEY") if name == "openai-compatible" else (
        "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")  # fmt: skip
    return any(os.environ.get(v) for v in env)


def require_model(
    args: argparse.Namespace,
    judge_keys: Sequence[str],
    *,
    code_only_hint: bool,
    rubric: Any = None,
) -> None:
    """Exit-2 error naming the judge keys and the fixes, when no model is configured."""
    if judges_configured(args, rubric):
        return
    keys = ", ".join(judge_keys)
    fixes = "set ANTHROPIC_API_KEY, or pass --base-url for a local server"
    if provider(args) == "openai-compatible":
        fixes = "pass --base-url (or set OPENAI_BASE_URL) for the chat-completions server"
    if code_only_hint:
        fixes += ", or use --code-only to grade only the code-filled keys"
    raise ConfigError(f"no model is configured for the judge-filled criteria ({keys}); {fixes}")


def _client(args: argparse.Namespace) -> Any:
    from ..models._anthropic import make_client

    return make_client(base_url=getattr(args, "base_url", None))


def _openai() -> Any:
    try:
        from ..models import _openai
    except ImportError as exc:
        raise ConfigError(f"{exc} (needed by --provider openai-compatible)") from None
    return _openai


def _sampling(args: argparse.Namespace) -> dict[str, Any]:
    samples = getattr(args, "samples", 1)
    if samples < 1:
        raise InputError(f"--samples must be at least 1, not {samples}")
    margin = getattr(args, "margin", 1.0)
    if not margin >= 0:
        raise InputError(f"--margin must be 0 or more, not {margin}")
    return {"samples": samples, "resample": getattr(args, "resample", "all"), "margin": margin}


def build_judge(args: argparse.Namespace, rubric: Any = None) -> Any:
    """The judge the options describe (several ``--judge-model``, or a rubric's
    ``judge_models``: a :class:`~gradeloop.judging.Jury`); every judge, whatever its provider, gets
    the verdict cache unless ``--no-cache`` (closed by :func:`close_resources` when the
    command ends)."""
    specs = judge_specs(args, rubric)
    if len(specs) <= 1:
        if getattr(rubric, "jury", None):
            warnings.warn(
                f"the rubric's jury table ({', '.join(sorted(rubric.jury))}) is ignored: it "
                f"applies to two judges or more, and this run has {len(specs) or 1}; add "
                "judges (judge_models, or --judge-model again) or drop the table",
                RubricWarning,
                stacklevel=2,
            )
        return _one_judge(args, specs[0] if specs else None)
    from ..judging._jury import Jury

    settings = dict(getattr(rubric, "jury", None) or {})
    for name, option in (("policy", "jury_policy"), ("on", "jury_on"), ("quorum", "quorum")):
        if getattr(args, option, None) is not None:
            settings[name] = getattr(args, option)
    members = [_one_judge(args, spec) for spec in specs]
    try:
        return Jury(members, **settings)
    except ValueError as exc:
        raise InputError(f"the jury of {len(members)} judges: {exc}") from None


def judge_specs(args: argparse.Namespace, rubric: Any = None) -> list[JudgeSpec]:
    """The judges named by ``--judge-model`` (else the rubric's ``judge_models``)."""
    given = list(getattr(args, "judge_models", None) or [])
    if not given and getattr(args, "judge_model", None):
        given = [args.judge_model]  # set directly (a resumed graph thread, a test)
    if not given:
        given = list(getattr(rubric, "judge_models", ()) or ())
    try:
        return [parse_judge_spec(text) for text in given]
    except ValueError as exc:
        raise InputError(f"--judge-model: {exc}") from None


def _one_judge(args: argparse.Namespace, spec: JudgeSpec | None) -> Any:
    sampling = _sampling(args)
    chosen = (spec.provider if spec else None) or provider(args)
    # --base-url belongs to the --provider's judges; a spec may carry its own
    base_url = spec.base_url if spec and spec.base_url else None
    if base_url is None and chosen == provider(args):
        base_url = getattr(args, "base_url", None)
    model = spec.model if spec else None
    if chosen == "openai-compatible":
        return _openai().OpenAICompatibleJudge(
            base_url=base_url,
            model=model,
            structured=args.structured,
            cache=_cache(args),
            **sampling,
        )
    from ..models._anthropic import AnthropicJudge

    return AnthropicJudge(
        _shared_client(args, base_url),
        model=model,
        structured=args.structured,
        cache=_cache(args),
        **sampling,
    )


def _shared_client(args: argparse.Namespace, base_url: str | None) -> Any:
    """One Anthropic client per base URL for the command's judges: a jury's members on
    one API share it (and so, with --batch, one batch per API, not one per member)."""
    from ..models._anthropic import make_client

    clients: dict[str | None, Any] = getattr(args, "anthropic_clients", None) or {}
    if base_url not in clients:
        clients[base_url] = make_client(base_url=base_url)
    args.anthropic_clients = clients
    return clients[base_url]


def _cache(args: argparse.Namespace) -> Any:
    """The command's verdict cache (one for every judge it builds), unless --no-cache."""
    if not hasattr(args, "no_cache") or args.no_cache:
        return None
    if getattr(args, "judge_cache", None) is None:
        from ..history._cache import JudgeCache

        args.judge_cache = JudgeCache(ttl=getattr(args, "cache_ttl", None))
        args.opened = [*getattr(args, "opened", []), args.judge_cache]
    return args.judge_cache


def close_resources(args: argparse.Namespace) -> None:
    """Close what the command opened for its options (the verdict cache)."""
    for thing in getattr(args, "opened", []):
        thing.close()


def same_family_line(generator: Any, judge: Any) -> None:
    """One stderr line when the generator and the judge share a model family (the loop,
    run inside :func:`~gradeloop.judging._family.announced`, then does not warn again)."""
    from ..judging._family import same_family

    text = same_family(generator, judge)
    if text is not None:
        print(f"gradeloop: warning: {text}", file=sys.stderr)


def add_max_tokens_option(parser: argparse.ArgumentParser) -> None:
    """``--max-tokens N``: the ceiling of each draft the generator writes."""
    parser.add_argument(
        "--max-tokens",
        type=_positive_int,
        metavar="N",
        help="the ceiling of each draft, in tokens (default: the rubric's [generator] "
        "max_tokens, else 8192). A draft that reaches N tokens is cut off and fails the "
        "loop (it is not an answer): set N above the longest draft you expect",
    )


def generator_max_tokens(args: argparse.Namespace, rubric: Any = None) -> int:
    """``--max-tokens``, else the rubric's ``[generator] max_tokens``, else 8192."""
    chosen = getattr(args, "max_tokens", None)
    if chosen is None and rubric is not None:
        chosen = getattr(rubric, "generator_max_tokens", None)
    return 8192 if chosen is None else int(chosen)


def build_generator(args: argparse.Namespace, rubric: Any = None) -> Any:
    """The generator the options describe, with :func:`generator_max_tokens`."""
    max_tokens = generator_max_tokens(args, rubric)
    if provider(args) == "openai-compatible":
        return _openai().OpenAICompatibleGenerator(
            base_url=getattr(args, "base_url", None), model=args.model, max_tokens=max_tokens
        )
    from ..models._anthropic import AnthropicGenerator

    return AnthropicGenerator(_client(args), model=args.model, max_tokens=max_tokens)


def model_failure(exc: BaseException) -> str | None:
    """One line for a model server that could not be reached, refused, timed out or
    failed (an SDK ``APIError`` after the client's own retries); None for anything else.

    The line is the status, the server's message cut to a sentence (never its
    traceback, its file paths or a whole HTML page) and the fix. The SDKs are looked
    up, never imported: a failure from one means it is loaded.
    """
    from ..models._failure import sdk_failure

    line = sdk_failure(exc)
    return None if line is None else f"the model server failed after the client's retries: {line}"
