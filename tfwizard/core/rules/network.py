"""Rules on the network: remote cache and execution, mirrors, proxies, and least privilege."""

from __future__ import annotations

import re

from ..consent import recipe_uses, url_host
from ..findings import Fix
from ..i18n import _
from ..knowledge import recipe_python
from .context import Ctx


def rule_remote_and_network(ctx: Ctx) -> None:
    """Remote cache and execution, mirrors and proxies: reachable, consistent, and safe."""
    _remote_findings(ctx)
    _network_findings(ctx)
    _secret_references(ctx)


def _secret_references(ctx: Ctx) -> None:
    """Every ${VAR} the build reads from the user's environment, and where it goes: a
    shared recipe can name any variable and any endpoint (consent.py asks before use)."""
    for use in recipe_uses(ctx.recipe, {}):
        if use.key == "remote.headers":
            text = _("remote.headers reads ${{{name}}} from your environment and sends it to "
                     "{host}. It is used only with your consent: --allow-secret {name}@{host}, "
                     "or `tfwizard consent allow {name} {host}`.")
        else:
            text = _("{key} reads ${{{name}}} from your environment: the build uses it as its "
                     "proxy, so it goes to the host its value names, and into the build "
                     "container. It is used only with your consent (`tfwizard check "
                     "--preflight` names the host).")
        ctx.add("SECRET_REFERENCE", "info", text.format(name=use.variable, host=use.host,
                                                        key=use.key), ["bazel-docs"], use.key)


def _remote_findings(ctx: Ctx) -> None:
    """The remote cache, executor and BES: consistent with each other, secrets kept out."""
    r = ctx.recipe
    remote = r.remote
    image = r.build.image or (ctx.release.image_for(recipe_python(r, ctx.release))
                              if ctx.release else _("the build image"))
    if remote.executor:
        ctx.add("REMOTE_EXEC_TOOLCHAIN", "warning",
                _("Remote execution runs actions on the executors, not in {image}: their image "
                  "must carry the same toolchain (clang, Python, and for CUDA actions the build "
                  "image itself as the executor platform, e.g. exec_properties "
                  "container-image=docker://{image}), or results differ and builds fail.")
                .format(image=image),
                ["bazel-docs", "tf-ci-official"], "remote.executor")
        if remote.cache and remote.cache != remote.executor:
            ctx.add("REMOTE_EXEC_CACHE", "info",
                    _("With remote execution the executor's own CAS is normally the cache; a "
                      "separate remote.cache must be the same service's endpoint."),
                    ["bazel-docs"], "remote.cache")
    if remote.bes_results_url and not remote.bes_backend:
        ctx.add("BES_URL_WITHOUT_BACKEND", "warning",
                _("remote.bes_results_url is set but remote.bes_backend is empty: nothing is "
                  "uploaded to show there."), ["bazel-docs"], "remote.bes_backend")
    services = remote.cache or remote.executor or remote.bes_backend
    if remote.headers and not services:
        ctx.add("REMOTE_HEADERS_UNUSED", "warning",
                _("remote.headers are set but no remote cache, executor or BES is."),
                ["bazel-docs"], "remote.headers")
    for i, header in enumerate(remote.headers):
        name, _sep, value = header.partition("=")
        if not (value.startswith("${") and value.endswith("}")):
            var = re.sub(r"[^A-Z0-9]", "_", name.upper())
            fixed = list(remote.headers)
            fixed[i] = f"{name}=${{{var}}}"
            ctx.add("SECRET_IN_RECIPE", "warning",
                    _("remote.headers[{index}] ({name}) is stored in the recipe in clear text; "
                      "refer to an environment variable instead and export {var}.")
                    .format(index=i, name=name, var=var),
                    ["bazel-docs"], "remote.headers",
                    Fix(_("Use ${{{var}}}").format(var=var), {"remote.headers": fixed}))
    if remote.upload and remote.cache and not remote.executor:
        ctx.add("REMOTE_UPLOAD", "info",
                _("This build writes to the shared cache: only builders everyone trusts should "
                  "upload (the others read with remote.upload = false)."),
                ["bazel-docs"], "remote.upload")
    plain = [k for k in ("cache", "executor", "bes_backend")
             if getattr(remote, k).startswith(("http://", "grpc://"))]
    if plain and remote.headers:
        ctx.add("REMOTE_HEADERS_CLEARTEXT", "warning",
                _("Headers (API keys) go unencrypted to remote.{key} ({scheme}://); use "
                  "https:// or grpcs:// beyond a trusted LAN.")
                .format(key=plain[0], scheme=getattr(remote, plain[0]).split("://")[0]),
                ["bazel-docs"], f"remote.{plain[0]}")
    for key in ("executor", "bes_backend"):
        value = getattr(remote, key)
        if value and not value.startswith(("grpc://", "grpcs://", "unix:")):
            ctx.add("REMOTE_SCHEME", "error",
                    _("remote.{key} is {scheme}://, but Bazel speaks gRPC to executors and "
                      "Build Event Services: use grpcs:// (or grpc:// on a LAN).")
                    .format(key=key, scheme=value.split("://")[0]),
                    ["bazel-docs"], f"remote.{key}")
    if remote.upload and not remote.cache and not remote.executor:
        ctx.add("REMOTE_UPLOAD_UNUSED", "warning",
                _("remote.upload is true but remote.cache is empty: nothing is uploaded."),
                ["bazel-docs"], "remote.cache")


