"""The diagnostics bundle: what goes in, what stays out (secrets), and the CLI around it.

The record is written by hand from a real failed fixture build's log
(tests/data/logs/fixture-break.log.txt, captured from the Docker fixture build) with
secrets planted where a careless record could hold them: the recipe, the log, the plan.
"""

from __future__ import annotations

import json
import re
import tarfile
import zipfile
from pathlib import Path

import pytest

from tfwizard.cli import capture
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.building.report.bundle import (
    MAX_BLOCK_LINES,
    bundle_contents,
    bundle_secrets,
    make_bundle,
    read_bundle,
    scan_log,
)
from tfwizard.core.building.run.record import BuildRecord, find_record
from tfwizard.core.errors import UsageError
from tfwizard.core.host import HostProfile
from tfwizard.core.recipe import parse_recipe

DATA = Path(__file__).resolve().parents[2] / "data"
HOST = DATA / "hosts" / "no-gpu-server.json"

PROXY_PASSWORD = "pr0xyPassw0rd"
HEADER_TOKEN = "hdrT0ken-9f8e7d"  # under a header name redact() does not know by shape
API_KEY = "apiK3y-0a1b2c3d"
RESOLVED = "res0lvedCacheKey"  # the value of ${CACHE_KEY} in the environment
SECRETS = (PROXY_PASSWORD, HEADER_TOKEN, API_KEY, RESOLVED, "user:" + PROXY_PASSWORD)

RECIPE = f"""\
schema = 1
name = "leaky"

[tensorflow]
version = "2.21.0"

[backend]
kind = "cpu"

[network]
http_proxy = "http://user:{PROXY_PASSWORD}@proxy.example:3128"
https_proxy = "http://user:{PROXY_PASSWORD}@proxy.example:3128"

[remote]
cache = "grpc://cache.example:9092"
headers = ["x-cache-auth={HEADER_TOKEN}", "x-api-key={API_KEY}", "x-other=${{CACHE_KEY}}"]
"""

ENV = {"CACHE_KEY": RESOLVED, "PATH": "/usr/bin:/bin"}


def write_record(root: Path, build_id: str = "20261122-200918-4fd0b6", *,
                 log_lines: list[str] | None = None, verify: bool = True) -> Path:
    record = BuildRecord.create(build_id, root=root)
    record.write_recipe(RECIPE)
    plan = make_plan(parse_recipe(RECIPE, "leaky.toml"), uid=1000, gid=1000)
    record.write_plan(plan.to_json())  # a real plan: proxies and headers in clear text
    lines = log_lines
    if lines is None:
        lines = (DATA / "logs" / "fixture-break.log.txt").read_text().splitlines()
        lines[2:2] = [  # what a leaky tool could have logged
            f"tfw | proxy: http://user:{PROXY_PASSWORD}@proxy.example:3128",
            f"err | INFO: Options: --remote_header=x-cache-auth={HEADER_TOKEN} "
            f"--remote_header=x-api-key={API_KEY}",
            f"out | fetched with authorization: Bearer {RESOLVED}",
            f"err | curl -H 'x-cache-auth: {HEADER_TOKEN}' https://cache.example/",
        ]
    record.log_path.write_text("".join(f"{line}\n" for line in lines))
    record.write_result({"build_id": build_id, "status": "failed", "exit_code": 1,
                         "message": "step build exited with 1"})
    if verify:
        (record.path / "verify.json").write_text(json.dumps(
            {"ok": False, "python": "/v/bin/python", "proxy": f"http://u:{PROXY_PASSWORD}@p:1"}))
    return record.path


