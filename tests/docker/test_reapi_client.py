"""tfwizard's REAPI client (tfwizard/core/remote/reapi.py) against the real test service.

The service is tests/reapi (BuildGrid from PyPI with PostgreSQL and a docker-exec worker):
instance `tfwizard-test` executes, `tfwizard-test-cache-only` only caches. TLS, client
certificates and API keys come from tests/reapi/front.py, a real TLS gRPC server that
forwards every call to BuildGrid and checks a header. Each call's wall time is printed at
the end of the module (run with -s) and written to <service base>/client-timings.json.
"""

from __future__ import annotations

import http.server
import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import world
from tests.net.servers import free_port
from tests.reapi.front import API_KEY_HEADER, Certs, Front, SilentServer, make_certs
from tfwizard.core.remote import reapi as client
from tfwizard.core.remote.reapi import ReapiError, ReapiTarget, TlsSettings

pytestmark = pytest.mark.docker

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "reapi" / "wire-golden.json"
REFERENCE = Path(__file__).resolve().parents[1] / "reapi" / "wire_reference.py"
#: a prompt answer: a local service answers in milliseconds; this allows a loaded machine
PROMPT_S = 2.0


@pytest.fixture(scope="module")
def timings(reapi_service) -> Iterator[dict[str, float]]:
    found: dict[str, float] = {}
    yield found
    print("\nREAPI client calls (wall seconds):")
    for name, seconds in sorted(found.items()):
        print(f"  {name:<46} {seconds:7.3f}")
    (reapi_service.base / "client-timings.json").write_text(json.dumps(found, indent=1))


def timed(timings: dict[str, float], name: str, call: Callable[[], Any]) -> tuple[Any, float]:
    """(result or the ReapiError raised, wall seconds); the time goes into `timings`."""
    t0 = time.monotonic()
    try:
        result: Any = call()
    except ReapiError as e:
        result = e
    seconds = time.monotonic() - t0
    timings[name] = seconds
    return result, seconds


def target(svc, instance: str | None = None, **kw: Any) -> ReapiTarget:
    return ReapiTarget(svc.endpoint, svc.instance_name if instance is None else instance, **kw)


# --------------------------------------------------------------------------- capabilities


def test_execution_instance_offers_execution_and_sha256(reapi, timings):
    caps, seconds = timed(timings, "capabilities tfwizard-test",
                          lambda: reapi_get(target(reapi)))
    assert not isinstance(caps, ReapiError), caps
    assert caps.exec_enabled and caps.sha256_for_execution and caps.sha256_for_cache
    assert caps.api_supported and caps.problems() == ()
    assert seconds < PROMPT_S
    # the same answer BuildGrid's own client reads (`bgd capabilities`)
    ref = reapi.capabilities()
    assert caps.max_batch_total_size_bytes == int(ref["cacheCapabilities"]["maxBatchTotalSizeBytes"])
    assert caps.action_cache_update_enabled is \
        ref["cacheCapabilities"]["actionCacheUpdateCapabilities"]["updateEnabled"]
    assert caps.execution_digest_function == ref["executionCapabilities"]["digestFunction"]
    high = ref["highApiVersion"]
    assert str(caps.high_api_version) == \
        f"{high.get('major', 0)}.{high.get('minor', 0)}.{high.get('patch', 0)}"


def reapi_get(t: ReapiTarget) -> client.Capabilities:
    return client.get_capabilities(t)


def test_cache_only_instance_shows_execution_disabled(reapi, timings):
    caps, seconds = timed(timings, "capabilities tfwizard-test-cache-only",
                          lambda: reapi_get(target(reapi, reapi.cache_only_instance)))
    assert not isinstance(caps, ReapiError), caps
    assert not caps.exec_enabled and caps.has_cache and caps.sha256_for_cache
    assert [p.kind for p in caps.problems()] == ["no-execution"]
    assert caps.problems(execution=False) == ()
    assert seconds < PROMPT_S


def test_wrong_instance_name_fails_in_seconds(reapi, timings):
    error, seconds = timed(timings, "capabilities wrong instance",
                           lambda: reapi_get(target(reapi, "no-such-instance")))
    assert isinstance(error, ReapiError)
    assert error.kind == "instance" and error.code == "INVALID_ARGUMENT"
    assert error.detail == "Invalid instance name: [no-such-instance]"
    assert "\"no-such-instance\"" in error.message and "remote.instance_name" in error.hint
    assert seconds < PROMPT_S


