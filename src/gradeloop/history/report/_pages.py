"""Whole pages: the report file, and the viewer's list, loop, run and compare pages."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from ...errors import InputError
from ._cells import key_results, rubric_keys
from ._db import Filters, LoopRow, ReadOnlyHistory, RunRow, rubric_label
from ._grading import run_section
from ._html import Safe, el, join, page, when
from ._loop import loop_section, loop_status, plot_for
from ._regrade import fingerprint_notes, regrade_section, regraded_by
from ._watch import AUDIT_ORIGIN, watch_section

__all__ = ["compare_page", "index_page", "item_page", "query_filters", "report_document"]

#: Loops (and grading runs) a list page shows at most.
LIST_LIMIT = 200

_NAV = join(
    [
        el("a", "gradeloop", href="/"),
        el("a", "loops", href="/#loops"),
        el("a", "grading runs", href="/#runs"),
    ]
)


def _short(text: str, n: int = 70) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= n else flat[: n - 1] + "…"


def _loop_rows(loops: Sequence[LoopRow], link: str) -> Safe:
    head = el(
        "tr",
        join(
            el("th", h)
            for h in (
                "loop",
                "started",
                "task",
                "rubric",
                "rounds",
                "stop reason",
                "passed",
                "score",
            )
        ),
    )
    rows = []
    for row in loops:
        target = f"#loop-{row.loop_id}" if link == "anchor" else f"/loop/{quote(row.loop_id)}"
        rows.append(
            el(
                "tr",
                el("td", el("a", row.loop_id, href=target)),
                el("td", when(row.started_at)),
                el("td", _short(row.task), title=row.task[:500]),
                el("td", _short(row.rubric, 40)),
                el("td", str(row.rounds), class_="num"),
                el("td", row.stop_reason or row.status),
                el("td", "yes" if row.passed else "no", class_="pass" if row.passed else "fail"),
                el(
                    "td", "-" if row.final_score is None else f"{row.final_score:.2f}", class_="num"
                ),
                class_="loop-row",
                data_loop=row.loop_id,
            )
        )
    if not rows:
        return el("p", "no loops match", class_="muted empty")
    return el("table", head, join(rows), class_="loops")


def _run_rows(runs: Sequence[RunRow], link: str) -> Safe:
    head = el(
        "tr",
        join(
            el("th", h)
            for h in ("grading run", "started", "graded by", "rubric", "drafts", "accepted")
        ),
    )
    rows = [
        el(
            "tr",
            el(
                "td",
                el(
                    "a",
                    r.run_id,
                    href=f"#run-{r.run_id}" if link == "anchor" else f"/run/{quote(r.run_id)}",
                ),
            ),
            el("td", when(r.started_at)),
            el("td", r.origin),
            el("td", _short(r.rubric, 40)),
            el("td", str(r.drafts), class_="num"),
            el("td", str(r.accepted), class_="num"),
            class_="run-row",
            data_run=r.run_id,
        )
        for r in runs
    ]
    if not rows:
        return el("p", "no grading runs recorded", class_="muted empty")
    return el("table", head, join(rows), class_="runs")


def report_document(db: ReadOnlyHistory, ids: Sequence[str], limit: int = 20) -> str:
    """The self-contained report of ``ids`` (loop or grading-run ids or prefixes);
    with none, the ``limit`` most recent loops and grading runs."""
    watches: dict[str, list[dict[str, Any]]] = {}
    if ids:
        resolved = [db.resolve(i) for i in ids]
        resolved = list(dict.fromkeys(resolved))  # a loop named twice is shown once
    else:
        resolved = [("loop", r.loop_id) for r in db.loops(limit=limit)]
        # a reward watch's steps are charted, not listed run by run
        resolved += [("run", r.run_id) for r in db.runs(limit=limit, leave_out=AUDIT_ORIGIN)]
        watches = db.watches(AUDIT_ORIGIN, limit=limit)
    loops = [db.loop(i) for kind, i in resolved if kind == "loop"]
    runs = [db.run(i) for kind, i in resolved if kind == "run"]
    listed = [
        LoopRow(
            d["loop_id"],
            d["started_at"],
            d["task"],
            rubric_label(d["rubric"]),
            len(d["iterations"]),
            d["stop_reason"],
            d["passed"],
            d["final_score"],
        )
        for d in loops
    ]
    run_rows = [
        RunRow(
            d["run_id"],
            d["started_at"],
            d["origin"],
            d["rubric_name"],
            len(d["drafts"]),
            sum(
                1
                for x in d["drafts"]
                if (x.get("evaluation") or {}).get("passed") and not x.get("error")
            ),
        )
        for d in runs
    ]
    body = [el("h1", "gradeloop report"), el("p", f"from {db.path.name}", class_="muted")]
    body += [watch_section(name, steps) for name, steps in watches.items()]
    if loops:
        body += [el("h2", "loops", id="loops"), _loop_rows(listed, "anchor")]
    if runs:
        body += [el("h2", "grading runs", id="runs"), _run_rows(run_rows, "anchor")]
    if not loops and not runs and not watches:
        body.append(
            el("p", "the history holds no loops and no grading runs yet", class_="muted empty")
        )
    body += [loop_section(d) for d in loops] + [run_section(d) for d in runs]
    return page("gradeloop report", join(body))


# -- the viewer's pages ------------------------------------------------------------


def _select(name: str, label: str, options: Sequence[tuple[str, str]], chosen: str) -> Safe:
    opts = [el("option", text, value=value, selected=value == chosen) for value, text in options]
    return el("label", label, el("select", join(opts), name=name))


def _filter_form(choices: Mapping[str, list[str]], q: Mapping[str, str]) -> Safe:
    return el(
        "form",
        _select(
            "passed", "passed", [("", "any"), ("yes", "yes"), ("no", "no")], q.get("passed", "")
        ),
        _select(
            "stop",
            "stop reason",
            [("", "any")] + [(s, s) for s in choices["stop_reason"]],
            q.get("stop", ""),
        ),
        _select(
            "rubric",
            "rubric",
            [("", "any")] + [(r, _short(r, 40)) for r in choices["rubric"]],
            q.get("rubric", ""),
        ),
        el("label", "since", el("input", type="date", name="since", value=q.get("since", ""))),
        el("label", "until", el("input", type="date", name="until", value=q.get("until", ""))),
        el("button", "filter", type="submit"),
        el("a", "clear", href="/"),
        method="get",
        action="/",
        class_="filters",
    )


def _compare_form(loops: Sequence[LoopRow], runs: Sequence[RunRow]) -> Safe:
    options = [("", "choose")] + [(r.loop_id, f"{r.loop_id} {_short(r.task, 30)}") for r in loops]
    options += [(r.run_id, f"{r.run_id} ({r.drafts} drafts)") for r in runs]
    return el(
        "form",
        _select("a", "first", options, ""),
        _select("b", "second", options, ""),
        el("button", "side by side", type="submit"),
        method="get",
        action="/compare",
        class_="filters",
    )


def index_page(db: ReadOnlyHistory, filters: Filters, query: Mapping[str, str]) -> str:
    """The list of loops (filtered) and of grading runs, with the compare form."""
    loops = db.loops(filters, limit=LIST_LIMIT + 1)  # one more tells whether any were cut
    runs = db.runs(limit=LIST_LIMIT)
    capped = (
        el("p", f"the {LIST_LIMIT} newest shown; narrow the filters", class_="muted capped")
        if len(loops) > LIST_LIMIT
        else Safe("")
    )
    loops = loops[:LIST_LIMIT]
    body = [
        el("h1", "recorded loops", id="loops"),
        el("p", f"{db.path}", class_="muted"),
        _filter_form(db.choices(), query),
        _loop_rows(loops, "page"),
        capped,
        el("h2", "grading runs", id="runs"),
        _run_rows(runs, "page"),
        el("h2", "two loops or two grading runs, side by side"),
        _compare_form(loops, runs),
    ]
    return page("gradeloop: loops", join(body), nav=_NAV)


def item_page(db: ReadOnlyHistory, kind: str, item_id: str) -> str:
    """A loop's page or a grading run's page."""
    if kind == "loop":
        data = db.loop(item_id)
        body = join([loop_section(data, heading="h1"), regraded_by(db, item_id)])
        return page(f"gradeloop: {item_id}", body, nav=_NAV)
    data = db.run(item_id)
    body = join([run_section(data, heading="h1"), regrade_section(db, data)])
    return page(f"gradeloop: {item_id}", body, nav=_NAV)


def _final_record(data: Mapping[str, Any]) -> Mapping[str, Any]:
    records: list[Mapping[str, Any]] = data["iterations"]
    for r in records:
        if r.get("output_id") == data.get("final_output_id"):
            return r
    judged = [r for r in records if isinstance(r.get("evaluation"), Mapping)]
    return judged[-1] if judged else (records[-1] if records else {})


def _side(result: Any) -> str:
    if result is None:
        return "-"
    text = "met" if result.met else "failed"
    return text + (f" {result.score:g}" if result.score is not None else "")


def _compare_loops(a: Mapping[str, Any], b: Mapping[str, Any]) -> Safe:
    keys_a, keys_b = rubric_keys(a["rubric"]), rubric_keys(b["rubric"])
    names = list(dict.fromkeys([k.key for k in keys_a] + [k.key for k in keys_b]))
    fa, fb = key_results(_final_record(a), keys_a), key_results(_final_record(b), keys_b)
    summary = [
        ("stop reason", loop_status(a), loop_status(b)),
        ("passed", "yes" if a["passed"] else "no", "yes" if b["passed"] else "no"),
        ("final score", f"{a['final_score'] or 0:.2f}", f"{b['final_score'] or 0:.2f}"),
        ("rounds", str(len(a["iterations"])), str(len(b["iterations"]))),
    ]
    rows = [
        el("tr", el("th", n), el("td", x), el("td", y), class_="changed" if x != y else None)
        for n, x, y in summary
    ]
    for name in names:
        x, y = _side(fa.get(name)), _side(fb.get(name))
        changed = (fa.get(name) and fa[name].met) != (fb.get(name) and fb[name].met)
        rows.append(
            el(
                "tr",
                el("th", name),
                el("td", x),
                el("td", y),
                class_="changed key" if changed else "key",
                data_key=name,
            )
        )
    head = el(
        "tr",
        el("th", ""),
        el("th", el("a", a["loop_id"], href=f"/loop/{quote(a['loop_id'])}")),
        el("th", el("a", b["loop_id"], href=f"/loop/{quote(b['loop_id'])}")),
    )
    plots = el(
        "div",
        el("div", el("h3", a["loop_id"]), plot_for(a, keys_a)),
        el("div", el("h3", b["loop_id"]), plot_for(b, keys_b)),
        style="display:flex;gap:16px;flex-wrap:wrap",
    )
    note = el("p", "The final drafts' keys; a highlighted row changed.", class_="muted")
    return join([note, el("table", head, join(rows), class_="compare"), plots])


def _compare_runs(a: Mapping[str, Any], b: Mapping[str, Any]) -> Safe:
    keys = rubric_keys(a["rubric"])
    names = list(dict.fromkeys([k.key for k in keys] + [k.key for k in rubric_keys(b["rubric"])]))
    ra = {str(d.get("item_id")): key_results(d, keys) for d in a["drafts"]}
    rb = {str(d.get("item_id")): key_results(d, rubric_keys(b["rubric"])) for d in b["drafts"]}
    both = [i for i in ra if i in rb]
    head = el(
        "tr",
        el("th", "key"),
        el("th", f"met in {a['run_id']}"),
        el("th", f"met in {b['run_id']}"),
        el("th", "drafts that changed"),
    )
    rows = []
    for name in names:
        met_a = sum(1 for r in ra.values() if name in r and r[name].met)
        met_b = sum(1 for r in rb.values() if name in r and r[name].met)
        changed = [
            i
            for i in both
            if (name in ra[i] and ra[i][name].met) != (name in rb[i] and rb[i][name].met)
        ]
        rows.append(
            el(
                "tr",
                el("th", name),
                el("td", str(met_a), class_="num"),
                el("td", str(met_b), class_="num"),
                el("td", ", ".join(changed) or "-"),
                class_="changed key" if changed else "key",
                data_key=name,
            )
        )
    note = el(
        "p",
        f"{len(both)} drafts in both runs (matched by id); "
        "a highlighted key changed on at least one of them.",
        class_="muted",
    )
    return join([note, el("table", head, join(rows), class_="compare")])


def compare_page(db: ReadOnlyHistory, first: str, second: str) -> str:
    """Two loops, or two grading runs, side by side: which keys changed."""
    if not first or not second:
        raise InputError("choose two loops or two grading runs to compare")
    (ka, ia), (kb, ib) = db.resolve(first), db.resolve(second)
    if ka != kb:
        raise InputError("two loops or two grading runs side by side, not one of each")
    a, b = (db.loop(ia), db.loop(ib)) if ka == "loop" else (db.run(ia), db.run(ib))
    body = join(
        [fingerprint_notes([a, b]), _compare_loops(a, b) if ka == "loop" else _compare_runs(a, b)]
    )
    return page(f"gradeloop: {ia} vs {ib}", join([el("h1", f"{ia} vs {ib}"), body]), nav=_NAV)


def query_filters(query: Mapping[str, str]) -> Filters:
    """The list's filters from the page's query string (bad values are InputErrors)."""

    def day(name: str) -> float | None:
        value = query.get(name, "")
        if not value:
            return None
        try:
            return time.mktime(time.strptime(value, "%Y-%m-%d"))
        except ValueError:
            raise InputError(f"{name} must be a date like 2026-01-31, not {value!r}") from None

    passed = {"yes": True, "no": False}.get(query.get("passed", ""))
    until = day("until")
    return Filters(
        passed=passed,
        stop_reason=query.get("stop") or None,
        rubric=query.get("rubric") or None,
        since=day("since"),
        until=None if until is None else until + 86400,  # the whole "until" day
    )