def test_bundle_holds_every_part_of_a_failed_build(tmp_path):
    record = write_record(tmp_path)
    out = make_bundle(record, tmp_path / "b.tar.gz", host=HostProfile.load(HOST), env=ENV)
    assert out.path == tmp_path / "b.tar.gz" and out.size == out.path.stat().st_size
    with tarfile.open(out.path) as tar:
        names = tar.getnames()
    top = "tfwizard-diagnostics-20261122-200918-4fd0b6"
    assert names[0] == f"{top}/README.txt" and all(n.startswith(top + "/") for n in names)
    files = read_bundle(out.path)
    assert set(files) == {"README.txt", "manifest.json", "recipe.toml", "plan.json",
                          "host.json", "result.json", "log-tail.txt", "failed-actions.txt",
                          "diagnosis.txt", "diagnosis.json", "unrecognised.json",
                          "verify.json"}
    # the failing action's stderr: the ERROR line and the compiler output after it
    failed = files["failed-actions.txt"]
    assert failed.startswith("--- log line 40\nERROR: /src/tensorflow/core/BUILD:33:11: "
                             "Compiling tensorflow/core/kernels/matmul_op.cc failed")
    assert "error: 'MatMulKernel' was not declared in this scope" in failed
    assert "Target //tensorflow" not in failed and "[19 / 30]" not in failed
    # the diagnosis of the whole log, as text and JSON
    assert "compile-error" in files["diagnosis.txt"]
    assert [d["id"] for d in json.loads(files["diagnosis.json"])][0] == "compile-error"
    # only generic signatures: no known cause, so the compiler's own line to read first,
    # labelled as not recognised (text and JSON)
    unknown = json.loads(files["unrecognised.json"])
    assert unknown["recognised"] is False and unknown["kind"] == "build"
    compiler = [r for r in unknown["lines"] if r["speaker"] == "compiler"][0]
    assert "error: 'MatMulKernel' was not declared in this scope" in compiler["text"]
    assert "MatMulKernel" in unknown["query"] and "/" not in unknown["query"]
    assert "NOT RECOGNISED" in files["diagnosis.txt"]
    assert files["diagnosis.txt"].index("compile-error") < files["diagnosis.txt"].index(
        "NOT RECOGNISED")
    assert "  unrecognised.json " in files["README.txt"]
    assert json.loads(files["plan.json"])["release"] == "2.21.0"
    assert HostProfile.from_json(files["host.json"]).os.distro is not None
    assert json.loads(files["result.json"])["status"] == "failed"
    assert files["log-tail.txt"].startswith("# tfwizard log 20261122-200918-4fd0b6: lines 1-79 "
                                            "of 79\n")
    manifest = json.loads(files["manifest.json"])
    assert manifest["status"] == "failed" and manifest["error_blocks"] == 1
    assert "given" in manifest["host_source"]
    readme = files["README.txt"]
    for name in files:
        assert f"  {name} " in readme, name
    assert "Secrets are masked" in readme


def test_no_secret_reaches_the_archive(tmp_path):
    record = write_record(tmp_path)
    for suffix in ("tar.gz", "zip"):
        out = make_bundle(record, tmp_path / f"b.{suffix}", host=HostProfile.load(HOST),
                          env=ENV)
        raw = out.path.read_bytes()
        if suffix == "zip":
            with zipfile.ZipFile(out.path) as zf:
                texts = [zf.read(n) for n in zf.namelist()]
        else:
            with tarfile.open(out.path) as tar:
                texts = [tar.extractfile(m).read() for m in tar.getmembers()]  # type: ignore
        blob = b"\n".join(texts)
        for secret in SECRETS:
            assert secret.encode() not in blob, (suffix, secret)
            assert secret.encode() not in raw
        files = read_bundle(out.path)
        # the shapes stay readable: where the secret was, and the ${ENV} reference
        assert "http://***@proxy.example:3128" in files["recipe.toml"]
        assert 'x-other=${CACHE_KEY}' in files["recipe.toml"]
        assert "x-cache-auth=***" in files["recipe.toml"]
        assert "--remote_header=x-cache-auth=***" in files["log-tail.txt"]
        assert "authorization: Bearer ***" in files["log-tail.txt"]
        json.loads(files["plan.json"])  # still valid JSON after masking
    # and the record itself was left as it was
    assert PROXY_PASSWORD in (record / "recipe.toml").read_text()


def test_bundle_secrets_are_the_clear_text_headers_and_resolved_references():
    found = bundle_secrets(RECIPE, ENV)
    assert RESOLVED in found and HEADER_TOKEN in found and API_KEY in found
    assert PROXY_PASSWORD in found
    assert bundle_secrets("not [valid toml", {}) == []