def test_unreachable_endpoint_fails_fast(timings):
    port = free_port()  # nothing listens there
    error, seconds = timed(timings, "capabilities closed port",
                           lambda: reapi_get(ReapiTarget(f"grpc://127.0.0.1:{port}", "x")))
    assert isinstance(error, ReapiError) and error.kind == "unreachable", error
    assert seconds < 1.0


def test_unresolvable_host_is_named(timings):
    error, seconds = timed(timings, "capabilities unresolvable host", lambda: reapi_get(
        ReapiTarget("grpc://no-such-host.invalid:443", "x")))
    assert isinstance(error, ReapiError) and error.kind == "dns", error
    assert seconds < client.DEFAULT_TIMEOUT_S + 1


def test_a_silent_endpoint_ends_at_the_deadline(timings):
    with SilentServer() as silent:
        error, seconds = timed(timings, "capabilities silent server (timeout 1.5 s)",
                               lambda: reapi_get(ReapiTarget(
                                   f"grpc://127.0.0.1:{silent.port}", "x", timeout_s=1.5)))
    assert isinstance(error, ReapiError) and error.kind == "deadline", error
    assert "1.5 s" in error.message
    assert 1.4 <= seconds < 3.0


def test_a_web_server_is_not_grpc(timings):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _QuietHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        error, seconds = timed(timings, "capabilities HTTP/1 server", lambda: reapi_get(
            ReapiTarget(f"grpc://127.0.0.1:{server.server_address[1]}", "x")))
    finally:
        server.shutdown()
        server.server_close()
    assert isinstance(error, ReapiError) and error.kind == "not-grpc", error
    assert seconds < PROMPT_S


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


def test_grpcs_against_the_plain_service_is_a_tls_mismatch(reapi, timings):
    error, seconds = timed(timings, "capabilities grpcs:// to plain", lambda: reapi_get(
        ReapiTarget(f"grpcs://127.0.0.1:{reapi.port}", reapi.instance_name)))
    assert isinstance(error, ReapiError) and error.kind == "tls-mismatch", error
    assert "grpc://" in error.hint and seconds < PROMPT_S


# --------------------------------------------------------------------------- TLS and auth


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("pki"))


def upstream(svc) -> str:
    return f"127.0.0.1:{svc.port}"


def test_tls_with_the_services_ca(reapi, pki, timings):
    with Front(upstream(reapi), pki.server_cert, pki.server_key) as front:
        trusted = TlsSettings(ca_file=str(pki.ca))
        caps, seconds = timed(timings, "capabilities over TLS (CA file)", lambda: reapi_get(
            ReapiTarget(f"grpcs://localhost:{front.port}", reapi.instance_name, tls=trusted)))
        assert not isinstance(caps, ReapiError), caps
        assert caps.exec_enabled and seconds < PROMPT_S
        # no scheme means TLS, as in Bazel
        caps = reapi_get(ReapiTarget(f"127.0.0.1:{front.port}", reapi.instance_name,
                                     tls=trusted))
        assert caps.exec_enabled
        untrusted, _s = timed(timings, "capabilities over TLS, CA not trusted", lambda: reapi_get(
            ReapiTarget(f"grpcs://localhost:{front.port}", reapi.instance_name)))
        assert isinstance(untrusted, ReapiError) and untrusted.kind == "tls-certificate"
        other = reapi_get_error(ReapiTarget(f"grpcs://localhost:{front.port}", "x",
                                            tls=TlsSettings(ca_file=str(pki.other_ca))))
        assert other.kind == "tls-certificate"
        plain, _s = timed(timings, "capabilities grpc:// to TLS", lambda: reapi_get(
            ReapiTarget(f"grpc://127.0.0.1:{front.port}", reapi.instance_name)))
        assert isinstance(plain, ReapiError) and plain.kind == "tls-mismatch", plain


def reapi_get_error(t: ReapiTarget) -> ReapiError:
    with pytest.raises(ReapiError) as e:
        client.get_capabilities(t)
    return e.value


