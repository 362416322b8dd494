"""Which ${VAR} secrets a build sends where, and the user's consent to each.

A recipe can refer to environment variables (`remote.headers = ["x-api-key=${KEY}"]`,
`network.https_proxy = "${HTTPS_PROXY}"`). A shared recipe could name any variable the
user has (`${AWS_SECRET_ACCESS_KEY}`) and an endpoint of its author's, so a value is
used only for a (variable, host) pair the user allowed:

- always: `tfwizard consent allow VAR HOST`, kept in `consent.toml` in the user's
  config folder (0600 in a 0700 folder);
- for one run: `--allow-secret VAR@HOST` on the command line, which sets
  `TFWIZARD_ALLOW_SECRETS` ("VAR@HOST VAR@HOST ...", also what a CI job sets);
- in the wizard: the confirmation before a build ("allow once" or "always allow").

A header goes to every remote service the recipe names (cache, executor, Build Event
Service); a proxy variable's value names its own host (a value that is no URL: the build
container, CONTAINER). `require()` is called where a value is about to be resolved for
anything outside this process (the build containers: StepSecrets.check; the remote
executor's preflight: remote/check.py), so nothing leaves before consent.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import UsageError
from .findings import Finding
from .i18n import _
from .secrets import references

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

if TYPE_CHECKING:  # the recipe module is big; its users have loaded it already
    from .recipe import Recipe

#: the environment variable that carries consent for one run ("VAR@HOST VAR@HOST")
CONSENT_ENV = "TFWIZARD_ALLOW_SECRETS"
#: overrides the folder of consent.toml (the platform's user config dir otherwise)
CONFIG_DIR_ENV = "TFWIZARD_CONFIG_DIR"
CONSENT_FILE = "consent.toml"
#: the "host" of a value that goes nowhere but the build container's environment
CONTAINER = "container"

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HOST = re.compile(r"[A-Za-z0-9:][A-Za-z0-9.\-:]{0,252}")  # ":" for IPv6 (::1)
#: the flags whose URL is a remote service a --remote_header goes to
_SERVICE_FLAGS = ("--remote_cache=", "--remote_executor=", "--bes_backend=")
_PROXY_KEYS = {"HTTP_PROXY": "network.http_proxy", "HTTPS_PROXY": "network.https_proxy"}


@dataclass(frozen=True)
class SecretUse:
    """One ${VAR} a build reads from the environment, the host it goes to, and the recipe
    key that says so."""

    variable: str
    host: str
    key: str

    @property
    def pair(self) -> str:
        """VAR@HOST, as --allow-secret and TFWIZARD_ALLOW_SECRETS write it."""
        return f"{self.variable}@{self.host}"

    def to_dict(self) -> dict[str, str]:
        """The use as JSON (plan --json, check --json)."""
        return {"variable": self.variable, "host": self.host, "key": self.key}


def url_host(url: str) -> str:
    """The host of scheme://[user@]host[:port]/..., lower-case; "" when there is none."""
    rest = url.split("://", 1)[1] if "://" in url else ""
    netloc = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    if netloc.startswith("["):
        return netloc[1:].split("]", 1)[0].lower()
    return netloc.split(":", 1)[0].lower()


def secret_uses(flags: Iterable[str], container_env: Mapping[str, str],
                env: Mapping[str, str]) -> list[SecretUse]:
    """Every (variable, host) a plan's flags and container environment send a ${VAR} to,
    each once.

    `env` gives a proxy variable's value, whose URL names the proxy's host (unset or no
    URL: CONTAINER, the only place the value then goes)."""
    flags = list(flags)
    services = [f.split("=", 1)[1] for f in flags if f.startswith(_SERVICE_FLAGS)]
    hosts = list(dict.fromkeys(h for h in map(url_host, services) if h)) or [CONTAINER]
    uses: dict[tuple[str, str], SecretUse] = {}
    for key, value in container_env.items():
        for name in references([value]):
            host = url_host(env.get(name, "")) or CONTAINER
            uses.setdefault((name, host), SecretUse(name, host, _PROXY_KEYS.get(
                key.upper(), "build")))
    proxies = {u.variable for u in uses.values()}
    for flag in flags:
        header = flag.startswith("--remote_header=")
        for name in references([flag]):
            if not header and name in proxies:
                continue  # the proxy's value passed on to Bazel: it goes where it goes
            for host in hosts if header else [CONTAINER]:
                uses.setdefault((name, host), SecretUse(
                    name, host, "remote.headers" if header else "build"))
    return list(uses.values())


def recipe_uses(recipe: Recipe, env: Mapping[str, str]) -> list[SecretUse]:
    """The secret uses of a recipe (check, plan, the wizard): its remote services'
    headers and its proxies, as the plan would send them."""
    remote, net = recipe.remote, recipe.network
    flags = [f"{flag}{url}" for flag, url in zip(
        _SERVICE_FLAGS, (remote.cache, remote.executor, remote.bes_backend), strict=True) if url]
    if flags:
        flags += [f"--remote_header={h}" for h in remote.headers]
    proxies = {"HTTP_PROXY": net.http_proxy, "HTTPS_PROXY": net.https_proxy}
    return secret_uses(flags, {k: v for k, v in proxies.items() if v}, env)


