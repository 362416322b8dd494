"""The preflight that asks the remote execution service.

With `remote.executor` set, `check --preflight`, the first seconds of `build` and the
wizard's Test connection call REAPI GetCapabilities with the recipe's instance name and
headers (core/remote/): the instance is valid, execution is enabled, SHA-256 is
accepted, and the service's limits. Then, unless `remote.probe = false`, one no-op action
is submitted with the build's platform properties and cancelled at once, so a property
the scheduler does not know is refused now, not at the first compile. Each failure is a
Finding in the preflight's shape, with the words that name the fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .. import consent
from ..errors import UsageError
from ..findings import Finding
from ..i18n import _
from ..recipe import Recipe
from . import reapi
from .tls import tls_settings

#: seconds a capabilities call or the probe may take before it is a finding
TIMEOUT_S = 5.0
#: knowledge sources: Bazel's own capabilities check and the remote module that calls it
SOURCES = ("bazel-server-capabilities", "bazel-remote-module")
#: the recipe key each error kind is about
_KEY_OF_KIND = {"instance": "remote.instance_name", "header": "remote.headers",
                "tls-certificate": "remote.tls_certificate",
                "tls-client-certificate": "remote.tls_client_certificate",
                "unauthenticated": "remote.headers", "permission": "remote.headers",
                "platform": "remote.exec_properties", "execution": "remote.exec_properties"}
#: Finding codes of the capability problems
_PROBLEM_CODES = {"no-execution": "REMOTE_NO_EXECUTION", "no-sha256": "REMOTE_NO_SHA256",
                  "api-version": "REMOTE_API_VERSION"}


@dataclass
class RemoteCheck:
    """What the service said: the capabilities and probe (when they came) and findings."""

    capabilities: reapi.Capabilities | None = None
    probe: reapi.ProbeResult | None = None
    findings: list[Finding] = field(default_factory=list)


def target_of(recipe: Recipe, env: Mapping[str, str],
              timeout_s: float = TIMEOUT_S) -> reapi.ReapiTarget:
    """The recipe's executor as a ReapiTarget (headers resolved from `env`, the TLS files
    of remotetls.py read on this machine, relative to the recipe's folder)."""
    remote = recipe.remote
    return reapi.ReapiTarget(remote.executor, remote.instance_name,
                             reapi.headers_from_recipe(remote.headers, env),
                             tls=tls_settings(recipe), timeout_s=timeout_s)


def _error_finding(error: reapi.ReapiError, code: str) -> Finding:
    message = error.message + (" " + error.hint if error.hint else "")
    if error.detail and error.detail not in message:
        message += " " + _("The service said: {code} {detail}").format(
            code=error.code, detail=error.detail[:300]).replace("  ", " ")
    return Finding(code, "error", message, SOURCES,
                   _KEY_OF_KIND.get(error.kind, "remote.executor"))


def check_service(recipe: Recipe, env: Mapping[str, str], properties: Sequence[str], *,
                  timeout_s: float = TIMEOUT_S) -> RemoteCheck:
    """Ask the recipe's executor (see the module docstring); no executor: nothing."""
    out = RemoteCheck()
    remote = recipe.remote
    if not remote.executor:
        return out
    executor = consent.url_host(remote.executor)
    refused = consent.consent_findings(
        [u for u in consent.recipe_uses(recipe, env)
         if u.key == "remote.headers" and u.host == executor], env)
    if refused:  # the service is not asked: asking sends the headers
        out.findings.extend(refused)
        return out
    try:
        target = target_of(recipe, env, timeout_s)
        out.capabilities = reapi.get_capabilities(target)
    except reapi.ReapiError as e:
        out.findings.append(_error_finding(e, "REMOTE_CAPABILITIES"))
        return out
    except UsageError as e:  # an unset ${VAR} in a header
        out.findings.append(Finding("REMOTE_CAPABILITIES", "error", str(e), SOURCES,
                                    "remote.headers"))
        return out
    caps = out.capabilities
    for problem in caps.problems(execution=True):
        out.findings.append(Finding(_PROBLEM_CODES.get(problem.kind, "REMOTE_CAPABILITIES"),
                                    "error", f"{problem.message} {problem.fix}", SOURCES,
                                    "remote.instance_name"))
    out.findings.append(Finding("REMOTE_SERVICE", "info", _(
        "remote.executor answers for instance \"{instance}\" in {ms:.0f} ms: execution "
        "{execution}, SHA-256 accepted, largest batch upload {batch} bytes, action cache "
        "{cache}.").format(instance=caps.instance_name, ms=caps.seconds * 1000,
                           execution=_("enabled") if caps.exec_enabled else _("disabled"),
                           batch=caps.max_batch_total_size_bytes or _("unlimited"),
                           cache=_("writable") if caps.action_cache_update_enabled
                           else _("read-only")), SOURCES, "remote.executor"))
    if remote.local_fallback and not caps.action_cache_update_enabled:
        out.findings.append(Finding("REMOTE_FALLBACK_READONLY", "error", _(
            "remote.local_fallback needs an action cache this account may write, and this "
            "service's is read-only: Bazel refuses to start. Set remote.local_fallback = "
            "false, or use credentials that may write."), SOURCES, "remote.local_fallback"))
    if out.findings[0].severity == "error" or not remote.probe or not properties:
        return out
    try:
        out.probe = reapi.probe_execution(target, properties)
    except reapi.ReapiError as e:
        out.findings.append(_error_finding(e, "REMOTE_PLATFORM" if e.kind == "platform"
                                           else "REMOTE_PROBE"))
    return out


def plan_properties(flags: Sequence[str]) -> list[str]:
    """The platform properties a plan's flags send with every action."""
    prefix = "--remote_default_exec_properties="
    return [f[len(prefix):] for f in flags if f.startswith(prefix)]