def test_a_certificate_for_another_host_is_refused(reapi, pki):
    with Front(upstream(reapi), pki.wrong_host_cert, pki.wrong_host_key) as front:
        error = reapi_get_error(ReapiTarget(f"grpcs://127.0.0.1:{front.port}", "x",
                                            tls=TlsSettings(ca_file=str(pki.ca))))
    assert error.kind == "tls-certificate", error.detail


def test_a_service_that_wants_a_client_certificate(reapi, pki, timings):
    with Front(upstream(reapi), pki.server_cert, pki.server_key, client_ca=pki.ca) as front:
        endpoint = f"grpcs://localhost:{front.port}"
        without, _s = timed(timings, "capabilities mTLS without certificate", lambda: reapi_get(
            ReapiTarget(endpoint, reapi.instance_name, tls=TlsSettings(ca_file=str(pki.ca)))))
        assert isinstance(without, ReapiError) and without.kind == "tls-client-certificate"
        mtls = TlsSettings(ca_file=str(pki.ca), client_cert=str(pki.client_cert),
                           client_key=str(pki.client_key))
        caps, seconds = timed(timings, "capabilities mTLS", lambda: reapi_get(
            ReapiTarget(endpoint, reapi.instance_name, tls=mtls)))
        assert not isinstance(caps, ReapiError), caps
        assert caps.exec_enabled and seconds < PROMPT_S


def test_api_key_headers(reapi, pki, timings):
    key = "k3y-that-must-not-show"
    tls = TlsSettings(ca_file=str(pki.ca))
    with Front(upstream(reapi), pki.server_cert, pki.server_key, api_key=key) as front:
        endpoint = f"grpcs://localhost:{front.port}"
        missing, _s = timed(timings, "capabilities without API key", lambda: reapi_get(
            ReapiTarget(endpoint, reapi.instance_name, tls=tls)))
        assert isinstance(missing, ReapiError) and missing.kind == "unauthenticated"
        assert "remote.headers" in missing.hint
        wrong_value = "wrong-k3y-not-to-show"
        wrong = reapi_get_error(ReapiTarget(endpoint, reapi.instance_name, tls=tls,
                                            headers=((API_KEY_HEADER, wrong_value),)))
        assert wrong.kind == "permission"
        assert wrong_value not in str(wrong) + json.dumps(wrong.to_dict())
        caps, seconds = timed(timings, "capabilities with API key", lambda: reapi_get(
            ReapiTarget(endpoint, reapi.instance_name, tls=tls,
                        headers=((API_KEY_HEADER.upper(), key),))))
        assert not isinstance(caps, ReapiError), caps
        assert caps.exec_enabled and seconds < PROMPT_S
        # the probe goes through the same front: TLS, the key, three kinds of call
        result, seconds = timed(timings, "probe over TLS with API key", lambda: (
            client.probe_execution(ReapiTarget(endpoint, reapi.instance_name, tls=tls,
                                              headers=((API_KEY_HEADER, key),)),
                                  [reapi_image(reapi)])))
        assert not isinstance(result, ReapiError), result
        assert result.verdict == "accepted"


# --------------------------------------------------------------------------- the probe


def reapi_image(svc) -> str:
    return svc.image_property(world.IMAGE)


def test_probe_catches_an_unregistered_platform_property(reapi, timings):
    mark = reapi.mark()
    error, seconds = timed(timings, "probe unregistered property",
                           lambda: reapi_probe(reapi, [reapi_image(reapi), "gpu=nvidia"]))
    assert isinstance(error, ReapiError), error
    assert error.kind == "platform" and error.code == "FAILED_PRECONDITION"
    assert "Unregistered platform property [gpu={'nvidia'}]" in error.detail
    assert "remote.exec_properties" in error.hint
    assert seconds < PROMPT_S
    assert reapi.actions(mark) == []  # the scheduler refused it: no worker saw it


def reapi_probe(svc, properties: list[str], **kw: Any) -> client.ProbeResult:
    return client.probe_execution(target(svc), properties, **kw)


