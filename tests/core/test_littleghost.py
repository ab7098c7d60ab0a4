"""LittleGhost Filesystem store documents: detection, views, digest, exact re-serialisation."""

import copy
import hashlib
import json
import os
import threading

import pytest

from sessionview.core import littleghost as lg
from sessionview.core import rubyjson
from sessionview.core.doc.model import Kind
from sessionview.core.session import JsonlSession, open_session

FIXTURE = "littleghost-filesystem-snapshot.json"


@pytest.fixture
def raw(fixtures) -> bytes:
    return (fixtures / FIXTURE).read_bytes()


@pytest.fixture
def doc(raw):
    return json.loads(raw)


# -- detection --------------------------------------------------------------------------------------


def test_fixture_looks_like_a_store_document(fixtures):
    assert lg.looks_like_store_document(fixtures / FIXTURE)


@pytest.mark.parametrize("name", ["brute-session.jsonl", "littleghost-messages.inferred.jsonl", "pi-agent.jsonl", "codex-rollout.jsonl"])
def test_jsonl_files_are_not_store_documents(fixtures, name):
    assert not lg.looks_like_store_document(fixtures / name)


def test_detection_is_false_for_missing_files_and_directories(tmp_path):
    assert not lg.looks_like_store_document(tmp_path / "missing.json")
    assert not lg.looks_like_store_document(tmp_path)
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    assert not lg.looks_like_store_document(empty)


