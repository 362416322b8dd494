"""The text a log line's patterns are tried on.

Log prefixes: what CI systems, terminals and job launchers put before a tool's words (a
time or a date, Bazel's `(12:00:00) ` of --show_timestamps, Jenkins' `[2024-...Z] `,
MSBuild's `1>`, mpirun's `[1,0]<stderr>:`, Yocto's `| `, Docker Compose's `service-1  | `,
Ray's `(Actor pid=N)`, a paste's line number `976 | `, a `[N]` counter or a `[tag] `,
Spack's `>> 132    ` before a line of the build log it quotes, Nix's `       > ` before the
builder's last lines, kubectl's `--timestamps` and `--prefix` and a container runtime's
log file (`2024-...Z stderr F `), GitHub's and Azure's `##[error]`, syslog's and
journalctl's `Dec 01 12:00:00 host prog[123]: `; several of them, spaces between), ANSI
colour codes and gcc's quotes read in the wrong encoding are taken off a line before its
patterns are tried (`line_text`), so a pattern anchored at `^` means the start of the
tool's own text. logscan's prefilter looks for literals anywhere and is not affected.
"""

from __future__ import annotations

import re

from ..streams import untag

#: one prefix a CI system, terminal or launcher puts before a line (see the module docstring)
_PREFIX = re.compile(
    r"(?:\d\d:\d\d:\d\d(?:[.,]\d+)? "          # 00:30:13 (CI time)
    # GitHub Actions' ISO time, a date; kubectl's --timestamps, a container runtime's log
    # file (CRI: the stream and a partial-line tag after the time)
    r"|\d{4}[-/]\d\d[-/]\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? "
    r"(?:std(?:out|err) [FP] )?"
    r"|\((?:\d{4}-\d\d-\d\d )?\d\d:\d\d:\d\d(?:[.,]\d+)?\) "  # Bazel's --show_timestamps
    r"|\[(?:\d{4}-\d\d-\d\d[T ])?\d\d:\d\d:\d\d(?:[.,]\d+)?Z?\] "  # Jenkins' timestamper
    r"|\[[A-Za-z][\w./-]*\] "                       # a step's tag, kubectl's [pod/name/c]
    r"|##\[[a-z]+\]"                                # GitHub's and Azure's ##[error]
    # syslog and journalctl: the time, the host, the program and its pid
    r"|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [^\s:\[]+(?:\[\d+\])?: "
    r"|[A-Za-z][\w.-]*[-_]\d+ +\| "                   # Docker Compose's service-1  |
    r"|#\d+ \d+\.\d+ "                           # Docker BuildKit's step and time
    r"|\d+\.\d+ (?=\S)"                           # a bare elapsed time (31.55)
    r"|\d+>"                                        # MSBuild's project number
    r"|\[\d+,\d+\]<std(?:out|err)>:"                # mpirun
    r"|\d* ?\| "                                    # Yocto's "| ", a numbered paste's "976 | "
    r"|\([^()\s]*(?:\([^()]*\))? pid=\d+(?:, ip=[\d.]+)?\) "  # Ray's worker prefix
    r"|\[\d+\] "                                    # a [N] counter
    r"|>> \d+ {2,}"                                 # Spack's marked line of a build log
    r"|> )"                                         # Nix's quote of a builder's last lines
)
#: a syslog line's first word
_MONTHS = frozenset("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split())
#: ANSI colour and cursor codes (a pasted terminal's)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
#: gcc's quotes (U+2018, U+2019) read as Latin-1 or cp1252 ("â€˜", "â\x80\x98"), or as a
#: bare "â" where a page dropped the control bytes (before an option, after a word)
_MOJIBAKE_QUOTE = re.compile("â(?:€[˜™]|\x80[\x98\x99])|â(?=-)|(?<=\\S)â(?=[\\s,:;]|$)")


def line_text(raw: str, *, untag_lines: bool = False) -> str:
    """The text a pattern is tried on: the line without its log.txt channel tag (when
    asked), ANSI codes and the prefixes CI systems and launchers put before it."""
    text = untag(raw)[1] if untag_lines else raw
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "â" in text:
        text = _MOJIBAKE_QUOTE.sub("'", text)
    first = text[:1]
    if first.isdigit() or first in "|#[( >" or "| " in text[:72] or text[:3] in _MONTHS:
        start = len(text) - len(text.lstrip(" "))
        end = start
        while True:  # prefixes stack, spaces between them (a CI time before Nix's "   > ")
            at = len(text) - len(text[end:].lstrip(" ")) if end > start else end
            m = _PREFIX.match(text, at)
            if m is None or m.end() == at:
                break
            end = m.end()
        if end > start:
            text = text[end:]
    return text