def test_probe_accepts_the_recipe_image_and_cancels(reapi, timings):
    world.ensure_images()
    mark = reapi.mark()
    result, seconds = timed(timings, "probe accepted + cancelled",
                            lambda: reapi_probe(reapi, [reapi_image(reapi)]))
    assert not isinstance(result, ReapiError), result
    assert result.verdict == "accepted" and result.cancelled
    assert result.stage in ("QUEUED", "EXECUTING") and result.operation
    assert seconds < PROMPT_S
    # BuildGrid assigns work every 0.25 s: a cancel that loses that race (2 in 105 tries
    # here) lets the worker run the action, which is the no-op in the recipe's image
    time.sleep(1.0)
    for record in reapi.actions(mark):
        if record["action"] == result.action:
            assert (record["argv"], record["image"], record["exit_code"]) == (
                list(client.PROBE_ARGV), world.IMAGE, 0)


def test_probe_with_wait_runs_a_no_op_in_the_image(reapi, timings):
    world.ensure_images()
    import docker

    docker_client = docker.from_env(timeout=60)
    try:
        digests = docker_client.images.get(world.IMAGE).attrs.get("RepoDigests") or []
    finally:
        docker_client.close()
    # an imported image has no repo digest: the property names it by its tag
    image_property = client.container_image_property(world.IMAGE, digests)
    assert image_property == reapi_image(reapi)
    mark = reapi.mark()
    result, seconds = timed(timings, "probe wait=True (runs /bin/sh -c 'exit 0')",
                            lambda: reapi_probe(reapi, [image_property], wait=True))
    assert not isinstance(result, ReapiError), result
    assert result.verdict == "ran" and result.exit_code == 0 and result.stage == "COMPLETED"
    ran = [a for a in reapi.actions(mark) if a["action"] == result.action]
    assert len(ran) == 1, ran
    assert (ran[0]["argv"], ran[0]["image"], ran[0]["status"], ran[0]["exit_code"]) == (
        list(client.PROBE_ARGV), world.IMAGE, "OK", 0)
    assert seconds < 30


def test_probe_with_wait_reports_a_worker_refusing_an_action_without_image(reapi, timings):
    error, _s = timed(timings, "probe wait=True, no container-image",
                      lambda: reapi_probe(reapi, [], wait=True))
    assert isinstance(error, ReapiError) and error.kind == "platform", error
    assert "names no container-image" in error.detail


def test_probe_against_the_cache_only_instance(reapi):
    with pytest.raises(ReapiError) as e:
        client.probe_execution(target(reapi, reapi.cache_only_instance), [reapi_image(reapi)])
    assert e.value.kind == "instance"


# --------------------------------------------------------------------------- wire goldens


def test_wire_goldens_are_what_the_reference_protobuf_library_writes(reapi_service):
    done = subprocess.run([str(reapi_service.python), str(REFERENCE)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(GOLDEN.read_text())


# --------------------------------------------------------------------------- Bazel's words


@pytest.mark.slow
@pytest.mark.parametrize(("case", "kind"), [
    ("wrong-instance", "instance"), ("unregistered-property", "platform"),
    ("no-container-image", "platform")])
def test_real_bazel_failures_get_the_preflight_words(reapi, tmp_path, case, kind):
    """Bazel 4.2.3 against the service, failing three ways; its log gets a diagnosis in
    the words (and with the fix) the preflight gives for the same mistake."""
    world.ensure_images()
    ws = world.copy_workspace(tmp_path / "ws")
    conf = world.run_configure(ws)
    assert conf.exit_code == 0, conf.output
    instance = "no-such-instance" if case == "wrong-instance" else reapi.instance_name
    properties = {"wrong-instance": [reapi_image(reapi)],
                  "unregistered-property": [reapi_image(reapi), "gpu=nvidia"],
                  "no-container-image": []}[case]
    res = world.bazel_build(ws, f"--remote_executor={reapi.endpoint}",
                            f"--remote_instance_name={instance}", "--remote_retries=0",
                            *(f"--remote_default_exec_properties={p}" for p in properties),
                            target="//tensorflow/core:platform", network="host", timeout=600)
    assert res.exit_code != 0
    error = client.diagnose_bazel_output(res.output, target(reapi, instance))
    assert error is not None, res.output[-3000:]
    print(f"\n{case}: {error.code}: {error.detail}")
    assert error.kind == kind, (error.kind, error.detail)
    # the preflight says the same for the same settings
    if case == "wrong-instance":
        assert reapi_get_error(target(reapi, instance)).kind == kind
    else:
        with pytest.raises(ReapiError) as probe:
            client.probe_execution(target(reapi), properties, wait=True)
        assert probe.value.kind == kind
