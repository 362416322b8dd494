"""A recipe's ${VAR} reaches a host only with the user's consent: listed by check and
plan, refused without consent before anything is sent (a real gRPC endpoint on loopback
records what arrives), kept in a 0600 file."""

from __future__ import annotations

import asyncio
import json
import stat
import threading
from concurrent import futures
from pathlib import Path

import grpc
import pytest

from tfwizard.cli import capture
from tfwizard.core import consent
from tfwizard.core.consent import CONFIG_DIR_ENV, CONSENT_ENV, SecretConsentRequired
from tfwizard.core.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[2]
SECRET = "AWS-SECRET-0001-do-not-send"


class Recorder(grpc.GenericRpcHandler):
    """Every call's method and metadata; answers each with an empty message (an empty
    ServerCapabilities: a service with no execution, which the preflight reports)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, str]]] = []
        self.lock = threading.Lock()

    def service(self, details):
        with self.lock:
            self.calls.append((details.method, dict(details.invocation_metadata)))
        return grpc.unary_unary_rpc_method_handler(lambda request, context: b"")


@pytest.fixture
def endpoint():
    recorder = Recorder()
    server = grpc.server(futures.ThreadPoolExecutor(2))
    server.add_generic_rpc_handlers((recorder,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"grpc://127.0.0.1:{port}", recorder
    finally:
        server.stop(0)


def shared_recipe(tmp_path: Path, executor: str) -> Path:
    """A recipe someone sent: it names the user's AWS key and its author's endpoint."""
    text = (ROOT / "recipes" / "tf221-cpu-portable.toml").read_text()
    path = tmp_path / "shared.toml"
    path.write_text(text + f'\n[remote]\nexecutor = "{executor}"\nprobe = false\n'
                    'headers = ["x-api-key=${TFWT_AWS_KEY}"]\n')
    return path


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    import os

    return {**os.environ, "TFWT_AWS_KEY": SECRET,
            CONFIG_DIR_ENV: str(tmp_path / "config"), **extra}


def test_check_lists_the_variable_and_its_host(tmp_path, endpoint):
    url, recorder = endpoint
    path = shared_recipe(tmp_path, url)
    status, out, err = capture(["check", str(path)], env_for(tmp_path))
    assert "SECRET_REFERENCE" in out and "${TFWT_AWS_KEY}" in out and "127.0.0.1" in out
    assert SECRET not in out + err
    status, out, _err = capture(["check", "--json", str(path)], env_for(tmp_path))
    found = [f for f in json.loads(out)["findings"] if f["code"] == "SECRET_REFERENCE"]
    assert [f["key"] for f in found] == ["remote.headers"]
    assert recorder.calls == []  # plain check asks no service


def test_plan_lists_the_uses_in_text_and_json(tmp_path, endpoint):
    url, _recorder = endpoint
    path = shared_recipe(tmp_path, url)
    status, out, _err = capture(["plan", str(path)], env_for(tmp_path))
    assert "# ${TFWT_AWS_KEY} (remote.headers) is sent to 127.0.0.1" in out
    status, out, _err = capture(["plan", "--format", "json", str(path)], env_for(tmp_path))
    assert json.loads(out)["secret_uses"] == [{"variable": "TFWT_AWS_KEY", "host": "127.0.0.1",
                                               "key": "remote.headers", "allowed": False}]
    assert SECRET not in out


def test_preflight_sends_nothing_without_consent(tmp_path, endpoint):
    url, recorder = endpoint
    path = shared_recipe(tmp_path, url)
    status, out, err = capture(["check", "--preflight", "--json", str(path)],
                               env_for(tmp_path))
    assert recorder.calls == []  # the endpoint was never asked: no header left
    codes = [f["code"] for f in json.loads(out)["findings"]]
    assert codes.count("SECRET_NOT_ALLOWED") == 1 and int(status) == 1
    message = next(f["message"] for f in json.loads(out)["findings"]
                   if f["code"] == "SECRET_NOT_ALLOWED")
    assert "--allow-secret TFWT_AWS_KEY@127.0.0.1" in message and SECRET not in out + err


def test_preflight_sends_the_header_with_consent_by_flag_or_file(tmp_path, endpoint):
    url, recorder = endpoint
    path = shared_recipe(tmp_path, url)
    status, out, err = capture(["check", "--preflight", str(path),
                                "--allow-secret", "TFWT_AWS_KEY@127.0.0.1"], env_for(tmp_path))
    assert "SECRET_NOT_ALLOWED" not in out
    assert recorder.calls and recorder.calls[0][0].endswith("/GetCapabilities")
    assert recorder.calls[0][1].get("x-api-key") == SECRET
    # allowed for another host: not for this one
    recorder.calls.clear()
    capture(["check", "--preflight", str(path), "--allow-secret=TFWT_AWS_KEY@evil.example"],
            env_for(tmp_path))
    assert recorder.calls == []
    # always allowed: the config file
    status, out, _err = capture(["consent", "allow", "TFWT_AWS_KEY", "127.0.0.1"],
                                env_for(tmp_path))
    assert int(status) == 0
    capture(["check", "--preflight", str(path)], env_for(tmp_path))
    assert recorder.calls and recorder.calls[0][1].get("x-api-key") == SECRET


def test_consent_file_is_private_and_revocable(tmp_path):
    env = env_for(tmp_path)
    status, _out, _err = capture(["consent", "allow", "BB_KEY", "Remote.BuildBuddy.io"], env)
    path = consent.consent_path(env)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert consent.stored(env) == [("BB_KEY", "remote.buildbuddy.io")]
    status, out, _err = capture(["consent", "list", "--json"], env)
    assert json.loads(out)["allowed"] == [{"variable": "BB_KEY", "host": "remote.buildbuddy.io"}]
    assert int(capture(["consent", "revoke", "BB_KEY", "remote.buildbuddy.io"], env)[0]) == 0
    assert consent.stored(env) == []
    assert int(capture(["consent", "revoke", "BB_KEY", "remote.buildbuddy.io"], env)[0]) == 1
    status, _out, err = capture(["consent", "allow", "BAD NAME", "h"], env)
    assert int(status) == 2 and "VARIABLE@HOST" in err


def test_a_bad_allow_secret_is_a_usage_error(tmp_path):
    status, _out, err = capture(["plan", "--allow-secret", "nohost", "x.toml"], env_for(tmp_path))
    assert int(status) == 2 and "\"nohost\" is not VARIABLE@HOST" in err


def test_uses_name_every_service_and_the_proxy_host():
    uses = consent.secret_uses(
        ["--remote_cache=grpcs://cache.corp:443", "--bes_backend=grpcs://bes.corp",
         "--remote_header=x-k=${K}", "--repo_env=HTTPS_PROXY=${P}"],
        {"HTTPS_PROXY": "${P}", "https_proxy": "${P}"}, {"P": "http://u:pw@proxy.corp:3128"})
    assert [(u.variable, u.host, u.key) for u in uses] == [
        ("P", "proxy.corp", "network.https_proxy"), ("K", "cache.corp", "remote.headers"),
        ("K", "bes.corp", "remote.headers")]
    # an IPv6 service: its pair parses back
    ipv6 = consent.secret_uses(["--remote_cache=grpc://[::1]:9092", "--remote_header=a=${K}"],
                               {}, {})
    assert [u.pair for u in ipv6] == ["K@::1"] and consent.parse_pair("K@::1") == ("K", "::1")
    # a "proxy" that is no URL goes only into the build container's environment
    assert consent.secret_uses([], {"HTTP_PROXY": "${AWS}"}, {"AWS": "abc"})[0].host == \
        consent.CONTAINER


def test_a_build_refuses_before_docker_without_consent(tmp_path):
    from tfwizard.core.building.plan.plan import make_plan
    from tfwizard.core.building.run.runner import BuildRunner

    recipe = load_recipe(ROOT / "recipes" / "tf221-cpu-portable.toml").with_changes(
        {"remote.cache": "https://cache.example", "remote.headers": ["x-api-key=${TFWT_KEY}"]})
    env = {"TFWT_KEY": SECRET, "DOCKER_HOST": "tcp://127.0.0.1:9",
           CONFIG_DIR_ENV: str(tmp_path / "config")}
    runner = BuildRunner(make_plan(recipe), data_root=tmp_path, env=env)

    async def run():
        return [e async for e in runner.events()]

    result = asyncio.run(run())[-1].result
    assert result.status == "error" and "--allow-secret TFWT_KEY@cache.example" in \
        result.message
    assert "Docker" not in result.message  # refused before connecting to the engine
    with pytest.raises(SecretConsentRequired):
        consent.require(consent.recipe_uses(recipe, env), env)
    consent.require(consent.recipe_uses(recipe, env), {**env, CONSENT_ENV: "TFWT_KEY@cache.example"})