def _network_findings(ctx: Ctx) -> None:
    """The build container's network: loopback addresses, proxy credentials, offline."""
    r = ctx.recipe
    remote, net = r.remote, r.network
    services = remote.cache or remote.executor or remote.bes_backend
    # build.network = "host" is rule_least_privilege's (HOST_NETWORK_EXPOSES_HOST)
    if r.build.network == "bridge":
        for key, value in (("remote.cache", remote.cache), ("remote.executor", remote.executor),
                           ("remote.bes_backend", remote.bes_backend),
                           ("network.http_proxy", net.http_proxy),
                           ("network.https_proxy", net.https_proxy)):
            host = url_host(value)
            if host in ("localhost", "127.0.0.1", "::1") or host.startswith("127."):
                ctx.add("LOOPBACK_NOT_REACHABLE", "warning",
                        _("{key} points at {host}, but in a bridge-network container that is "
                          "the container itself, not this machine: use build.network = "
                          "\"host\", or the machine's LAN address.").format(key=key, host=host),
                        ["docker-api"], key,
                        Fix(_("Use the host network"), {"build.network": "host"}))
    for key in ("http_proxy", "https_proxy"):
        value = getattr(net, key)
        if value and re.match(r"[a-z]+://[^/@]+:[^/@]+@", value):
            ctx.add("SECRET_IN_RECIPE", "warning",
                    _("network.{key} carries credentials in the recipe; use ${{{var}}} and "
                      "export it instead.").format(key=key, var=key.upper()),
                    ["bazel-docs"], f"network.{key}",
                    Fix(_("Use ${{{var}}}").format(var=key.upper()),
                        {f"network.{key}": f"${{{key.upper()}}}"}))
    needs_net = (net.http_proxy or net.https_proxy or services
                 or (not r.tensorflow.source_dir))
    if r.build.network == "none" and needs_net:
        if net.http_proxy or net.https_proxy:
            text = _("build.network is \"none\" but the build needs the network for a proxy.")
        elif services:
            text = _("build.network is \"none\" but the build needs the network for remote "
                     "services.")
        else:
            text = _("build.network is \"none\" but the build needs the network for cloning "
                     "TensorFlow.")
        ctx.add("NETWORK_NONE", "error", text, ["docker-api"], "build.network",
                Fix(_("Use the bridge network"), {"build.network": "bridge"}))
    if r.build.network == "none" and not needs_net:
        ctx.add("OFFLINE_BUILD", "info",
                _("Offline build: every external repository must already be in the repository "
                  "cache or network.distdir, or Bazel stops with \"All mirrors are down\"."),
                ["tf-build-issues"], "build.network")


def rule_least_privilege(ctx: Ctx) -> None:
    """The one way a recipe widens the build container's reach: the host network."""
    r = ctx.recipe
    if r.build.network != "host":
        return
    urls = (r.remote.cache, r.remote.executor, r.remote.bes_backend, r.network.http_proxy,
            r.network.https_proxy)
    loopback = any(re.match(r"[a-z]+://([^/@]*@)?(localhost|127\.|\[::1\])", u) for u in urls)
    ctx.add("HOST_NETWORK_EXPOSES_HOST", "warning",
            _("build.network = \"host\" takes the build container out of network isolation: "
              "code run by the build (the image, TensorFlow's sources, Bazel's downloads) can "
              "reach every service listening on this machine, 127.0.0.1 included. Use it only "
              "for a cache or proxy on 127.0.0.1, and only with an image and sources you "
              "trust."),
            ["docker-api"], "build.network",
            None if loopback else Fix(_("Use the bridge network"), {"build.network": "bridge"}))