def describe(use: SecretUse) -> str:
    """One line: ${VAR} (key) goes to host."""
    if use.host == CONTAINER:
        return _("${{{name}}} ({key}) goes into the build container").format(
            name=use.variable, key=use.key)
    return _("${{{name}}} ({key}) is sent to {host}").format(name=use.variable, key=use.key,
                                                            host=use.host)


# ----------------------------------------------------------------------------- the store


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """tfwizard's config folder: $TFWIZARD_CONFIG_DIR, else the platform's user config dir."""
    env = os.environ if env is None else env
    override = env.get(CONFIG_DIR_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("tfwizard"))


def consent_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the always-allowed pairs are kept."""
    return config_dir(env) / CONSENT_FILE


def parse_pair(text: str) -> tuple[str, str]:
    """VAR@HOST as (variable, host); UsageError naming the text when it is not one."""
    variable, sep, host = text.strip().partition("@")
    if not (sep and _VARIABLE.fullmatch(variable) and _HOST.fullmatch(host)):
        raise UsageError(_("\"{text}\" is not VARIABLE@HOST").format(text=text[:80]),
                         _("Write it like BUILDBUDDY_API_KEY@remote.buildbuddy.io (the host "
                           "as `tfwizard check` lists it)."))
    return variable, host.lower()


def stored(env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The pairs in consent.toml, in file order (none when it is missing)."""
    path = consent_path(env)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(_("cannot read {path}: {error}").format(path=path, error=exc),
                         _("Fix or delete the file; `tfwizard consent list` shows what it "
                           "allows.")) from exc
    pairs = []
    for entry in data.get("allow", []):
        if isinstance(entry, dict):
            text = f"{entry.get('variable', '')}@{entry.get('host', '')}"
            pairs.append(parse_pair(text))
    return pairs


def allowed(env: Mapping[str, str] | None = None) -> set[tuple[str, str]]:
    """Every allowed (variable, host): consent.toml and TFWIZARD_ALLOW_SECRETS."""
    env = os.environ if env is None else env
    once = {parse_pair(p) for p in env.get(CONSENT_ENV, "").replace(",", " ").split()}
    return set(stored(env)) | once


def _write(pairs: list[tuple[str, str]], env: Mapping[str, str] | None) -> Path:
    from .paths import atomic_write, private_dir

    path = consent_path(env)
    private_dir(path.parent)
    lines = ["# Environment variables tfwizard may send, and where (`tfwizard consent`).\n"]
    for variable, host in pairs:
        lines.append(f'\n[[allow]]\nvariable = "{variable}"\nhost = "{host}"\n')
    atomic_write(path, "".join(lines), mode=0o600)
    return path


def allow(variable: str, host: str, env: Mapping[str, str] | None = None) -> Path:
    """Always allow sending `variable` to `host`; returns the file it is kept in."""
    pair = parse_pair(f"{variable}@{host}")
    pairs = stored(env)
    return _write(pairs if pair in pairs else [*pairs, pair], env)


def revoke(variable: str, host: str, env: Mapping[str, str] | None = None) -> bool:
    """Take an always-allowed pair back; whether it was there."""
    pair = parse_pair(f"{variable}@{host}")
    pairs = stored(env)
    if pair not in pairs:
        return False
    _write([p for p in pairs if p != pair], env)
    return True


def unconsented(uses: Iterable[SecretUse], env: Mapping[str, str] | None = None
                ) -> list[SecretUse]:
    """The uses no consent covers."""
    ok = allowed(env)
    return [u for u in uses if (u.variable, u.host) not in ok]


class SecretConsentRequired(UsageError):
    """A ${VAR} would be sent somewhere the user did not allow; `uses` names them."""

    def __init__(self, uses: list[SecretUse]) -> None:
        lines = "\n".join("  " + describe(u) for u in uses)
        flags = " ".join(f"--allow-secret {u.pair}" for u in uses)
        super().__init__(
            _("the recipe would send environment variables you have not allowed (nothing "
              "was sent):\n{lines}").format(lines=lines),
            _("If you trust the recipe with them, run again with {flags}, or allow them "
              "always with `tfwizard consent allow VARIABLE HOST`.").format(flags=flags))
        self.uses = uses


def consent_findings(uses: Iterable[SecretUse], env: Mapping[str, str] | None = None
                     ) -> list[Finding]:
    """A SECRET_NOT_ALLOWED error for each use without consent (the preflight's words)."""
    return [Finding("SECRET_NOT_ALLOWED", "error", _(
        "{use}, which you have not allowed: nothing is sent and the build is refused. If you "
        "trust the recipe with it, pass --allow-secret {pair} or run `tfwizard consent allow "
        "{variable} {host}`.").format(use=describe(u), pair=u.pair, variable=u.variable,
                                      host=u.host), ("bazel-docs",), u.key)
        for u in unconsented(uses, env)]


def recipe_findings(recipe: Recipe, env: Mapping[str, str]) -> list[Finding]:
    """The preflight's consent findings: the recipe's uses of set variables (an unset one
    is the preflight's PROXY_UNSET or the remote check's, not a question of consent)."""
    return consent_findings([u for u in recipe_uses(recipe, env) if u.variable in env], env)


def require(uses: Iterable[SecretUse], env: Mapping[str, str] | None = None) -> None:
    """SecretConsentRequired when a use has no consent (call before resolving any)."""
    missing = unconsented(uses, env)
    if missing:
        raise SecretConsentRequired(missing)
