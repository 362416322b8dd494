"""Keep secrets out of logs, records, bundles and plan output.

Proxy credentials in URLs (`http://user:pass@proxy:3128`), remote-cache headers and
tokens are replaced by `***`. Recipes keep a *reference* to a secret (`${ENV_VAR}`)
instead of the value, resolved only when a container is started.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a leaf: the recipe module is its caller's
    from .recipe import Recipe

MASK = "***"

_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*://)(?P<cred>[^/@\s:]+(:[^/@\s]*)?)@")
_HEADER = re.compile(
    r"(?P<name>(--remote_header|--bes_header|--remote_cache_header|--remote_exec_header)="
    r"[A-Za-z0-9\-_]+=)(?P<value>[^\s\"']+)")
_TOKEN_WORDS = re.compile(
    r"(?i)(?P<name>\b(authorization|x-[a-z0-9\-]*api-key|api[_-]?key|token|password|passwd|secret)"
    r"\s*[=:]\s*(bearer\s+|basic\s+)?)(?P<value>[^\s\"',;]+)")
#: a ${NAME} reference anywhere in a text
_ENV_REFS = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

#: environment variables whose values are secret whatever they contain
SECRET_ENV_NAMES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY",
                    "all_proxy")


#: cheap pre-check: a line without any of these cannot hold a pattern below
_MAYBE = re.compile(r"@|_header=|(?i:authorization|api.?key|token|passw|secret)")


def mask(text: str, secrets: Iterable[str]) -> str:
    """The text with each of `secrets` (those of 4 characters or more) masked."""
    for secret in secrets:
        if secret and len(secret) >= 4 and secret in text:
            text = text.replace(secret, MASK)
    return text


def redact(text: str, extra_secrets: Iterable[str] = ()) -> str:
    """The text with credentials in URLs, header values, tokens and known secrets masked."""
    text = mask(text, extra_secrets)
    if not _MAYBE.search(text):
        return text  # the hot path of a build log
    text = _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    text = _HEADER.sub(lambda m: f"{m.group('name')}{MASK}", text)
    text = _TOKEN_WORDS.sub(lambda m: f"{m.group('name')}{MASK}", text)
    return text


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of an environment with secret values masked (for records and plan output)."""
    out = {}
    for key, value in env.items():
        if key in SECRET_ENV_NAMES or re.search(r"(?i)(token|secret|password|api_?key)", key):
            out[key] = redact(value) if "://" in value else MASK if value else value
        else:
            out[key] = redact(value)
    return out


def env_reference(value: str) -> str | None:
    """The variable name when value is a reference like ${NAME}, else None."""
    match = _ENV_REFS.fullmatch(value)
    return match.group(1) if match else None


def references(texts: Iterable[str]) -> list[str]:
    """The names of the ${NAME} references in `texts`, each once, in order of appearance."""
    names: list[str] = []
    for text in texts:
        for name in _ENV_REFS.findall(text):
            if name not in names:
                names.append(name)
    return names


def credentials_in(texts: Iterable[str]) -> list[str]:
    """The credentials written out (not as ${NAME}) in flags and URLs: the value of a
    `--*_header=NAME=VALUE` flag and a URL's user:password (and the password), each once."""
    found: list[str] = []
    for text in texts:
        if _ENV_REFS.search(text):
            continue  # a reference: its value is resolved, and masked, at container start
        values: list[str] = []
        if text.startswith("--") and "_header=" in text.split("=", 1)[0] + "=":
            values.append(text.split("=", 2)[2] if text.count("=") >= 2 else "")
        match = re.match(r"^(?:--[a-z_]+=|[A-Z_]+=)?[A-Za-z][A-Za-z0-9+.\-]*://([^/@\s]+)@",
                         text)
        if match:
            values += [match.group(1), match.group(1).partition(":")[2]]
        found += [v for v in values if len(v) >= 4 and v not in found]
    return found


def literal_secrets(recipe: Recipe) -> list[str]:
    """The credentials a recipe holds written out (not as ${NAME}): header values and the
    user:password of its URLs, to mask wherever the recipe's values are shown or kept."""
    return credentials_in([*(f"--remote_header={h}" for h in recipe.remote.headers),
                           recipe.network.http_proxy, recipe.network.https_proxy,
                           recipe.remote.cache, recipe.remote.executor,
                           recipe.remote.bes_backend])


#: how Bazel's BEP JSON writer (Gson) escapes characters a secret may hold
_BEP_ESCAPES = {"\\": "\\\\", '"': '\\"', "=": "\\u003d", "'": "\\u0027",
                "<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}


def with_json_forms(values: Iterable[str]) -> list[str]:
    """Each value and, where it differs, the value as a string of the BEP's JSON shows it
    (Gson writes "=" as \\u003d: base64 padding would escape a plain match)."""
    out: list[str] = []
    for value in values:
        for form in (value, "".join(_BEP_ESCAPES.get(ch, ch) for ch in value)):
            if form not in out:
                out.append(form)
    return out


#: the key a plan's record copy carries when credentials written in the recipe were masked in
#: it: such a plan cannot run again (`build --attach` refuses it and says why)
WITHHELD_KEY = "secrets_withheld"


def _strings(data: Any) -> Iterator[str]:
    """Every string in a JSON-ready structure."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, Mapping):
        for value in data.values():
            yield from _strings(value)
    elif isinstance(data, (list, tuple)):
        for value in data:
            yield from _strings(value)


def _masked(data: Any, values: list[str]) -> Any:
    if isinstance(data, str):
        return mask(data, values)
    if isinstance(data, Mapping):
        return {k: _masked(v, values) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_masked(v, values) for v in data]
    return data


def at_rest(data: Mapping[str, Any]) -> dict[str, Any]:
    """A plan's data as a record may keep it: credentials written out in its flags, URLs and
    environment masked, with WITHHELD_KEY set when there were any. The values stay in the
    running front end's memory only; a ${NAME} reference is kept (it holds no secret)."""
    values = credentials_in(_strings(data))
    if not values:
        return dict(data)
    return {**_masked(data, values), WITHHELD_KEY: True}


def mask_recipe_text(text: str) -> str:
    """A recipe's text with the credentials written in it masked (for the build record)."""
    from .recipe import parse_recipe

    try:
        recipe = parse_recipe(text, "recipe.toml")
    except Exception:  # noqa: BLE001 - a recipe that does not parse keeps the general masks
        return redact(text)
    return mask(text, literal_secrets(recipe))


def substitute(text: str, values: Mapping[str, str]) -> str:
    """`text` with each ${NAME} whose NAME is in `values` replaced by its value (others are
    left as they are); for a container only: never log or record the result."""
    return _ENV_REFS.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def resolve(value: str, env: Mapping[str, str]) -> str:
    """Resolve a ${NAME} reference from the environment (at container start only)."""
    name = env_reference(value)
    if name is None:
        return value
    if name not in env:
        from .errors import UsageError
        from .i18n import _

        raise UsageError(
            _("the secret reference ${{{name}}} is not set in the environment").format(name=name),
            _("export {name}=... before running tfwizard").format(name=name))
    return env[name]
