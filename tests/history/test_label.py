"""gradeloop label: the session, the file it writes (calibrate's format), the server's guards."""

from __future__ import annotations

import http.client
import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

from gradeloop import HistoryStore, Rubric
from gradeloop.errors import InputError
from gradeloop.history._grading import GradedDraft
from gradeloop.history.report._label import LabelSession
from gradeloop.history.report._label_server import Labeller
from gradeloop.migration import read_labels
from gradeloop.migration._evidence import stored_run
from tests.support.cli_helpers import cli

RUBRIC = {
    "name": "support",
    "criteria": [
        {"key": "cites", "description": "Cites a source."},
        {"key": "tone", "description": "Warm.", "scale": "score", "threshold": 6},
        {"key": "short", "description": "Short.", "checker": "length", "options": {"max_words": 9}},
    ],
}
HOSTILE = "<script>window.__pwned = 1</script><img src=x onerror='window.__pwned = 2'>"


def make_run(db: Path) -> str:
    drafts = [
        GradedDraft("a", "See http://x.example", None, "answer the customer"),
        GradedDraft("b", HOSTILE, None, "answer the customer", reference="ref text"),
        GradedDraft("c", "Thanks, source: the handbook", None, "answer the customer"),
    ]
    with HistoryStore(db) as store:
        return store.add_grading_run(drafts, rubric=RUBRIC)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[LabelSession]:
    db = tmp_path / "h.db"
    run = make_run(db)
    with HistoryStore(db) as store:
        source = stored_run(store, run)
    with LabelSession(source, tmp_path / "labels.jsonl") as labelling:
        yield labelling


@pytest.fixture
def labeller(session: LabelSession) -> Iterator[Labeller]:
    with Labeller(session).start() as server:
        yield server


def test_marks_are_saved_as_they_are_made_in_calibrates_format(session: LabelSession) -> None:
    assert [k.key for k in session.keys] == ["cites", "tone"]  # judge keys only
    session.mark(0, "cites", "met")
    assert session.out.read_text().count("\n") == 1  # saved at once
    session.mark(1, "tone", "4")
    session.mark(1, "cites", "unmet")
    session.mark(0, "cites", "clear")
    items = read_labels(session.out, Rubric.from_dict(RUBRIC))
    assert [(i.output_id, dict(i.labels)) for i in items] == [("b", {"cites": False, "tone": 4.0})]
    assert items[0].reference == "ref text" and items[0].draft == HOSTILE
    with pytest.raises(InputError, match="pass/fail: send 'met' or 'unmet'"):
        session.mark(0, "cites", "yes")
    with pytest.raises(InputError, match="scored: send a score from 1 to 10"):
        session.mark(0, "tone", "11")
    with pytest.raises(InputError, match="not a judge key"):
        session.mark(0, "short", "met")
    with pytest.raises(InputError, match="there is no draft 4"):
        session.mark(3, "cites", "met")


def test_a_new_session_resumes_the_file_and_refuses_a_foreign_one(
    session: LabelSession, tmp_path: Path
) -> None:
    session.mark(2, "cites", "met")
    session.close()  # one session at a time on a file
    with LabelSession(session.run, session.out) as again:
        assert again.labels[2] == {"cites": True} and again.labelled == 1
    foreign = tmp_path / "other.jsonl"
    original = '{"id": "zz", "task": "t", "draft": "d", "labels": {"cites": true}}\n'
    foreign.write_text(original, encoding="utf-8")
    with pytest.raises(InputError, match="not a label of this run's drafts"):
        LabelSession(session.run, foreign)
    assert foreign.read_text(encoding="utf-8") == original  # never written over


def _request(
    server: Labeller, method: str, path: str, body: str = "", **headers: str
) -> tuple[int, dict[str, str], str]:
    port = int(server.url.rsplit(":", 1)[1].strip("/"))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers.setdefault("Host", f"127.0.0.1:{port}")
    conn.request(method, path, body=body.encode() if body else None, headers=headers)
    reply = conn.getresponse()
    out = (reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read().decode())
    conn.close()
    return out


def _token(server: Labeller) -> str:
    _, _, page = _request(server, "GET", "/item/1")
    found = re.search(r'name="label-token" content="([^"]+)"', page)
    assert found is not None
    return found.group(1)


def _form(token: str, **fields: str) -> str:
    return urlencode({"token": token, **fields})


def test_the_pages_escape_the_draft_and_carry_a_strict_policy(labeller: Labeller) -> None:
    status, headers, page = _request(labeller, "GET", "/item/2")
    assert status == 200 and HOSTILE not in page and "&lt;script&gt;" in page
    policy = headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert "unsafe-inline" not in policy.split("script-src", 1)[1].split(";", 1)[0]
    assert headers["x-frame-options"] == "DENY"
    status, headers, _ = _request(labeller, "GET", "/label.js")
    assert status == 200 and headers["content-type"].startswith("text/javascript")
    assert _request(labeller, "GET", "/item/9")[0] == 404


