"""What the build image says about itself for remote execution: its Bazel
(`bazel --version`, else Debian's bazel-bootstrap package version) and its repo digests
(the `container-image` every remote action names is pinned by one).

One short container per question, no network, no capabilities, removed afterwards; the
build's preflight asks before remote builds so the plan's flags fit the Bazel that runs.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from .. import bazelversion as bv
from ..errors import TfWizardError
from ..i18n import _
from ..paths import LABEL, own_labels
from . import client as dockerutil


@dataclass(frozen=True)
class ImageFacts:
    """What the build image says about itself: its Bazel and its repo digests."""

    bazel: bv.BazelVersion | None = None
    repo_digests: tuple[str, ...] = ()


def image_facts(client: Any, image: str, *, user: str | None = None,
                timeout_s: float = 60.0) -> ImageFacts:
    """The image's Bazel (`bazel --version`, then the bazel-bootstrap package) and repo
    digests, from one short container without network; TfWizardError when it cannot."""
    import requests.exceptions

    with dockerutil.docker_errors(_("looking inside image {image}").format(image=image)):
        digests = tuple(client.images.get(image).attrs.get("RepoDigests") or ())
        outputs = []
        for argv in bv.IMAGE_PROBES:
            container = client.containers.create(
                image, entrypoint=list(argv), command=[], user=user or "",
                network_mode="none", privileged=False, cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                environment={"HOME": "/tmp", "USER": "tfwizard"},
                labels=own_labels(**{f"{LABEL}.step": "probe"}),
                name=f"tfwizard-probe-{secrets.token_hex(4)}", detach=True)
            try:
                container.start()
                try:
                    code = container.wait(timeout=timeout_s).get("StatusCode")
                except requests.exceptions.ReadTimeout as exc:
                    raise TfWizardError(_("looking inside image {image} took more than "
                                          "{timeout:g} s").format(image=image,
                                                                  timeout=timeout_s)) from exc
                text = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
            finally:
                container.remove(force=True)
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
