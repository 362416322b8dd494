"""${ENV} secrets on the warm path: resolved per exec, never in the container.

The warm container outlives the build, so what the cold path puts into a step container's
files (containers.StepSecrets.files_for) cannot go there: the container is made once and
reused with other values. Instead every exec carries them in its own environment
(exec_create environment=...), which neither `docker inspect` of the container nor
`docker exec inspect` shows (the latter shows the exec's argv, so no value goes there):

- environment variables that hold a secret (a proxy URL with a password) are left out of
  the container's environment and put into each exec's;
- Bazel flags that hold one (a remote header) leave the argv: the exec's environment
  carries them as rc lines in RC_VAR, which SECRET_BUILD writes to a file only the build
  user can read, behind a `try-import` in the user's bazelrc (a build option, not a startup
  option: the server stays up), unsets, and removes when Bazel ends.

Bazel's server keeps the environment of the client that started it; a later client sends
its own environment with each command (what --action_env and the repository rules see),
but the server process would still hold the first value. SECRET_BUILD compares, for each
secret variable, the running server's /proc/PID/environ with this exec's value and shuts
the server down when one differs, so a changed secret leaves no stale copy in the server
(one cold server start, only when a value changed; the caches stay).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence

from ..plan.plan import OUTPUT_USER_ROOT, BuildPlan
from ..run.containers import StepSecrets
from .bep import MASK_VAR

#: the exec environment variable with the rc lines of the secret Bazel flags
RC_VAR = "TFWIZARD_SECRET_BAZELRC"
#: the exec environment variable naming the secret environment variables (space separated)
NAMES_VAR = "TFWIZARD_SECRET_ENV"
#: the line SECRET_BUILD prints when it restarts Bazel's server (no value in it)
RESTART_LINE = "tfwizard: a secret environment variable changed: Bazel's server restarts"

#: $1 Bazel's output root, $2 how many of the next arguments come before Bazel's command
#: (`bazel` and its startup options), then the Bazel command. RC_VAR goes to a private rc
#: file (0600) that the user bazelrc try-imports, removed when Bazel ends; neither it nor
#: MASK_VAR (the report's, after Bazel) reaches Bazel's server or the build's actions.
SECRET_BUILD = r"""
root=$1; k=$2; shift 2
umask 077
rc="$HOME/.tfwizard-secrets/bazelrc"
line="try-import $rc"
mkdir -p "${rc%/*}"
grep -qxF "$line" "$HOME/.bazelrc" 2>/dev/null || echo "$line" >> "$HOME/.bazelrc"
trap 'rm -f "$rc"' EXIT
trap : INT TERM
printf '%s' "$__RC__" > "$rc"
unset __RC__ __MASK__
stale=
for f in "$root"/*/server/server.pid.txt; do
  [ -e "$f" ] || continue
  pid=$(cat "$f" 2>/dev/null)
  [ -n "$pid" ] && [ -r "/proc/$pid/environ" ] || continue
  for n in $__NAMES__; do
    tr '\0' '\n' < "/proc/$pid/environ" | grep -qxF "$n=$(printenv "$n")" || stale=1
  done
done
unset __NAMES__
if [ -n "$stale" ]; then
  echo "__RESTART__"
  ( i=0; for a do if [ "$i" -lt "$k" ]; then set -- "$@" "$a"; fi; shift; i=$((i+1)); done
    exec "$@" shutdown )
fi
"$@"
""".replace("__RC__", RC_VAR).replace("__NAMES__", NAMES_VAR).replace(
    "__RESTART__", RESTART_LINE).replace("__MASK__", MASK_VAR)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def secret_values(plan: BuildPlan, env: Mapping[str, str]) -> dict[str, str]:
    """The values in `env` of the plan's ${ENV} references, for WarmContainer(secrets=)
    (`tfwizard shell`, `tfwizard test`, the Test page); UsageError naming an unset one."""
    found = StepSecrets(plan, env)
    found.check()
    return found.values


class WarmSecrets:
    """A plan's secrets for the warm container: its environment without them, each exec's
    environment with them, and the build's argv without secret flags."""

    def __init__(self, plan: BuildPlan, values: Mapping[str, str]) -> None:
        """`values`: the referenced variables' values (StepSecrets.values)."""
        self.plan = plan
        self.step = StepSecrets(plan, values)
        self.secret_env = sorted(k for k, v in plan.container_env.items()
                                 if self.step.is_secret(v) and _NAME.fullmatch(k))

    def container_env(self) -> dict[str, str]:
        """The container's environment: the plan's, less every variable holding a secret."""
        return {k: v for k, v in self.plan.container_env.items() if k not in self.secret_env}

    def exec_env(self, env: Mapping[str, str] | None = None) -> dict[str, str]:
        """One exec's environment: the container's, the secret variables resolved, `env`."""
        resolved = {k: self.step.resolve(self.plan.container_env[k]) for k in self.secret_env}
        return {**self.container_env(), **resolved, **(env or {})}

    def build(self, argv: Sequence[str]) -> tuple[list[str], dict[str, str]]:
        """(argv, extra exec environment) for a `bazel ... build` (or `test`: `tfwizard
        test`, which inherits the rc file's build lines) argv: the secret flags moved into
        RC_VAR and the command behind SECRET_BUILD; argv as it is when it holds no secret
        and no variable does."""
        argv = list(argv)
        at = next((i for i, a in enumerate(argv) if i and not a.startswith("-")), 0)
        if argv[:1] != ["bazel"] or not at or argv[at] not in ("build", "test"):
            return argv, {}
        flags = [self.step.resolve(a) for a in argv[at + 1:] if self.step.is_secret(a)]
        if not flags and not self.secret_env:
            return argv, {}
        kept = [a for i, a in enumerate(argv) if i <= at or not self.step.is_secret(a)]
        root = next((a.split("=", 1)[1] for a in argv[:at]
                     if a.startswith("--output_user_root=")), OUTPUT_USER_ROOT)
        # quoted as Bazel's rc tokenizer reads it; announcing the rc would print the values
        lines = [f"build {shlex.quote(flag)}\n" for flag in [*flags, "--noannounce_rc"]]
        extra = {RC_VAR: "".join(lines), NAMES_VAR: " ".join(self.secret_env)}
        # what the report masks in the BEP file it leaves in the state volume (warm/bep.py)
        masked = [m for m in self.step.mask_values() if "\n" not in m]
        if masked:
            extra[MASK_VAR] = "\n".join(masked)
        return ["sh", "-c", SECRET_BUILD, "tfwizard-secrets", root, str(at), *kept], extra
