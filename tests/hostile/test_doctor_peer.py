"""A hostile "node 1" on loopback (issue 32): a real node 0 (`accelwiz doctor` in its own process) hosts the
store, and this test process reaches the port with torch's own TCPStore client and posts what a stranger, a
peer with another secret, or a broken peer would. Every case ends node 0 within its --timeout, with a named row
and its exit code (9: untrusted peer), never exit 0, an internal error, or a read of a path the peer named.
"""

from __future__ import annotations

import json
import os
import time
from datetime import timedelta

import psutil
import pytest

from accelwiz.doctor.gather import gather
from accelwiz.doctor.model import Sighting
from accelwiz.doctor.wire import MAX_RECORD_BYTES, SECRET_ENV, job_key, seal
from tests.doctor.nodes import Cluster, Node, wait

pytestmark = pytest.mark.slow

SECRET = "b7" * 16
TIMEOUT = 6  # node 0's --timeout: every case must end well within it plus the grace of later phases


def _connect(cluster: Cluster):  # noqa: ANN202 - a torch TCPStore client
    import torch.distributed as dist

    end = time.monotonic() + 30
    while True:
        try:
            return dist.TCPStore("127.0.0.1", cluster.store_port, 2, False, timeout=timedelta(seconds=5))
        except RuntimeError:
            if time.monotonic() > end:
                raise
            time.sleep(0.2)


def _node0(cluster: Cluster, *, secret: str | None = SECRET, allreduce: bool = False):  # noqa: ANN202 - a Popen
    node = Node(0, env={SECRET_ENV: secret} if secret else {})
    argv = [*cluster.argv(node), "--timeout", str(TIMEOUT), *([] if allreduce else ["--no-allreduce"])]
    return cluster.start(node, argv)


def _attack(tmp_path, post) -> tuple:  # noqa: ANN001 - post(store, cluster) does the attack
    cluster = Cluster(tmp_path)
    started = time.monotonic()
    process = _node0(cluster)
    store = _connect(cluster)
    post(store, cluster)
    [ended] = wait([process])
    return ended, time.monotonic() - started


def _facts_json(tmp_path, **folder_changes: str) -> str:
    facts = gather(1, folders={"output": tmp_path / "peer-output", "cache": tmp_path / "peer-cache"},
                   nonce="0123456789ab", environ={})
    if folder_changes:
        folders = [f.model_copy(update=folder_changes) for f in facts.folders]
        facts = facts.model_copy(update={"folders": folders})
    return facts.model_dump_json()


def _key(secret: str) -> bytes:
    return job_key({SECRET_ENV: secret}, nodes=2, main="-", store_port=0)[0]


def _post_facts(raw: bytes):  # noqa: ANN202
    def post(store, cluster) -> None:  # noqa: ANN001
        store.set("facts/1", raw)
        store.add("facts/count", 1)

    return post


@pytest.mark.parametrize(("case", "raw", "reason"), [
    ("unsealed facts (a stranger posing as node 1)", None, "not a sealed preflight record"),
    ("sealed with another secret", "wrong", "its seal does not match the job secret"),
    ("bad JSON under the right seal", b"{not json", "not a valid facts record"),
    ("non-UTF-8 bytes under the right seal", b"\xff\xfe\x00garbage", "not UTF-8 (byte 0)"),
    ("oversized record", "oversized", f"more than the {MAX_RECORD_BYTES:,}"),
], ids=["unsealed", "wrong-secret", "bad-json", "non-utf8", "oversized"])
def test_a_bad_peer_is_a_named_problem_not_a_pass_or_an_internal_error(tmp_path, case, raw, reason):
    facts = _facts_json(tmp_path)
    if raw is None:
        data = facts.encode()
    elif raw == "wrong":
        data = seal(_key("another-secret-" * 3), "facts", 1, facts)
    elif raw == "oversized":
        data = b"x" * (MAX_RECORD_BYTES + 1)
    else:  # a peer holding the secret that sends garbage: the seal passes, the body does not
        import hashlib
        import hmac

        mac = hmac.new(_key(SECRET), b"facts/1\0" + raw, hashlib.sha256).hexdigest().encode()
        data = b"aw1 " + mac + b" " + raw
    ended, seconds = _attack(tmp_path, _post_facts(data))
    assert ended.code == 9, (case, ended.stderr, ended.stdout)
    rows = ended.report["findings"]
    assert [(r["problem"], r["node"], r["check"]) for r in rows][0] == ("untrusted peer", 1, "facts record")
    assert reason in rows[0]["detail"], (case, rows[0]["detail"])
    assert "Traceback" not in ended.stderr
    assert seconds < TIMEOUT + 20, seconds


