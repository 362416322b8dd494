"""The recipe's TLS files for remote execution: preflight and build container (issue 21).

`Front` (tests/reapi/front.py) puts TLS in front of the BuildGrid test service and demands
a client certificate signed by the test CA (made with openssl for the test). The recipe
names the CA, the client certificate and its key; the preflight reads them on this
machine, and the plan mounts them read-only into the build container for Bazel's
--tls_certificate / --tls_client_certificate / --tls_client_key. The test image's Bazel
cannot speak TLS at all (see the second test), so no build over TLS runs here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import world
from tests.reapi.front import Front, make_certs
from tfwizard.core.building.plan.plan import make_plan
from tfwizard.core.recipe import load_recipe
from tfwizard.core.remote.check import check_service
from tfwizard.core.remote.tls import TLS_DIR

pytestmark = [pytest.mark.docker]


def _recipe(tmp_path: Path, endpoint: str, instance: str, pki, token: str,
            client: bool = True) -> Path:
    tls = f'tls_certificate = "{pki.ca}"\n'
    if client:
        tls += (f'tls_client_certificate = "{pki.client_cert}"\n'
                f'tls_client_key = "{pki.client_key}"\n')
    return world.fixture_recipe(
        tmp_path / "r.toml", workspace=world.copy_workspace(tmp_path / "ws"),
        prefix=f"tfwizard-test-rxt-{token}", network="host",
        bazel_flags=[f"--copt=-DTFW_REAPI_RUN={token}"],
        extra=f'[remote]\nexecutor = "{endpoint}"\ninstance_name = "{instance}"\n'
              f"jobs = 8\n{tls}")


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("pki"))


def test_the_preflight_uses_the_recipes_ca_and_client_certificate(reapi, pki, tmp_path):
    with Front(f"127.0.0.1:{reapi.port}", pki.server_cert, pki.server_key,
               client_ca=pki.ca) as front:
        endpoint = f"grpcs://localhost:{front.port}"
        good = load_recipe(_recipe(tmp_path, endpoint, reapi.instance_name, pki, "pre"))
        check = check_service(good, {}, [reapi.image_property(world.IMAGE)])
        assert [f.code for f in check.findings] == ["REMOTE_SERVICE"], \
            [f.message for f in check.findings]
        no_client = load_recipe(_recipe(tmp_path / "b", endpoint, reapi.instance_name, pki,
                                        "pre", client=False))
        found = check_service(no_client, {}, []).findings
        assert [(f.code, f.key) for f in found] == [
            ("REMOTE_CAPABILITIES", "remote.tls_client_certificate")], \
            [f.message for f in found]


def test_bazel_in_the_build_container_reads_the_mounted_files(pki, tmp_path):
    """The plan's TLS mounts and flags given to the test image's Bazel 4.2.3.

    That Bazel (Debian's bazel-bootstrap on OpenJDK 17) cannot speak TLS at all: it stops
    at "JDK provider does not support ALPN protocol" after it read the CA, the client
    certificate and the key (a file it cannot read or parse stops it earlier, with
    "Failed to init TLS infrastructure using '<file>' as ..."). So no build over TLS
    runs here; this shows the files arrive, read-only, where the flags point."""
    import docker

    world.ensure_images()
    recipe = load_recipe(_recipe(tmp_path, "grpcs://localhost:1", "x", pki, "mnt"))
    plan = make_plan(recipe, recipe_dir=tmp_path)
    flags = [f.flag for f in plan.bazel_flags if f.flag.startswith("--tls_")]
    assert len(flags) == 3, flags
    mounts = [docker.types.Mount(m.target, m.source, type=m.kind, read_only=m.read_only)
              for m in plan.mounts if m.target.startswith(TLS_DIR + "/")]
    ws = world.copy_workspace(tmp_path / "ws2")
    script = ('(echo >> /remote-tls/client.key) 2>/dev/null && echo WRITABLE; '
              'bazel --output_user_root=/tmp/bz build --remote_executor=grpcs://localhost:1 '
              '"$@" //tensorflow/core:platform >/dev/null 2>&1; echo "exit=$?"; '
              'grep -h "Failed to init TLS" /tmp/bz/*/java.log* | head -3')
    client = docker.from_env(timeout=120)
    container = client.containers.run(
        world.IMAGE, ["sh", "-c", script, "sh", *flags], detach=True, network_mode="none",
        working_dir="/src", labels={"org.tfwizard.test": "remote-tls"},
        mounts=[docker.types.Mount("/src", str(ws), type="bind"), *mounts])
    try:
        container.wait(timeout=300)
        out = container.logs().decode(errors="replace")
    finally:
        container.remove(force=True)
        client.close()
    assert "WRITABLE" not in out, out
    assert "exit=37" in out, out
    assert "Failed to init TLS infrastructure: JDK provider does not support ALPN" in out, out
    assert "Failed to init TLS infrastructure using" not in out, out