def test_a_mark_needs_the_token_the_host_and_its_own_origin(labeller: Labeller) -> None:
    token = _token(labeller)
    good = _form(token, item="1", key="cites", value="met")
    ctype = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    # the passing case first: saved, and the reply says so
    status, _, body = _request(labeller, "POST", "/label", good, **ctype)
    assert status == 200 and json.loads(body)["shown"] == "met"
    assert labeller.session.labels[0] == {"cites": True}
    # each guard, one at a time
    bad = _form("wrong", item="1", key="cites", value="unmet")
    assert _request(labeller, "POST", "/label", bad, **ctype)[0] == 403
    evil = {**ctype, "Origin": "http://evil.example"}
    undo = _form(token, item="1", key="cites", value="unmet")
    assert _request(labeller, "POST", "/label", undo, **evil)[0] == 403
    port = labeller.url.rsplit(":", 1)[1].strip("/")
    rebound = {**ctype, "Host": f"evil.example:{port}"}
    assert _request(labeller, "POST", "/label", undo, **rebound)[0] == 403
    assert _request(labeller, "GET", "/", Host=f"evil.example:{port}")[0] == 421
    huge = _form(token, item="1", key="cites", value="x" * 5000)
    assert _request(labeller, "POST", "/label", huge, **ctype)[0] == 413
    assert labeller.session.labels[0] == {"cites": True}  # nothing above changed it
    status, _, body = _request(
        labeller, "POST", "/label", _form(token, item="1", key="tone", value="12"), **ctype
    )
    assert status == 400 and "score from 1 to 10" in json.loads(body)["error"]
    # its own origin is welcome; a form post without the script is redirected back
    own = {"Content-Type": "application/x-www-form-urlencoded", "Origin": labeller.url[:-1]}
    status, headers, _ = _request(labeller, "POST", "/label", undo, **own)
    assert status == 303 and headers["location"] == "/item/1"
    assert labeller.session.labels[0] == {"cites": False}
    assert _request(labeller, "PUT", "/label", good)[0] == 405


def test_the_cli_refuses_bad_input(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    make_run(db)
    ran = cli("label", "nope", "--db", str(db), "--out", str(tmp_path / "l.jsonl"))
    assert ran.code == 2 and "no grading run or loop id starts with 'nope'" in ran.err
    ran = cli("label", "grade_", "--db", str(db), "--out", str(tmp_path / "no" / "l.jsonl"))
    assert ran.code == 2 and "--out folder not found" in ran.err
    with HistoryStore(db) as store:
        code_only = store.add_grading_run(
            [GradedDraft("a", "x")],
            rubric={"criteria": [RUBRIC["criteria"][2]]},  # type: ignore[index]
        )
    ran = cli("label", code_only, "--db", str(db), "--out", str(tmp_path / "l.jsonl"))
    assert ran.code == 2 and "has no judge keys: there is nothing to label" in ran.err


def test_a_transcript_draft_is_labelled_and_written_as_its_messages(tmp_path: Path) -> None:
    from gradeloop import Transcript
    from gradeloop.history.report._label_pages import item_page

    messages = [
        {"role": "user", "content": "Where is my order?"},
        {"role": "assistant", "content": "It shipped <b>today</b>."},
    ]
    db = tmp_path / "h.db"
    drafts = [GradedDraft("t1", Transcript.from_messages(messages), None, "answer")]
    with HistoryStore(db) as store:
        run = store.add_grading_run(drafts, rubric=RUBRIC)
        session = LabelSession(stored_run(store, run), tmp_path / "labels.jsonl")
    assert isinstance(session.drafts[0].draft, Transcript)
    page = str(item_page(session, 0, "token"))
    assert "It shipped &lt;b&gt;today&lt;/b&gt;." in page  # the rendering, escaped
    session.mark(0, "cites", "unmet")
    [line] = [json.loads(x) for x in session.out.read_text().splitlines()]
    assert line["messages"] == messages and "draft" not in line
    [item] = read_labels(session.out, Rubric.from_dict(RUBRIC))
    assert isinstance(item.draft, Transcript) and item.draft.messages == messages
    session.close()  # one session at a time on a file
    with LabelSession(session.run, session.out) as again:  # resumes its own labels
        assert again.labels[0] == {"cites": False}


@pytest.mark.parametrize(("item", "value"), [("²", "met"), ("1", "³"), ("٣", "met"), ("1", "٣")])
def test_digits_python_calls_digits_but_int_refuses_are_a_clear_400(
    labeller: Labeller, item: str, value: str
) -> None:
    token = _token(labeller)
    ctype = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    key = "tone" if value != "met" else "cites"
    status, _, body = _request(
        labeller, "POST", "/label", _form(token, item=item, key=key, value=value), **ctype
    )
    error = json.loads(body)["error"]
    assert status == 400 and ("draft number" in error or "score from 1 to 10" in error)
    assert labeller.session.labels[0] == {}  # nothing marked
    ok = _form(token, item="1", key="tone", value="3")  # the same, in ASCII digits
    assert _request(labeller, "POST", "/label", ok, **ctype)[0] == 200


def test_a_content_length_int_refuses_is_refused(labeller: Labeller) -> None:
    token = _token(labeller)
    body = _form(token, item="1", key="cites", value="met")
    port = int(labeller.url.rsplit(":", 1)[1].strip("/"))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.putrequest("POST", "/label", skip_host=True, skip_accept_encoding=True)
    conn.putheader("Host", f"127.0.0.1:{port}")
    conn.putheader("Content-Length", "²")
    conn.endheaders(body.encode())
    assert conn.getresponse().status == 413
    conn.close()
    assert labeller.session.labels[0] == {}


def test_the_session_refuses_a_score_in_other_digits(session: LabelSession) -> None:
    with pytest.raises(InputError, match="score from 1 to 10"):
        session.mark(0, "tone", "³")
    assert session.mark(0, "tone", "3") == 3