def test_a_peer_naming_a_fifo_or_a_secret_file_as_its_token_is_never_opened(tmp_path):
    """Last round node 0 opened the peer's token path: a FIFO held it past --timeout, and comparing the file
    with the peer's guess was a content oracle. Now node 0 derives the name from the nonce, in its own folder."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    secret_file = tmp_path / "secret"
    secret_file.write_text("0123456789ab")  # the content the peer guesses
    facts = json.loads(_facts_json(tmp_path))
    facts["folders"][0]["token"], facts["folders"][1]["token"] = str(fifo), str(secret_file)
    raw = seal(_key(SECRET), "facts", 1, json.dumps(facts))

    def post(store, cluster) -> None:  # noqa: ANN001
        _post_facts(raw)(store, cluster)
        sighting = Sighting(rank=1, seen={"output": [0, 1], "cache": [1]}).model_dump_json()
        store.set("seen/1", seal(_key(SECRET), "seen", 1, sighting))
        store.add("seen/count", 1)

    ended, seconds = _attack(tmp_path / "run", post)
    rows = [(r["problem"], r["node"], r["check"]) for r in ended.report["findings"]]
    # node 0 does not see node 1's token in its own folder (none was written there): not shared, exit 7
    assert ended.code == 7 and rows == [("storage", 0, "output folder")], (ended.stdout, ended.stderr)
    assert seconds < TIMEOUT + 20, seconds


def test_a_nonce_that_is_a_path_is_refused_by_the_schema(tmp_path):
    raw = seal(_key(SECRET), "facts", 1, _facts_json(tmp_path).replace('"0123456789ab"', '"../../etc/x"'))
    ended, _ = _attack(tmp_path, _post_facts(raw))
    assert ended.code == 9
    assert "folders.0.nonce" in ended.report["findings"][0]["detail"]


def test_the_store_listens_on_the_address_it_was_given_only(tmp_path):
    cluster = Cluster(tmp_path)
    process = _node0(cluster)
    try:
        end = time.monotonic() + 30
        listening: set[str] = set()
        while not listening and time.monotonic() < end:
            listening = {c.laddr.ip for c in psutil.net_connections(kind="tcp")
                         if c.status == psutil.CONN_LISTEN and c.laddr.port == cluster.store_port}
            time.sleep(0.1)
        assert listening == {"127.0.0.1"}, listening  # not 0.0.0.0 / :: (every interface), as torch's own
    finally:
        wait([process])


def test_without_a_secret_the_report_says_peers_were_not_authenticated(tmp_path):
    cluster = Cluster(tmp_path)
    ended = cluster.run(Node(0), Node(1))
    assert [e.code for e in ended] == [0, 0], [e.stderr + e.stdout for e in ended]
    assert any(SECRET_ENV in note for note in ended[0].report["notes"])
    with_secret = Cluster(tmp_path / "s").run(Node(0, env={SECRET_ENV: SECRET}), Node(1, env={SECRET_ENV: SECRET}))
    assert [e.code for e in with_secret] == [0, 0], [e.stderr + e.stdout for e in with_secret]
    assert not any(SECRET_ENV in note for note in with_secret[0].report["notes"])
