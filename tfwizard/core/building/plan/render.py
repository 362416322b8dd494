"""A build plan as text a person can paste or read: the configure answers as an env file,
the .bazelrc configure would write, the commands, and plan.json."""

from __future__ import annotations

import shlex

from ...i18n import _
from .flags import RECORD
from .plan import SRC, BuildPlan

#: the folder on this machine that the pasted commands mount as the record: the BEP file
#: and the wheel survive the container (`--rm`, and Bazel's outputs live inside it)
OUT_FOLDER = "tfwizard-out"


def render_env(plan: BuildPlan) -> str:
    """The configure answers as NAME=value lines (shell-quoted)."""
    return "".join(f"{k}={shlex.quote(v)}\n" for k, v in plan.configure_env.items())


def render_bazelrc(plan: BuildPlan) -> str:
    """The .tf_configure.bazelrc configure.py is predicted to write."""
    return "".join(line + "\n" for line in plan.predicted_bazelrc)


def comment(text: str) -> str:
    """A shell comment line; a translation cannot break out of it with a line break."""
    return "# " + " ".join(text.splitlines())


def render_commands(plan: BuildPlan) -> str:
    """Plain commands a person could paste: docker run, ./configure, bazel build."""
    q = shlex.quote
    lines = [comment(_("tfwizard plan for {name}: TensorFlow {release} ({backend})").format(
                 name=plan.recipe_name, release=plan.release, backend=plan.backend)),
             comment(_("Start the build container (the wheel comes out in ./{folder}):").format(
                 folder=OUT_FOLDER)),
             f"mkdir -p {OUT_FOLDER}"]
    run = ["docker", "run", "--rm", "-it", "--name", f"tfwizard-{plan.recipe_name}"]
    if plan.user:
        run += ["--user", plan.user]
    for k, v in plan.container_env.items():
        run += ["-e", f"{k}={v}"]
    for m in plan.mounts:
        spec = f"{m.source}:{m.target}" + (":ro" if m.read_only else "")
        run += ["-v", spec]
    if plan.source_kind != "dir":
        run += ["-v", f"tfwizard-src-{plan.recipe_name}:{SRC}"]
    run += ["-w", SRC, plan.image, "bash"]
    # "$PWD" unquoted: the shell makes it the absolute path a bind mount needs
    lines.append(" ".join(q(a) for a in run[:-4]) + f' -v "$PWD/{OUT_FOLDER}":{RECORD} '
                 + " ".join(q(a) for a in run[-4:]))
    lines.append(comment(_("Inside the container:")))
    for step in plan.steps:
        if step.role == "configure":
            lines.append(comment(_("answer every configure question with environment "
                                    "variables:")))
            for k, v in step.env.items():
                lines.append(f"export {k}={q(v)}")
            lines.append("./configure")
        else:
            lines.append(" \\\n    ".join([" ".join(q(a) for a in step.argv[:4])] +
                                          [q(a) for a in step.argv[4:]])
                         if step.role == "build" else " ".join(q(a) for a in step.argv))
    lines.append(f"cp {q(plan.wheel_dir)}/*.whl {RECORD}/")
    lines.append(comment(_("The wheel: ./{folder}/ on this machine (copied from {path})").format(
        folder=OUT_FOLDER, path=f"{plan.wheel_dir}/*.whl")))
    return "\n".join(lines) + "\n"


def render_json(plan: BuildPlan) -> str:
    """plan.json's text."""
    return plan.to_json()