def test_log_tail_and_error_blocks_of_a_long_log():
    lines = [f"out | line {i}" for i in range(1, 5001)]
    lines[100] = "err | ERROR: /src/BUILD:1:1: Linking libfoo.so failed: (Exit 1)"
    lines[101:104] = ["err | ld: undefined reference to `bar'", "err | collect2: error",
                      "err | INFO: Elapsed time: 1s"]
    lines[4000] = "err | ERROR: no such package '@foo//': not found"
    lines[4001] = "tfw | step build exited with 1"
    scan = scan_log(lines)
    assert scan.total == 5000 and len(scan.tail) == 2000
    assert scan.tail[0] == "out | line 3001"
    assert [(b.line, len(b.lines)) for b in scan.blocks] == [(101, 3), (4001, 1)]
    assert scan.blocks[0].lines[-1] == "err | collect2: error"[6:]
    huge = ["err | ERROR: x failed"] + ["err | noise"] * (MAX_BLOCK_LINES + 50)
    block = scan_log(huge).blocks[0]
    assert len(block.lines) == MAX_BLOCK_LINES and block.truncated == 51
    assert "51 more lines" in block.text()


def test_host_from_the_record_or_detected_now(tmp_path):
    record = write_record(tmp_path, verify=False)
    calls = []

    def detect():
        calls.append(1)
        return HostProfile.load(DATA / "hosts" / "aarch64-server.json")

    files = bundle_contents(record, detect=detect, env=ENV)
    assert calls and json.loads(files["host.json"])["cpu"]["arch"] == "aarch64"
    assert "detected when the bundle was made" in files["README.txt"]
    assert "verify.json" not in files
    (record / "host.json").write_text(HOST.read_text())
    files = bundle_contents(record, detect=detect, env=ENV,
                            reports={"verify.json": {"ok": True}})
    assert len(calls) == 1 and "record kept" in json.loads(files["manifest.json"])["host_source"]
    assert json.loads(files["verify.json"]) == {"ok": True}


def test_a_record_without_a_log_or_plan_still_bundles(tmp_path):
    record = BuildRecord.create("20261122-100000-aaaaaa", root=tmp_path).path
    files = bundle_contents(record, host=HostProfile.load(HOST), env={})
    assert "log-tail.txt" not in files and "plan.json" not in files
    assert "Missing:" in files["README.txt"] and "no log" in files["README.txt"]


def test_find_record_latest_by_id_and_by_folder(tmp_path):
    env = {"TFWIZARD_DATA_DIR": str(tmp_path)}
    with pytest.raises(UsageError, match="no build records"):
        find_record(None, env=env)
    old = write_record(tmp_path, "20261121-080000-000001")
    new = write_record(tmp_path, "20261122-080000-000002")
    assert find_record(None, env=env) == new
    assert find_record("20261121-080000-000001", env=env) == old
    assert find_record(str(old), env=env) == old
    with pytest.raises(UsageError, match="no such build"):
        find_record("20001122-080000-000009", env=env)


def test_cli_bundle_latest_and_by_id(tmp_path):
    env = {**ENV, "TFWIZARD_DATA_DIR": str(tmp_path / "data")}
    status, out, err = capture(["bundle", "--host", str(HOST)], env, cwd=tmp_path)
    assert status == 2 and "no build records" in err
    write_record(tmp_path / "data", "20261121-080000-000001")
    latest = write_record(tmp_path / "data", "20261122-080000-000002")
    status, out, err = capture(["bundle", "--host", str(HOST)], env, cwd=tmp_path)
    assert status == 0, err
    made = tmp_path / f"tfwizard-diagnostics-{latest.name}.tar.gz"
    assert made.is_file() and f"Wrote {made}" in out
    status, out, err = capture(["bundle", "20261121-080000-000001", "--out", "x.zip",
                                "--host", str(HOST), "--json"], env, cwd=tmp_path)
    assert status == 0, err
    info = json.loads(out)
    assert info["bundle"] == str(tmp_path / "x.zip") and "README.txt" in info["files"]
    assert zipfile.is_zipfile(tmp_path / "x.zip")
    assert PROXY_PASSWORD.encode() not in (tmp_path / "x.zip").read_bytes()


def test_a_bundle_made_in_chinese_carries_an_english_diagnosis_too(tmp_path, zh_cn_lang):
    """The user reads Chinese; whoever answers the bug report may not."""
    record = write_record(tmp_path)
    files = read_bundle(make_bundle(record, tmp_path / "b.tar.gz",
                                    host=HostProfile.load(HOST), env=ENV).path)
    chinese, english = files["diagnosis.txt"], files["diagnosis.en.txt"]
    assert "compile-error: " in chinese and "原因" in chinese
    assert "compile-error: A C++ file failed to compile" in english
    assert "  cause: " in english and not re.search(r"[\u4e00-\u9fff]", english)
    assert "  diagnosis.en.txt " in files["README.txt"]
