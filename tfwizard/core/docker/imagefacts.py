"""What the build image says about itself for remote execution: its Bazel
(`bazel --version`, else Debian's bazel-bootstrap package version) and its repo digests
(the `container-image` every remote action names is pinned by one); and, for an engine on
another machine, the free space of the disk its containers live on.

One short container per question, no network, no capabilities, removed afterwards; the
build's preflight asks before remote builds so the plan's flags fit the Bazel that runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import bazelversion as bv
from ..errors import TfWizardError
from ..i18n import _
from . import client as dockerutil

#: what a probe's Bazel needs to start without a real user (its output base under HOME)
_PROBE_ENV = {"HOME": "/tmp", "USER": "tfwizard"}


@dataclass(frozen=True)
class ImageFacts:
    """What the build image says about itself: its Bazel and its repo digests."""

    bazel: bv.BazelVersion | None = None
    repo_digests: tuple[str, ...] = ()


def image_facts(client: Any, image: str, *, user: str | None = None,
                timeout_s: float = 60.0) -> ImageFacts:
    """The image's Bazel (`bazel --version`, then the bazel-bootstrap package) and repo
    digests, from one short container without network; TfWizardError when it cannot."""
    with dockerutil.docker_errors(_("looking inside image {image}").format(image=image)):
        digests = tuple(client.images.get(image).attrs.get("RepoDigests") or ())
        outputs = []
        for argv in bv.IMAGE_PROBES:
            code, text = dockerutil.run_short(client, image, list(argv), [], user=user,
                                              timeout_s=timeout_s, environment=_PROBE_ENV)
            outputs.append(text if code == 0 else "")
            if bv.parse_version_output(outputs[0]) is not None:
                break
    found = bv.from_image_output(outputs[0], outputs[1] if len(outputs) > 1 else "")
    return ImageFacts(found, digests)


def read_image_facts(image: str, env: Any, *, user: str | None = None) -> ImageFacts | None:
    """`image_facts` on this machine's engine; None when the image is not here or the
    engine cannot answer (the image check of the preflight says why)."""
    import docker.errors

    try:
        client = dockerutil.connect(env, timeout=30)
    except TfWizardError:
        return None
    try:
        return image_facts(client, image, user=user)
    except (TfWizardError, docker.errors.DockerException):
        return None
    finally:
        client.close()


def image_bazel(image: str, env: Any, user: str | None = None) -> bv.BazelVersion | None:
    """The Bazel the build image has (read_image_facts), None when it cannot say: what a
    failed build's diagnosis asks when neither the plan nor the log names it."""
    facts = read_image_facts(image, env, user=user)
    return facts.bazel if facts is not None else None


def engine_free_bytes(client: Any, image: str, *, user: str | None = None,
                      timeout_s: float = 60.0) -> int | None:
    """The free bytes of the disk the engine keeps its containers on: `df -Pk /` in a short
    container of `image`, whose root is on the engine's data root, with the volumes (the
    build's output base and caches) and images. What an engine on another machine has
    free, which no API call says; None when the image has no df or its answer is not
    POSIX's. TfWizardError when the engine cannot run the container."""
    with dockerutil.docker_errors(_("looking inside image {image}").format(image=image)):
        code, text = dockerutil.run_short(client, image, ["df", "-Pk", "/"], [], user=user,
                                          timeout_s=timeout_s)
    return df_available(text) if code == 0 else None


def df_available(text: str) -> int | None:
    """The available bytes in `df -Pk`'s output (POSIX: a header, then one line per file
    system whose fourth field is the available 1024-byte blocks; a long device name may
    take a line of its own, as some df's print it)."""
    fields = " ".join(text.splitlines()[1:]).split()
    if len(fields) < 6 or not fields[3].isdigit():
        return None
    return int(fields[3]) * 1024