def test_detection_does_not_block_on_a_fifo(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    result: list[bool] = []
    t = threading.Thread(target=lambda: result.append(lg.looks_like_store_document(fifo)), daemon=True)
    t.start()
    t.join(5)
    assert result == [False]


def test_detection_reads_only_the_head(tmp_path, raw):
    big = tmp_path / "big.json"
    big.write_bytes(raw[:200])  # a truncated document still starts like one
    assert lg.looks_like_store_document(big)


def test_open_session_picks_the_document_kind(fixtures):
    s = open_session(fixtures / FIXTURE)
    assert isinstance(s, lg.LittleGhostSession)
    assert s.format == "littleghost"
    assert s.format_title == "LittleGhost Filesystem store"
    assert isinstance(open_session(fixtures / "brute-session.jsonl"), JsonlSession)


# -- views ------------------------------------------------------------------------------------------


def test_views_are_the_messages(fixtures):
    s = lg.LittleGhostSession.load(fixtures / FIXTURE)
    assert len(s) == 6
    vs = list(s.views())
    assert [v.number for v in vs] == [1, 2, 3, 4, 5, 6]
    assert [v.role for v in vs] == ["user", "assistant", "tool", "assistant", "user", "developer"]
    assert vs[0].text == "Wie spät ist es in Zürich? ⏰"
    assert vs[1].text == "Ich schaue nach."
    assert [(c.id, c.name, c.arguments) for c in vs[1].tool_calls] == [("toolu_01", "clock", {"tz": "Europe/Zurich"})]
    assert [(r.call_id, r.content, r.is_error) for r in vs[2].tool_results] == [("toolu_01", "14:05", False)]
    assert vs[3].value["metadata"] == {"source": "fixture"}
    assert all(v.kind is Kind.MESSAGE and not v.problems for v in vs)
    assert s.state == {"language": "de", "plan": {"step": 2}}
    assert s.metadata == {"channel": "chat"}
    p = s.pairing()
    assert p.calls == {"toolu_01": 2} and p.result_of("toolu_01") == 3
    with pytest.raises(IndexError):
        s.view(7)


# -- digest -----------------------------------------------------------------------------------------


def test_digest_is_sha256_of_ruby_json_without_the_digest(doc):
    body = {k: v for k, v in doc.items() if k != "digest"}
    assert hashlib.sha256(rubyjson.generate(body)).hexdigest() == doc["digest"]
    assert lg.compute_digest(doc) == doc["digest"]


def test_fixture_digest_verifies(fixtures):
    s = lg.LittleGhostSession.load(fixtures / FIXTURE)
    assert s.digest_ok is True
    assert s.document_problems() == []
    assert s.check() == []
    assert s.read_only_reason is None


def test_tampering_one_byte_gives_digest_mismatch(tmp_path, raw):
    tampered = raw.replace(b"14:05 Uhr", b"14:06 Uhr")
    assert len(tampered) == len(raw) and tampered != raw
    path = tmp_path / "doc.json"
    path.write_bytes(tampered)
    s = lg.LittleGhostSession.load(path)
    assert s.digest_ok is False
    kinds = [p.kind for p in s.document_problems()]
    assert kinds == ["digest mismatch"]
    assert "digest" in s.read_only_reason
    assert any(p.kind == "digest mismatch" for p in s.check())
    # the text itself is shown as it is in the file
    assert s.view(4).text == "Es ist 14:06 Uhr in Zürich."


def test_malformed_digest_is_a_mismatch(raw):
    doc = json.loads(raw)
    doc["digest"] = "XYZ"
    s = lg.LittleGhostSession.from_bytes(rubyjson.generate(doc))
    assert [p.kind for p in s.document_problems()] == ["digest mismatch"]
    assert s.digest_ok is False


def test_actor_digest_and_file_name():
    assert lg.actor_digest("user-7") == "138d04e28969d789052b63d400a8cbcaa5ff86dec444a71c4ff5a2a2f1288ede"
    assert lg.actor_digest(None) == hashlib.sha256(b"[true,null]").hexdigest()
    name = lg.store_file_name("conversation-42")
    assert name.startswith("1f1abec9") and name.endswith("0296.json")


# -- exact re-serialisation -------------------------------------------------------------------------


def test_roundtrip_ok_on_the_fixture(raw):
    ok, why = lg.roundtrip_ok(raw)
    assert ok, why


@pytest.mark.parametrize(
    "mutate,fragment",
    [
        (lambda b: b + b"\n", "extra byte"),
        (lambda b: b.replace(b'{"version":1,', b'{ "version": 1,'), "differs from the file at byte 1"),
        (lambda b: b.replace(b'"step":2', b'"step":2.50'), "the file has '2.50"),
        (lambda b: b.replace(b"Z\xc3\xbcrich?", b"Z\\u00fcrich?"), "differs"),
        (lambda b: b[:-5], "invalid JSON"),
        (lambda b: b"\xff" + b, "not UTF-8"),
    ],
)
def test_roundtrip_fails_for_bytes_ruby_would_not_write(raw, mutate, fragment):
    ok, why = lg.roundtrip_ok(mutate(raw))
    assert not ok
    assert fragment in why


def test_serialize_document_reproduces_the_fixture(raw, doc):
    assert lg.serialize_document(doc) == raw
    assert not lg.serialize_document(doc).endswith(b"\n")


def test_serialize_document_recomputes_digest_and_orders_keys(raw, doc):
    edited = copy.deepcopy(doc)
    edited["snapshot"]["messages"][3]["content"][0]["text"] = "Es ist 14:06 Uhr in Zürich."
    shuffled = {"digest": "stale", "snapshot": edited["snapshot"], "actor_digest": edited["actor_digest"], "version": 1}
    out = lg.serialize_document(shuffled)
    assert out.startswith(b'{"version":1,"actor_digest":"138d04e2')
    assert list(json.loads(out)) == ["version", "actor_digest", "snapshot", "digest"]
    s = lg.LittleGhostSession.from_bytes(out)
    assert s.digest_ok is True and s.read_only_reason is None
    assert s.view(4).text == "Es ist 14:06 Uhr in Zürich."
    assert json.loads(out)["digest"] != doc["digest"]


def test_serialize_document_refuses_what_littleghost_would_not_write(doc):
    with pytest.raises(ValueError, match="never writes"):
        lg.serialize_document({**doc, "extra": 1})
    with pytest.raises(ValueError, match="missing"):
        lg.serialize_document({"version": 1, "snapshot": {}})
    bad = copy.deepcopy(doc)
    bad["snapshot"]["state"]["x"] = float("nan")
    with pytest.raises(rubyjson.RubyJSONError):
        lg.serialize_document(bad)


def test_floats_use_ruby_formatting_in_digest_and_bytes(doc):
    d = copy.deepcopy(doc)
    d["snapshot"]["state"] = {"ratio": 0.5, "big": 1e5, "tiny": 1.5e-7}
    out = lg.serialize_document(d)
    assert b'"ratio":0.5,"big":100000.0,"tiny":0.00000015' in out
    assert lg.LittleGhostSession.from_bytes(out).digest_ok is True
    # A file that spells 100000.0 as 1e5 still has a valid digest (Ruby re-generates the parsed value),
    # but it is not what LittleGhost writes, so it is read-only.
    other = out.replace(b"100000.0", b"1e5")
    s = lg.LittleGhostSession.from_bytes(other)
    assert s.digest_ok is True
    assert s.roundtrip[0] is False
    assert "1e5" in s.read_only_reason


def test_an_uncertain_float_makes_the_digest_unverifiable(doc):
    d = copy.deepcopy(doc)
    d["snapshot"]["state"] = {"x": 1}
    data = rubyjson.generate(d).replace(b'"x":1', b'"x":1e23')
    s = lg.LittleGhostSession.from_bytes(data)
    probs = s.document_problems()
    assert [p.kind for p in probs] == ["digest unverifiable"]
    assert probs[0].severity == "warning"
    assert s.digest_ok is None
    assert s.read_only_reason


# -- broken documents -------------------------------------------------------------------------------


def test_unparseable_document_is_one_invalid_view(tmp_path):
    path = tmp_path / "bad.json"
    path.write_bytes(b'{"version":1,"actor_digest":"ab", "snapshot": [')
    s = lg.LittleGhostSession.load(path)
    assert len(s) == 1
    v = s.view(1)
    assert v.kind is Kind.INVALID and v.label == "invalid JSON"
    assert v.raw.startswith(b'{"version":1')
    assert [p.kind for p in s.check()] == ["invalid JSON"]
    assert s.read_only_reason.startswith("the document cannot be parsed")
    assert s.document_problems() == []


def test_invalid_utf8_document(tmp_path):
    s = lg.LittleGhostSession.from_bytes(b'{"version":1,"x":"\xff"}')
    assert s.view(1).kind is Kind.INVALID
    assert s.view(1).label == "not UTF-8"


def test_structurally_wrong_document_never_raises():
    s = lg.LittleGhostSession.from_bytes(b'[1,2,3]')
    assert len(s) == 0
    assert any("not a JSON object" in p.message for p in s.document_problems())
    assert s.read_only_reason

    s = lg.LittleGhostSession.from_bytes(
        b'{"version":2,"actor_digest":5,"snapshot":{"messages":[5,{"role":5,"content":{"x":[]}},'
        b'{"role":"robot","content":"hi","metadata":{},"extra":1}],"state":[],"metadata":{"k":NaN}},'
        b'"digest":"00","other":true}'
    )
    assert len(s) == 3
    vs = list(s.views())
    assert vs[0].kind is Kind.UNKNOWN and vs[0].raw == b"5"
    assert vs[1].kind is Kind.UNKNOWN  # no string role
    assert vs[2].role == "robot" and vs[2].text == "hi"
    assert any("unsupported role" in p.message for p in vs[2].problems)
    assert any("unknown key(s) 'extra'" in p.message for p in vs[2].problems)
    messages = " | ".join(p.message for p in s.document_problems())
    assert "version 2" in messages
    assert "actor_digest" in messages
    assert "snapshot.state must be an object" in messages
    assert "NaN/Infinity" in messages
    assert "'other'" in messages
    assert "digest is missing or not 64" in messages
    s.check()


def test_duplicate_keys_are_reported(raw):
    data = raw.replace(b'"state":{"language":"de"', b'"state":{"language":"fr","language":"de"')
    s = lg.LittleGhostSession.from_bytes(data)
    assert s.state["language"] == "de"  # the last one wins, as in Ruby
    assert "duplicate keys" in [p.kind for p in s.document_problems()]
    assert s.read_only_reason  # re-serialising drops the duplicate
