"""Configure's output belongs to the build that asked for it (warm builds).

TensorFlow's configure.py writes its answers to `.tf_configure.bazelrc` in the source
folder, and TF's `.bazelrc` imports that file into every Bazel command. Two recipes that
build one checkout (two warm workspaces bind-mounting the same folder, or a cold build
in between) share that file, so a workspace cannot trust it because its own inputs did
not change: the file may hold the other recipe's answers (`--copt`s, CUDA versions,
compute capabilities) by now.

So ./configure is skipped only when both hold, checked in the build's own exec right
before Bazel starts:

- the sha256 of configure's inputs (`configure_digest`) is the one kept in the state
  volume after its last success in this workspace, and
- the file is byte for byte the copy of what that run wrote, kept next to the hash.

Otherwise ./configure runs again (TF's own tool writes the answers, not tfwizard), and the
new output is kept. When only the file differs, the build says so in its log.
"""

from __future__ import annotations

import hashlib
import json

from ...i18n import _
from ...resources import shell_script
from ..plan.plan import RECORD, BuildPlan, Step

#: the state volume's files: the inputs' hash and the copy of what configure wrote
CONFIGURE_HASH = "configure.sha256"
CONFIGURE_KEPT = "configure.bazelrc"
#: configure's output in the source folder
CONFIGURE_OUTPUT = ".tf_configure.bazelrc"

#: the line a skipped configure prints (ExecResult.skipped looks for it; not translated:
#: it is a marker in the log, as Bazel's own lines are)
SKIP_LINE = "tfwizard: configure inputs unchanged; ./configure not run again"

#: the first word of BUILD_SCRIPT's configure command when it goes behind the check (then
#: the check's five arguments follow, then the command)
IF_CHANGED = "--tfwizard-if-changed"

#: a shell function: `ours HASH_FILE WANT OUTPUT KEPT NOTE` succeeds when OUTPUT is this
#: workspace's own configure output (resources/scripts/warm-ours.sh)
OURS = shell_script("warm-ours.sh")

#: configure when needed, in an exec of its own: $1 the hash file, $2 the new hash, $3
#: configure's output, $4 the kept copy, $5 the note, then the configure command; prints
#: SKIP_LINE and exits 0 when the output is this workspace's own (warm-configure.sh)
CONFIGURE_IF_CHANGED = shell_script("warm-ours.sh", "warm-configure.sh", SKIP=SKIP_LINE)


def configure_digest(plan: BuildPlan, step: Step) -> str:
    """sha256 of what feeds ./configure: its argv, its environment (the recipe's configure
    keys), the container's environment and the image."""
    data = json.dumps({"argv": list(step.argv), "env": step.env,
                       "container_env": plan.container_env, "image": plan.image,
                       "workdir": step.workdir}, sort_keys=True)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def configure_check(plan: BuildPlan, step: Step) -> list[str]:
    """The check's five arguments: the hash file, this plan's hash, configure's output,
    the kept copy, and the line said when the file is another build's."""
    return [f"{RECORD}/{CONFIGURE_HASH}", configure_digest(plan, step),
            f"{step.workdir}/{CONFIGURE_OUTPUT}", f"{RECORD}/{CONFIGURE_KEPT}",
            "tfwizard: " + _("{file} is not what ./configure wrote for this recipe (another "
                             "recipe's build of this source, or an edit, changed it): "
                             "./configure runs again").format(file=CONFIGURE_OUTPUT)]
