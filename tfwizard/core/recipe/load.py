"""Loading a recipe: parse its TOML, check it against the schema and report **every**
problem at once, each with its key path and line."""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions

from .. import safety
from ..errors import RecipeError, UsageError
from ..i18n import _, ngettext
from .schema import (
    MAX_RECIPE_BYTES,
    RECIPE_SCHEMA,
    SECTIONS,
    TOP_KEYS,
    Recipe,
    extras_for_backend,
)

# -- problems -------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One problem found while loading a recipe: the key and what is wrong."""

    key_path: str
    message: str
    line: int | None = None
    suggestion: str = ""

    def __str__(self) -> str:
        if self.line:
            text = _("line {line}: {key}: {message}").format(
                line=self.line, key=self.key_path, message=self.message)
        else:
            text = _("{key}: {message}").format(key=self.key_path, message=self.message)
        if self.suggestion:
            return _("{problem}; {suggestion}").format(problem=text, suggestion=self.suggestion)
        return text

    def to_dict(self) -> dict[str, Any]:
        """The problem as JSON data."""
        return {
            "key": self.key_path,
            "line": self.line,
            "message": self.message,
            "suggestion": self.suggestion,
        }


def recipe_error(where: str, problems: list[Problem]) -> RecipeError:
    """The RecipeError listing every problem of the recipe at `where`, worded here."""
    lines = [ngettext("{path}: {count} problem", "{path}: {count} problems",
                      len(problems)).format(path=where, count=len(problems))]
    lines += [f"  {p}" for p in problems]
    return RecipeError(where, problems, "\n".join(lines))


_HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\]?\s*(#.*)?$")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_\-\"'.]+(?:\s*\.\s*[A-Za-z0-9_\-\"']+)*)\s*=")


def key_lines(text: str) -> dict[str, int]:
    """Map "table.key" (and "table") to the 1-based line where it is defined."""
    lines: dict[str, int] = {}
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header and not _ASSIGN.match(line):
            table = ".".join(p.strip().strip("\"'") for p in header.group(1).split("."))
            lines.setdefault(table, number)
            continue
        assign = _ASSIGN.match(line)
        if assign:
            key = ".".join(p.strip().strip("\"'") for p in assign.group(1).split("."))
            full = f"{table}.{key}" if table else key
            lines.setdefault(full, number)
    return lines


class _Collector:
    def __init__(self, text: str) -> None:
        self.lines = key_lines(text)
        self.problems: list[Problem] = []

    def add(self, key_path: str, message: str, suggestion: str = "") -> None:
        line = self.lines.get(key_path)
        if line is None and "." in key_path:
            line = self.lines.get(key_path.rsplit(".", 1)[0])
        self.problems.append(Problem(key_path, message, line, suggestion))


def _did_you_mean(word: str, options: list[str]) -> str:
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if close:
        return _('did you mean "{word}"?').format(word=close[0])
    return _("known keys: {keys}").format(keys=", ".join(options))


# -- loading ----------------------------------------------------------------------------


def parse_recipe(data: bytes | str, where: str = "recipe") -> Recipe:
    """Parse and validate recipe text; raises RecipeError listing every problem."""
    if isinstance(data, bytes):
        if len(data) > MAX_RECIPE_BYTES:
            raise recipe_error(where, [Problem("(file)", _too_large(len(data)))])
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            raise recipe_error(where, [Problem(
                "(file)", _("is not UTF-8 text (byte {offset})").format(offset=exc.start), line,
                _("save the file as UTF-8"))]) from None
    else:
        text = data
        if len(text) > MAX_RECIPE_BYTES:
            raise recipe_error(where, [Problem("(file)", _("is too large for a recipe"))])
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        doc = tomlkit.parse(text)
        plain = doc.unwrap()
    except tomlkit.exceptions.ParseError as exc:
        message = str(exc).split(" at line ")[0]
        # tomlkit's own words (English) say what is wrong; the suggestion is ours
        raise recipe_error(where, [Problem("(toml)", message, exc.line,
                                          _("fix the TOML syntax"))]) from None
    except tomlkit.exceptions.TOMLKitError as exc:  # e.g. KeyAlreadyPresent, which has no line
        message = str(exc)
        raise recipe_error(where, [Problem("(toml)", message, _duplicate_line(text),
                                          _("each key and table may appear only once"))]) \
            from None
    except (RecursionError, ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        # tomlkit raises plain errors on some pathological inputs (deep nesting, odd keys)
        raise recipe_error(where, [Problem("(toml)", _("cannot be parsed: {error}").format(
            error=type(exc).__name__))]) from None
    recipe = validate(plain, text, where)
    recipe.document = doc
    return recipe


def _duplicate_line(text: str) -> int | None:
    """The line of the first key or table defined a second time, if any."""
    seen: set[str] = set()
    table = ""
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header and not _ASSIGN.match(line):
            table = ".".join(p.strip().strip("\"'") for p in header.group(1).split("."))
            if not line.lstrip().startswith("[["):
                if f"[{table}]" in seen:
                    return number
                seen.add(f"[{table}]")
            continue
        assign = _ASSIGN.match(line)
        if assign:
            key = ".".join(p.strip().strip("\"'") for p in assign.group(1).split("."))
            full = f"{table}.{key}" if table else key
            if full in seen:
                return number
            seen.add(full)
    return None


def load_recipe(path: str | Path) -> Recipe:
    """Load a recipe file; every problem is reported at once."""
    path = Path(path).expanduser()
    try:
        data = _read_regular(path)
    except FileNotFoundError:
        raise UsageError(_("{path}: no such recipe file").format(path=path),
                         _("Create one with `tfwizard recipe new recipe.toml`.")) from None
    except IsADirectoryError:
        raise UsageError(_("{path}: is a folder, not a recipe file").format(path=path)) from None
    except OSError as exc:
        raise UsageError(_("{path}: cannot read: {error}").format(
            path=path, error=exc.strerror)) from None
    recipe = parse_recipe(data, str(path))
    recipe.path = path
    return recipe


def _read_regular(path: Path) -> bytes:
    """A recipe file's bytes: a regular file only (a device, a FIFO or a /proc file has
    no size to check and may never end), at most MAX_RECIPE_BYTES."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer before fstat can refuse it
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(str(path))
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(_("{path}: is not a regular file (a device, a FIFO or a "
                               "socket); a recipe is a TOML file").format(path=path),
                             _("Name the recipe file itself."))
        if st.st_size > MAX_RECIPE_BYTES:
            raise recipe_error(str(path), [Problem("(file)", _too_large(st.st_size))])
        data = fh.read(MAX_RECIPE_BYTES + 1)  # a file that grew since: still bounded
    if len(data) > MAX_RECIPE_BYTES:
        raise recipe_error(str(path), [Problem("(file)", _too_large(len(data)))])
    return data


def _too_large(size: int) -> str:
    return _("is {size:,} bytes; a recipe is at most {limit:,}").format(
        size=size, limit=MAX_RECIPE_BYTES)


def validate(plain: dict[str, Any], text: str, where: str = "recipe") -> Recipe:
    """Check a parsed document against the schema; collect all problems."""
    from ..knowledge import load_knowledge

    kb = load_knowledge()
    col = _Collector(text)
    recipe = Recipe()

    schema = plain.get("schema")
    if schema is None:
        col.add("schema", _("is missing"),
                _("add `schema = {schema}` at the top").format(schema=RECIPE_SCHEMA))
    elif isinstance(schema, bool) or not isinstance(schema, int):
        col.add("schema", _("must be a whole number, not {value!r}").format(value=schema),
                _("use {schema}").format(schema=RECIPE_SCHEMA))
    elif schema > RECIPE_SCHEMA:
        col.add("schema", _("{schema} is newer than this tfwizard understands ({supported})")
                .format(schema=schema, supported=RECIPE_SCHEMA), _("upgrade tfwizard"))
    elif schema < 1:
        col.add("schema", _("{schema} is not a recipe schema").format(schema=schema),
                _("use {schema}").format(schema=RECIPE_SCHEMA))
    else:
        recipe.schema = schema

    name = plain.get("name")
    if name is None:
        col.add("name", _("is missing"), _('add e.g. `name = "tf218-cuda"`'))
    elif not isinstance(name, str):
        col.add("name", _("must be a string, not {type}").format(type=type(name).__name__))
    else:
        err = safety.check_name(name)
        if err:
            col.add("name", err)
        else:
            recipe.name = name
    description = plain.get("description", "")
    if not isinstance(description, str):
        col.add("description", _("must be a string"))
    elif "\x00" in description:
        col.add("description", _("contains a NUL character"))
    else:
        recipe.description = description

    known_top = list(TOP_KEYS) + list(SECTIONS)
    for key, value in plain.items():
        if key in TOP_KEYS:
            continue
        if key not in SECTIONS:
            col.add(str(key), _("is not a recipe key"), _did_you_mean(str(key), known_top))
            continue
        if not isinstance(value, dict):
            col.add(key, _("must be a table ([{key}]), not {type}").format(
                key=key, type=type(value).__name__))
            continue
        section = getattr(recipe, key)
        cls = SECTIONS[key]
        fields = {f.name: f for f in dataclasses.fields(cls)}
        for sub, sub_value in value.items():
            path = f"{key}.{sub}"
            if sub not in fields:
                col.add(path, _("is not a recipe key"), _did_you_mean(str(sub), list(fields)))
                continue
            checked = _check_value(path, sub_value, fields[sub].metadata, col)
            if checked is not _INVALID:
                setattr(section, sub, checked)

    install = plain.get("install")
    if not isinstance(install, dict) or "extras" not in install:
        recipe.install.extras = extras_for_backend(recipe.backend.kind)
    _cross_checks(recipe, plain, col, kb)
    if col.problems:
        col.problems.sort(key=lambda p: (p.line is None, p.line or 0))
        raise recipe_error(where, col.problems)
    return recipe


_INVALID = object()


def _check_value(path: str, value: Any, meta: Any, col: _Collector) -> Any:
    kind = meta["kind"]
    if kind == "bool":
        if not isinstance(value, bool):
            col.add(path, _("must be true or false, not {value!r}").format(value=value))
            return _INVALID
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            col.add(path, _("must be a whole number, not {value!r}").format(value=value))
            return _INVALID
        if value < 0 or value > 4096:
            col.add(path, _("{value} is out of range").format(value=value),
                    _("use 0 (automatic) or 1 to 4096"))
            return _INVALID
        return value
    if kind == "list":
        if not isinstance(value, list):
            if isinstance(value, str):
                col.add(path, _("must be a list of strings"),
                        _('write ["{value}"]').format(value=value))
            else:
                col.add(path, _("must be a list of strings, not {type}").format(
                    type=type(value).__name__))
            return _INVALID
        if len(value) > 256:
            col.add(path, _("has {count} entries; at most 256").format(count=len(value)))
            return _INVALID
        ok = True
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, str):
                col.add(path, _("entry {number} must be a string, not {value!r}").format(
                    number=i + 1, value=item))
                ok = False
                continue
            err = _check_string(meta["check"], item)
            if err:
                col.add(path, _("entry {number} {value!r}: {problem}").format(
                    number=i + 1, value=item, problem=err))
                ok = False
            out.append(item)
        return out if ok else _INVALID
    # strings
    if not isinstance(value, str):
        col.add(path, _("must be a string, not {type} {value!r}").format(
            type=type(value).__name__, value=value)[:200])
        return _INVALID
    if meta["choices"] and value not in meta["choices"]:
        col.add(path, _('"{value}" is not one of {choices}').format(
                    value=value, choices=", ".join(meta["choices"])),
                _did_you_mean(value, list(meta["choices"])))
        return _INVALID
    if value == "":
        return value
    err = _check_string(meta["check"], value)
    if err:
        col.add(path, err)
        return _INVALID
    return value


def _check_string(check: str, value: str) -> str | None:
    """Format and safety check of one string value; returns an error or None."""
    base = safety.check_text(value)
    if base:
        return base
    if check == "version":
        if not re.fullmatch(r"\d+(\.\d+){1,3}", value):
            return _('"{value}" is not a version like 12.5.1').format(value=value)
    elif check == "pyversion":
        if not re.fullmatch(r"3\.\d{1,2}", value):
            return _('"{value}" is not a Python version like 3.11').format(value=value)
    elif check == "major":
        if not re.fullmatch(r"\d{1,3}", value):
            return _('"{value}" is not a major version like 18').format(value=value)
    elif check == "cc":
        if value != "auto" and not re.fullmatch(r"(\d{1,2}\.\d[af]?|(sm|compute)_\d{2,3}[af]?)",
                                                value):
            return _('"{value}" is not a compute capability; use "8.6", "sm_86", "compute_90" '
                     'or "auto"').format(value=value)
    elif check == "gfx":
        if value != "auto" and not re.fullmatch(r"gfx[0-9a-f]{3,5}(:[a-z+\-:]+)?", value):
            return _('"{value}" is not an AMD GPU target like gfx90a').format(value=value)
    elif check in ("copt", "bazelflag"):
        return safety.check_flag(value, bazel=check == "bazelflag")
    elif check == "image":
        return safety.check_image(value)
    elif check == "path":
        return safety.check_path_text(value)
    elif check == "url":
        return safety.check_url(value)
    elif check == "gitref":
        return safety.check_git_ref(value)
    elif check == "name":
        return safety.check_name(value)
    elif check == "header":
        match = re.fullmatch(r"([A-Za-z0-9\-_]{1,100})=(\S{1,2000})", value)
        if not match:
            return _('"{value}" is not a header like "x-api-key=${{API_KEY}}"').format(value=value[:60])
        if re.fullmatch(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}", match.group(2)):
            return None
        return safety.check_flag("--x=" + value, bazel=True)
    elif check == "property":
        if value == "auto":
            return None
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,99}=\S{0,2000}", value):
            return _('"{value}" is not a platform property like '
                     '"container-image=docker://IMAGE" (or "auto")').format(value=value[:60])
        return safety.check_flag("--remote_default_exec_properties=" + value, bazel=True)
    elif check == "proxy":
        if value.startswith("${") and value.endswith("}"):
            return None if re.fullmatch(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}", value) else \
                _('"{value}" is not an environment reference like ${{HTTPS_PROXY}}').format(value=value)
        return safety.check_url(value)
    elif check == "wheelhouse":
        return _check_wheelhouse(value)
    elif check == "label":
        if not re.fullmatch(r"[a-z0-9]{1,32}", value):
            return _('"{value}" is not a label segment: 1 to 32 lower-case letters and '
                     'digits').format(value=value[:60])
    elif check == "hostlist":
        if not re.fullmatch(r"[A-Za-z0-9.*_\-/:,\[\]]+", value):
            return _('"{value}" is not a comma-separated host list').format(value=value[:60])
    return None


def _check_wheelhouse(value: str) -> str | None:
    """A wheelhouse: an http(s):// or file:// URL without a password, or a folder."""
    if "://" not in value:
        return safety.check_path_text(value)
    if not value.startswith(("http://", "https://", "file://")):
        return _('"{value}" is not an http(s):// or file:// URL or a folder').format(
            value=value[:80])
    err = safety.check_url(value)
    if err:
        return err
    if re.match(r"[a-z]+://[^/@]*:[^/@]*@", value):
        return _("a password in the recipe: keep it in TWINE_PASSWORD, ~/.pypirc or keyring")
    return None


def _cross_checks(recipe: Recipe, plain: dict[str, Any], col: _Collector, kb: Any) -> None:
    tf = recipe.tensorflow
    tf_table = plain.get("tensorflow") if isinstance(plain.get("tensorflow"), dict) else None
    if tf_table is None:
        col.add("tensorflow", _("is missing"), _('add [tensorflow] with version = "2.18.0"'))
    elif not (tf.version or tf.ref or tf.source_dir):
        col.add("tensorflow.version", _("is missing"),
                _("set version (a release), ref (a git ref) or source_dir (a checkout)"))
    if tf.version and kb.release(tf.version) is None:
        versions = kb.release_versions()
        close = difflib.get_close_matches(tf.version, versions, n=1, cutoff=0.5)
        known = ", ".join(versions)
        hint = (_('did you mean "{version}"? known: {known}').format(version=close[0], known=known)
                if close else _("known: {known}").format(known=known))
        col.add("tensorflow.version",
                _('"{version}" is not a release tfwizard knows').format(version=tf.version), hint)
    if tf.ref and tf.source_dir:
        col.add("tensorflow.ref", _("and tensorflow.source_dir are both set"),
                _("a checkout is built as it is; remove one of them"))

    backend_table = plain.get("backend")
    if not isinstance(backend_table, dict) or "kind" not in backend_table:
        if isinstance(plain.get("cuda"), dict) and plain["cuda"].get("version"):
            col.add("backend.kind", _("is missing but [cuda] is set"), _('add kind = "cuda"'))

    release = kb.release(tf.version) if tf.version else None
    if recipe.cuda.version and "cuda.version" not in _bad_keys(col):
        version = recipe.cuda.version
        if release is not None and release.hermetic_cuda and version:
            supported = _cuda_list(kb, release)
            if version.count(".") != 2 and not (version == "11.8" and "11.8" in supported):
                matches = [v for v in supported if v.startswith(version + ".")]
                col.add("cuda.version",
                        _('"{version}" is not a full version').format(version=version),
                        _("supported for {release}: {versions}").format(
                            release=release.version, versions=", ".join(matches or supported)))


def _bad_keys(col: _Collector) -> set[str]:
    return {p.key_path for p in col.problems}


def _cuda_list(kb: Any, release: Any) -> list[str]:
    redist = kb.redist.get(release.cuda_list or "")
    return list(redist.cuda) if redist else []
