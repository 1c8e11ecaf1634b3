"""The labelling pages: the list of drafts, one draft with its judge keys, and the
script that makes them keyboard-driven.

Every page works without the script: each mark is a small form posted to
``/label``. With it (served from the page's own origin, the only script the
page's policy allows), the keys do the work and each mark is saved at once:

* ``j`` / ``k`` (or the arrow keys) move between the draft's keys;
* ``m`` (or ``y``) marks the key met, ``u`` (or ``n``) unmet; on a scored key the
  digits give the score (``0`` is 10); ``x`` clears it;
* ``Enter`` (or ``]``) goes to the next draft, ``[`` to the previous one.

The judge's own answer is not shown: a label should be the labeller's reading,
not an echo of the judge's.
"""

from __future__ import annotations

from ...grading._transcript import judge_text
from ._html import Safe, el, join
from ._label import LabelKey, LabelSession

__all__ = ["LABEL_CSP", "LABEL_SCRIPT", "index_page", "item_page", "shown"]

#: The viewer's policy, plus one script from the page's own origin and requests back
#: to it (the marks). Nothing else loads, nothing inline runs.
LABEL_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'self'; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; color: #1f2328; }
header { background: #24292f; color: #fff; padding: 10px 20px; }
header a { color: #fff; margin-right: 14px; }
main { padding: 16px 20px 40px; max-width: 1100px; }
pre { background: #f6f8fa; border: 1px solid #d0d7de; padding: 8px; white-space: pre-wrap;
  overflow-wrap: anywhere; max-height: 420px; overflow: auto; }
table { border-collapse: collapse; } th, td { border: 1px solid #d0d7de; padding: 4px 8px;
  text-align: left; vertical-align: top; }
.label-key { border: 2px solid #d0d7de; border-radius: 6px; padding: 8px 10px; margin: 8px 0; }
.label-key.current { border-color: #0969da; background: #f0f7ff; }
.label-key form { display: inline; } .value { font-weight: 600; margin-left: 8px; }
.muted { color: #57606a; } .done { color: #1a7f37; } kbd { border: 1px solid #d0d7de;
  border-radius: 4px; padding: 0 4px; font-size: 12px; }
#status { min-height: 1.4em; } .error { color: #cf222e; }
"""

LABEL_SCRIPT = r"""
(function () {
  "use strict";
  var token = document.querySelector('meta[name="label-token"]').content;
  var rows = Array.prototype.slice.call(document.querySelectorAll(".label-key"));
  var status = document.getElementById("status");
  var at = 0;
  function focus(i) {
    if (!rows.length) return;
    at = Math.max(0, Math.min(rows.length - 1, i));
    rows.forEach(function (r, j) { r.classList.toggle("current", j === at); });
    rows[at].scrollIntoView({block: "nearest"});
  }
  function go(rel) {
    var link = document.querySelector('a[rel="' + rel + '"]');
    if (link) window.location.href = link.href;
  }
  function save(row, value) {
    var body = new URLSearchParams({token: token, item: row.dataset.item,
                                    key: row.dataset.key, value: value});
    status.textContent = "saving...";
    status.className = "";
    return fetch("/label", {method: "POST", body: body,
                            headers: {"Accept": "application/json"}})
      .then(function (r) { return r.json().then(function (d) { return [r.ok, d]; }); })
      .then(function (res) {
        var d = res[1];
        if (!res[0]) { throw new Error(d.error || "not saved"); }
        row.dataset.value = d.value === null ? "" : String(d.value);
        row.querySelector(".value").textContent = d.shown;
        document.getElementById("progress").textContent = d.progress;
        status.textContent = "saved";
        if (value !== "clear" && rows.indexOf(row) === at) focus(at + 1);
      })
      .catch(function (e) { status.textContent = "not saved: " + e.message;
                            status.className = "error"; });
  }
  rows.forEach(function (row, i) {
    row.addEventListener("submit", function (e) {
      e.preventDefault();
      focus(i);
      save(row, e.submitter ? e.submitter.value : "clear");
    });
  });
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || !rows.length) return;
    var row = rows[at], k = e.key, scored = row.dataset.scale === "score";
    var digit = /^[0-9]$/.test(k);
    if (k === "j" || k === "ArrowDown") { focus(at + 1); }
    else if (k === "k" || k === "ArrowUp") { focus(at - 1); }
    else if (!scored && (k === "m" || k === "y")) { save(row, "met"); }
    else if (!scored && (k === "u" || k === "n")) { save(row, "unmet"); }
    else if (scored && digit) { save(row, k === "0" ? "10" : k); }
    else if (k === "x" || k === "Backspace") { save(row, "clear"); }
    else if (k === "Enter" || k === "]" || k === "ArrowRight") { go("next"); }
    else if (k === "[" || k === "ArrowLeft") { go("prev"); }
    else { return; }
    e.preventDefault();
  });
  var first = rows.findIndex(function (r) { return !r.dataset.value; });
  focus(first < 0 ? 0 : first);
})();
"""


def shown(key: LabelKey, value: bool | int | None) -> str:
    """How a label reads on the page."""
    if value is None:
        return "not labelled"
    if key.scale == "score":
        return f"{value}/10 ({'met' if value >= key.threshold else 'unmet'})"
    return "met" if value else "unmet"


def progress(session: LabelSession) -> str:
    """``3 of 20 drafts labelled, saved to FILE``."""
    return f"{session.labelled} of {len(session.drafts)} drafts labelled, saved to {session.out}"


def _page(title: str, token: str, body: Safe) -> str:
    head = join(
        [
            Safe('<meta charset="utf-8">'),
            el("meta", http_equiv="Content-Security-Policy", content=LABEL_CSP),
            el("meta", name="referrer", content="no-referrer"),
            el("meta", name="label-token", content=token),
            el("title", title),
            Safe(f"<style>{_STYLE}</style>"),
        ]
    )
    nav = el("header", el("a", "drafts", href="/"), el("strong", "gradeloop label"))
    script = Safe('<script src="/label.js"></script>')
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head>{head}</head>'
        f"<body>{nav}<main>{body}</main>{script}</body></html>\n"
    )


def index_page(session: LabelSession, token: str) -> str:
    """Every draft, how far it is labelled, and a link to the first one to do."""
    rows = []
    todo = None
    for n, ident in enumerate(session.ids):
        done = session.complete(n)
        if todo is None and not done:
            todo = n
        count = len(session.labels[n])
        rows.append(
            el(
                "tr",
                el("td", el("a", ident, href=f"/item/{n + 1}")),
                el("td", f"{count} of {len(session.keys)} keys", class_="done" if done else None),
                data_item=str(n + 1),
            )
        )
    start = todo if todo is not None else 0
    body = join(
        [
            el("h1", f"label {session.run.kind} {session.run.source_id}"),
            el("p", progress(session), id="progress", class_="muted"),
            el("p", el("a", "start labelling", href=f"/item/{start + 1}", rel="next")),
            el("table", el("tr", el("th", "draft"), el("th", "labelled")), join(rows)),
        ]
    )
    return _page("gradeloop label", token, body)


def _key_row(session: LabelSession, n: int, key: LabelKey, token: str) -> Safe:
    value = session.labels[n].get(key.key)
    hidden = join(
        [
            el("input", type="hidden", name="token", value=token),
            el("input", type="hidden", name="item", value=str(n + 1)),
            el("input", type="hidden", name="key", value=key.key),
        ]
    )
    if key.scale == "score":
        buttons = join(
            el("button", str(s), type="submit", name="value", value=str(s)) for s in range(1, 11)
        )
        hint = f"scored 1-10, met at {key.threshold:g}: press a digit (0 = 10)"
    else:
        buttons = join(
            [
                el("button", "met (m)", type="submit", name="value", value="met"),
                el("button", "unmet (u)", type="submit", name="value", value="unmet"),
            ]
        )
        hint = "pass/fail"
    clear = el("button", "clear (x)", type="submit", name="value", value="clear")
    return el(
        "form",
        el("div", el("strong", key.key), " ", el("span", key.description)),
        el("div", hint, class_="muted"),
        hidden,
        buttons,
        clear,
        el("span", shown(key, value), class_="value"),
        method="post",
        action="/label",
        class_="label-key",
        data_key=key.key,
        data_item=str(n + 1),
        data_scale=key.scale,
        data_value="" if value is None else str(value).lower(),
    )


def item_page(session: LabelSession, n: int, token: str) -> str:
    """Draft ``n`` (0-based): the task, the draft, and a row per judge key."""
    d = session.drafts[n]
    total = len(session.drafts)
    nav = [el("a", "previous ([)", href=f"/item/{n}", rel="prev")] if n > 0 else []
    if n + 1 < total:
        nav.append(el("a", "next (Enter)", href=f"/item/{n + 2}", rel="next"))
    else:
        nav.append(el("a", "back to the list (Enter)", href="/", rel="next"))
    parts = [
        el("h1", f"draft {n + 1} of {total}: {session.ids[n]}"),
        el("p", progress(session), id="progress", class_="muted"),
        el("p", join(nav, sep=" · ")),
        el("h3", "task"),
        el("pre", d.task or "(none)", class_="task"),
        el("h3", "draft"),
        el("pre", judge_text(d.draft), class_="draft"),
    ]
    if d.reference is not None:
        parts += [el("h3", "reference"), el("pre", judge_text(d.reference), class_="reference")]
    parts += [
        el("h3", "judge keys"),
        el(
            "p",
            join(
                [
                    el("kbd", "j"),
                    "/",
                    el("kbd", "k"),
                    " move, ",
                    el("kbd", "m"),
                    " met, ",
                    el("kbd", "u"),
                    " unmet, digits score, ",
                    el("kbd", "x"),
                    " clear, ",
                    el("kbd", "Enter"),
                    " next draft",
                ]
            ),
            class_="muted",
        ),
        join(_key_row(session, n, k, token) for k in session.keys),
        el("p", "", id="status", role="status"),
    ]
    return _page(f"gradeloop label: {session.ids[n]}", token, join(parts))
