"""Preflight: the checks that touch the world (network, files) before a build starts.

The rules in `rules.py` stay pure and fast (the GUI re-runs them on every change); these
open TCP connections (2 s each, at most a handful) and look at host paths, so they run only
on `tfwizard check --preflight`, before `tfwizard build` and before `tfwizard fetch`.
Findings use the rules' `Finding`, so they print and serialise the same way.

Reachability is tried from this machine: with DOCKER_HOST pointing at another machine, or
a bridge network, the build container may see the network differently (rules.py warns
about loopback addresses in a bridge container).

`check_image` looks at the build image itself: that it exists (on this machine, or in its
registry), that what the plan runs and names inside it is there (compiler, Python, CUDA,
the steps' programs: one short container, no network, no privileges), and whether the
image behind the tag changed since the last recorded build of the recipe. The runner does
the same look inside right after it has the image (`missing_in_image`), so a wrong image
or compiler stops a build in its first seconds, not hours in.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import consent
from ...docker import client as dockerutil
from ...docker.probecache import cached_probe
from ...errors import TfWizardError
from ...findings import Finding
from ...i18n import _
from ...recipe import Recipe
from ...remote.tls import tls_files
from ...secrets import env_reference
from ..plan.configure import header_candidates
from ..plan.plan import BuildPlan
from .record import list_records

#: seconds per TCP connect
CONNECT_TIMEOUT_S = 2.0
DEFAULT_PORTS = {"http": 80, "https": 443, "grpc": 80, "grpcs": 443, "socks5": 1080,
                 "socks5h": 1080}

Connect = Callable[[tuple[str, int], float], Any]


def endpoint(url: str) -> tuple[str, int] | None:
    """(host, port) of scheme://[user:pass@]host[:port][/...]; None when there is none."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return None
    netloc = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    if netloc.startswith("["):
        host, _bracket, tail = netloc[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ""
    else:
        host, _colon, port_text = netloc.partition(":")
    if not host:
        return None
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            return None
        return host, int(port_text)
    port = DEFAULT_PORTS.get(scheme.lower())
    return (host, port) if port else None


def _tcp(address: tuple[str, int], timeout: float) -> Any:
    return socket.create_connection(address, timeout=timeout)


def reachable(url: str, *, timeout_s: float = CONNECT_TIMEOUT_S,
              connect: Connect = _tcp) -> str | None:
    """None when a TCP connection to the URL's host:port opens, else why not."""
    where = endpoint(url)
    if where is None:
        return _("no host:port in the URL")
    try:
        conn = connect(where, timeout_s)
    except TimeoutError:
        return _("no answer from {host}:{port} within {timeout:g} s").format(
            host=where[0], port=where[1], timeout=timeout_s)
    except OSError as exc:
        return f"{where[0]}:{where[1]}: {exc.strerror or exc}"
    close = getattr(conn, "close", None)
    if close is not None:
        close()
    return None


def preflight(recipe: Recipe, env: Mapping[str, str] | None = None, *,
              recipe_dir: Path | None = None, timeout_s: float = CONNECT_TIMEOUT_S,
              connect: Connect = _tcp, uid: int | None = None) -> list[Finding]:
    """Findings about proxies, remote services and host paths, errors first.

    `uid`: the user the build containers run as (default: this process's)."""
    env = os.environ if env is None else env
    if uid is None and hasattr(os, "getuid"):
        uid = os.getuid()
    out: list[Finding] = consent.recipe_findings(recipe, env)
    net, remote = recipe.network, recipe.remote
    for key in ("http_proxy", "https_proxy"):
        value = getattr(net, key)
        if not value:
            continue
        ref = env_reference(value)
        if ref:
            if ref not in env:
                out.append(Finding("PROXY_UNSET", "error",
                                   _("network.{key} refers to ${{{name}}}, which is not set in "
                                     "this environment; export it before building.").format(
                                       key=key, name=ref),
                                   ("bazel-docs",), f"network.{key}"))
                continue
            value = env[ref]
        why = reachable(value, timeout_s=timeout_s, connect=connect)
        if why:
            shown = endpoint(value)
            if shown:
                message = _("network.{key}: the proxy {where} does not answer from this "
                            "machine ({why}); every download of the build would fail.").format(
                    key=key, where=f"{shown[0]}:{shown[1]}", why=why)
            else:  # no host:port to name (and the URL may hold a password)
                message = _("network.{key}: {why}; every download of the build would "
                            "fail.").format(key=key, why=why)
            out.append(Finding("PROXY_UNREACHABLE", "error", message, ("bazel-docs",),
                               f"network.{key}"))
    for key in ("cache", "bes_backend"):  # the executor: remotecheck.py asks it
        value = getattr(remote, key)
        if not value or value.startswith("unix:"):
            continue
        why = reachable(value, timeout_s=timeout_s, connect=connect)
        if why:
            out.append(Finding("REMOTE_UNREACHABLE", "warning",
                               _("remote.{key} ({value}) does not answer from this machine "
                                 "({why}); Bazel will fail or fall back to building "
                                 "locally.").format(key=key, value=value, why=why),
                               ("bazel-docs",), f"remote.{key}"))
    # tensorflow.source_dir is the rules' (rules/source.py, which run before any preflight)
    paths = [("network.distdir", net.distdir), ("cuda.local_cuda_path", recipe.cuda.local_cuda_path),
             ("cuda.local_cudnn_path", recipe.cuda.local_cudnn_path),
             ("cuda.local_nccl_path", recipe.cuda.local_nccl_path)]
    paths.extend((f.key, str(f.host)) for f in tls_files(recipe, recipe_dir))
    git_url = recipe.tensorflow.git_url
    if git_url.startswith("file://") and not recipe.tensorflow.source_dir:
        paths.append(("tensorflow.git_url", git_url[len("file://"):]))
    for key, text in paths:
        if not text:
            continue
        path = (recipe.resolve_path(key, base=recipe_dir) if key != "tensorflow.git_url"
                else Path(text))
        assert path is not None
        if not path.exists():
            out.append(Finding("PATH_MISSING", "error",
                               _("{key}: {path} does not exist on this machine.").format(
                                   key=key, path=path), ("docker-api",), key))
        elif key == "tensorflow.git_url" and uid is not None:
            owner = path.stat().st_uid
            if owner != uid:
                out.append(Finding(
                    "GIT_MIRROR_OWNER", "warning",
                    _("tensorflow.git_url: the mirror {path} belongs to uid {owner} and the "
                      "build runs as uid {uid}; git since 2.39.4 refuses to read a repository "
                      "another user owns (\"detected dubious ownership\"), so the fetch step "
                      "would fail. Serve the mirror over http(s) or git://, or build as its "
                      "owner.").format(path=path, owner=owner, uid=uid),
                    ("git-docs",), key))
    order = {"error": 0, "warning": 1, "info": 2}
    return sorted(out, key=lambda f: order[f.severity])


# -- inside the build image ------------------------------------------------------------------

#: seconds the look inside the image may take (a few are usual; the engine may be busy)
PROBE_TIMEOUT_S = 60.0
_FOUND, _MISSING = "tfwizard-probe-found", "tfwizard-probe-missing"
#: one line per argument, in order: "p:A|B" finds the first of the paths A, B that exists,
#: "c:A|B" the first command on PATH; the paths are arguments, never part of the script
_PROBE_SCRIPT = (
    "set -f\n"
    "for spec do\n"
    "  kind=${spec%%:*}; hit=\n"
    "  IFS='|'\n"
    "  for p in ${spec#*:}; do\n"
    "    if [ \"$kind\" = c ]; then command -v \"$p\" >/dev/null 2>&1 && hit=$p\n"
    "    elif [ -e \"$p\" ]; then hit=$p; fi\n"
    "    [ -n \"$hit\" ] && break\n"
    "  done\n"
    "  unset IFS\n"
    f"  if [ -n \"$hit\" ]; then echo \"{_FOUND} $hit\"; else echo {_MISSING}; fi\n"
    "done\n")


@dataclass(frozen=True)
class ImageNeed:
    """Something the plan runs or reads inside the build image."""

    what: str  # what it is, for people ("the CUDA compiler (CLANG_CUDA_COMPILER_PATH)")
    candidates: tuple[str, ...]  # paths (or commands): the first one there will do
    hint: str  # how to fix it when none is there
    key: str = "build.image"  # the recipe key that chose it
    command: bool = False  # looked up on PATH, not a path


def image_needs(plan: BuildPlan) -> list[ImageNeed]:
    """What the plan's steps run and its configure answers name inside the image."""
    image_hint = _("Use a build image that has it (build.image), or leave build.image empty "
                   "for the release's own image.")
    needs: list[ImageNeed] = []
    for step in plan.steps:
        if step.role == "package" or not step.argv:
            continue  # build_pip_package is made by the build step
        program = step.argv[0]
        what = _("Python (PYTHON_BIN_PATH)") if step.role == "configure" else \
            _("the {step} step's program").format(step=step.name)
        needs.append(ImageNeed(what, (program,), image_hint,
                               command=not program.startswith("/")))
    configure = next((s for s in plan.steps if s.role == "configure"), None)
    env = configure.env if configure is not None else {}
    clang_hint = _("Set toolchain.clang to the clang the image has (its /usr/lib/llvm-N), or "
                   "build.image to an image with this one.")
    if plan.hermetic_llvm:  # the path is configure.py's bookkeeping: only the image changes it
        clang_hint = _("configure.py checks that this clang exists, although the hermetic LLVM "
                       "compiles: use a build image that has it (leave build.image empty for "
                       "the release's own).")
    for name, key in (("CLANG_COMPILER_PATH", "toolchain.clang"),
                      ("CLANG_CUDA_COMPILER_PATH", "toolchain.clang"),
                      ("GCC_HOST_COMPILER_PATH", "toolchain.gcc")):
        if env.get(name):
            if plan.hermetic_llvm and key == "toolchain.clang":
                key = "build.image"
            needs.append(ImageNeed(_("the compiler ({name})").format(name=name), (env[name],),
                                   clang_hint if name != "GCC_HOST_COMPILER_PATH" else image_hint,
                                   key))
    if (configure is not None and env.get("TF_NEED_CLANG") == "0"
            and env.get("TF_NEED_CUDA") != "1" and not plan.hermetic_llvm):
        # no compiler named: Bazel's C++ toolchain takes gcc from PATH
        needs.append(ImageNeed(_("the C++ compiler (gcc on PATH)"), ("gcc",), image_hint,
                               "toolchain.gcc", command=True))
    if env.get("ROCM_PATH"):
        needs.append(ImageNeed(_("ROCm (ROCM_PATH)"), (env["ROCM_PATH"],),
                               _("Set rocm.path to where the image has ROCm."), "rocm.path"))
    if env.get("TF_NEED_CUDA") == "1" and "HERMETIC_CUDA_VERSION" not in env:
        # TF <= 2.17 builds against the CUDA installed in the image: where configure looks
        cuda_hint = _("TensorFlow {series} builds against the CUDA and cuDNN installed in the "
                      "image: use the release's own image (leave build.image empty), or set "
                      "cuda.local_cuda_path / cuda.local_cudnn_path to where this image has "
                      "them.").format(series=plan.series)
        for library, what, key in (("cuda", _("the CUDA toolkit header (cuda.h)"), "cuda.version"),
                                   ("cudnn", _("the cuDNN header (cudnn.h)"), "cuda.cudnn")):
            found = tuple(p for p in header_candidates(env, library) if "*" not in p)
            if found:
                needs.append(ImageNeed(what, found, cuda_hint, key))
    unique: dict[tuple[tuple[str, ...], bool], ImageNeed] = {}
    for need in needs:
        unique.setdefault((need.candidates, need.command), need)
    return list(unique.values())


def probe_image(client: Any, image: str, needs: list[ImageNeed], *, user: str | None = None,
                timeout_s: float = PROBE_TIMEOUT_S, image_id: str | None = None,
                env: Mapping[str, str] | None = None) -> list[str | None]:
    """For each need, what one short container found in `image` (None: none of them).

    argv only, no network, no capabilities, no privileges; the container is removed.
    With the image's `image_id`, what an earlier probe of that image found for the same
    needs and user (probecache.py), without a container. Raises TfWizardError when the
    look inside could not be done (no /bin/sh, a timeout).
    """
    if not needs:
        return []
    args = [("c:" if n.command else "p:") + "|".join(n.candidates) for n in needs]
    return cached_probe(image_id, user, args, _PROBE_SCRIPT,
                        lambda: _probe(client, image, args, user, timeout_s), env=env)


def _probe(client: Any, image: str, args: list[str], user: str | None,
           timeout_s: float) -> list[str | None]:
    with dockerutil.docker_errors(_("looking inside image {image}").format(image=image)):
        code, out = dockerutil.run_short(
            client, image, ["/bin/sh", "-c", _PROBE_SCRIPT, "tfwizard-probe"], args,
            user=user, timeout_s=timeout_s)
    lines = [line for line in out.splitlines() if line.startswith((_FOUND, _MISSING))]
    if code != 0 or len(lines) != len(args):
        raise TfWizardError(_("looking inside image {image} failed (exit {code}): "
                              "{output}").format(image=image, code=code,
                                                 output=out.strip()[-300:]))
    return [line[len(_FOUND) + 1:] if line.startswith(_FOUND) else None for line in lines]


def image_line(client: Any, plan: BuildPlan, env: Mapping[str, str] | None = None) -> str:
    """The build's look inside its image, as the line its log shows; raises TfWizardError
    naming what is missing (a build stops there, in seconds, not hours)."""
    try:
        missing = missing_in_image(client, plan, env=env)
    except TfWizardError as exc:  # no /bin/sh to look with: the steps themselves will tell
        return _("image {id}: not looked inside ({error})").format(
            id=plan.image_digest or plan.image_id, error=exc.message)
    if missing:
        raise TfWizardError("\n".join(f.message for f in missing),
                            _("`tfwizard check --preflight RECIPE` checks this before a "
                              "build."))
    return _("image {id}: what the plan needs is there").format(
        id=plan.image_digest or plan.image_id)


def missing_in_image(client: Any, plan: BuildPlan, *, timeout_s: float = PROBE_TIMEOUT_S,
                     image_id: str | None = None,
                     env: Mapping[str, str] | None = None) -> list[Finding]:
    """PATH_NOT_IN_IMAGE errors for what the plan needs and the image lacks (local image);
    `image_id` (default: the plan's): the probe of that image is kept (probecache.py)."""
    needs = image_needs(plan)
    found = probe_image(client, plan.image, needs, user=plan.user, timeout_s=timeout_s,
                        image_id=image_id or plan.image_id or None, env=env)
    out = []
    for need, hit in zip(needs, found, strict=True):
        if hit is None:
            out.append(Finding(
                "PATH_NOT_IN_IMAGE", "error",
                _("In the build image {image}, {what} is missing (looked for {paths}). "
                  "{hint}").format(image=plan.image, what=need.what,
                                   paths=", ".join(need.candidates), hint=need.hint),
                ("docker-images",), need.key))
    return out


def repository(image: str) -> str:
    """The repository part of an image reference (no tag, no digest)."""
    name = image.split("@", 1)[0]
    head, _slash, tail = name.rpartition("/")
    return f"{head}/{tail.split(':', 1)[0]}" if head else tail.split(":", 1)[0]


def image_identity(image: Any, ref: str) -> tuple[str, str]:
    """(image ID, repository digest) of a local image; the digest is "" for an image no
    registry gave (built or imported here)."""
    digests = list((getattr(image, "attrs", None) or {}).get("RepoDigests") or [])
    repo = repository(ref)
    digest = next((d for d in digests if repository(d) == repo), digests[0] if digests else "")
    return str(image.id), digest


def recorded_image(plan: BuildPlan, *, data_root: Path | None = None,
                   env: Mapping[str, str] | None = None) -> tuple[str, str, str] | None:
    """(build id, image ID, digest) of the newest build record of this recipe and image."""
    for record in reversed(list_records(data_root, env)):
        try:
            data = json.loads((record.path / "plan.json").read_text("utf-8"))
        except (OSError, ValueError):
            continue
        if (isinstance(data, dict) and data.get("recipe_name") == plan.recipe_name
                and data.get("image") == plan.image and data.get("image_id")):
            return record.build_id, str(data["image_id"]), str(data.get("image_digest") or "")
    return None


def _changed(plan: BuildPlan, image_id: str, digest: str, data_root: Path | None,
             env: Mapping[str, str] | None) -> list[Finding]:
    before = recorded_image(plan, data_root=data_root, env=env)
    if before is None:
        return []
    build_id, old_id, old_digest = before
    if old_digest and digest:
        same = old_digest == digest
    elif image_id:
        same = old_id == image_id
    else:
        return []  # only a registry digest now, none recorded: nothing to compare
    if same:
        return []
    return [Finding("IMAGE_CHANGED", "warning",
                    _("{image} now points to another image ({now}) than in build {build} of "
                      "this recipe ({then}): the compiler, CUDA or Python inside may have "
                      "changed. Pin the image by digest in build.image for a build that "
                      "repeats.").format(image=plan.image, now=digest or image_id,
                                         build=build_id, then=old_digest or old_id),
                    ("docker-images",), "build.image")]


def check_image(plan: BuildPlan, *, client: Any = None, env: Mapping[str, str] | None = None,
                data_root: Path | None = None,
                timeout_s: float = PROBE_TIMEOUT_S) -> list[Finding]:
    """Findings about the plan's build image: there, holding what the plan needs, changed."""
    import docker.errors

    env = os.environ if env is None else env
    if client is None:
        from ...docker.shared import shared_client

        try:  # the client the build uses next (sharedclient.py): no second connect
            client = shared_client(env)
        except TfWizardError as exc:
            return [_not_checked(plan, exc)]
    try:
        with dockerutil.docker_errors(_("looking up image {image}").format(image=plan.image)):
            try:
                image = client.images.get(plan.image)
            except docker.errors.ImageNotFound:
                image = None
            if image is None:
                return _not_here(client, plan, data_root, env)
        image_id, digest = image_identity(image, plan.image)
        out = missing_in_image(client, plan, timeout_s=timeout_s, image_id=image_id, env=env)
    except TfWizardError as exc:
        return [_not_checked(plan, exc)]
    return out + _changed(plan, image_id, digest, data_root, env) + engine_disk(
        client, plan, env, timeout_s)


def engine_disk(client: Any, plan: BuildPlan, env: Mapping[str, str],
                timeout_s: float = PROBE_TIMEOUT_S) -> list[Finding]:
    """DISK_LOW for an engine on another machine (DOCKER_HOST=tcp://, ssh://), asked in a
    short container of the build image (imagefacts.engine_free_bytes): detection cannot
    see that disk, and a team's build server that fills up fails hours in. Nothing for a
    local engine (the rules check its data root) or when the engine cannot say."""
    from ...docker.imagefacts import engine_free_bytes
    from ...knowledge import load_knowledge
    from ...rules.resources import disk_low

    if dockerutil.is_local_engine(client):
        return []
    try:
        free = engine_free_bytes(client, plan.image, user=plan.user, timeout_s=timeout_s)
    except TfWizardError:
        return []  # the image check above already said what the engine cannot do
    mem = load_knowledge().platforms["memory"]
    low = None if free is None else disk_low(
        free, mem, gpu=plan.backend != "cpu",
        engine=env.get("DOCKER_HOST") or str(getattr(client.api, "base_url", "")))
    if low is None:
        return []
    return [Finding("DISK_LOW", low[0], low[1], tuple(mem["sources"]), "cache.disk_cache")]


def _not_checked(plan: BuildPlan, exc: TfWizardError) -> Finding:
    return Finding("IMAGE_NOT_CHECKED", "warning",
                   _("The build image {image} was not checked: {error}").format(
                       image=plan.image, error=exc.message), ("docker-images",), "build.image")


def _not_here(client: Any, plan: BuildPlan, data_root: Path | None,
              env: Mapping[str, str]) -> list[Finding]:
    """The image is not on this machine: ask its registry (the SDK's registry data)."""
    try:
        data = client.images.get_registry_data(plan.image)
    except Exception as exc:  # noqa: BLE001 - any failure means: cannot be pulled from here
        why = str(getattr(exc, "explanation", None) or exc)
        return [Finding("IMAGE_UNAVAILABLE", "error",
                        _("The build image {image} is not on this machine and its registry "
                          "does not answer from here ({error}): the build would stop when it "
                          "pulls it. Pull it where the registry is reachable (`docker pull`, "
                          "then `docker save` / `docker load`), or set build.image to an image "
                          "on this machine (`docker images`).").format(image=plan.image,
                                                                          error=why),
                        ("docker-images",), "build.image")]
    digest = f"{repository(plan.image)}@{data.id}"
    return [Finding("IMAGE_NOT_PULLED", "info",
                    _("The build image {image} is not on this machine; its registry has it "
                      "({digest}). The build pulls it, then checks inside it what the plan "
                      "needs before anything else.").format(image=plan.image, digest=digest),
                    ("docker-images",), "build.image"),
            *_changed(plan, "", digest, data_root, env)]
