"""core/testloop/select.py without an engine: from git's changed files to the query, from
the query's XML to the tests, and TensorFlow's tag filters, --filter and the cap on them.
(tests/docker/test_test_select.py runs the same against real git and Bazel.)"""

from __future__ import annotations

from types import SimpleNamespace

from tfwizard.core.testloop.select import (
    Candidate,
    Selection,
    narrow,
    parse_changes,
    parse_query_xml,
    passes,
    query_argv,
    query_expression,
)

CPU = ["-gpu", "-no_oss", "-oss_excluded", "-benchmark-test", "-manual"]

#: the shape of Bazel 4.2.3's `query --output=xml` (default values included), shortened
XML = """<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
    <rule class="cc_test" location="/src/tensorflow/core/BUILD:80:8"
          name="//tensorflow/core:reduction_ops_test">
        <string name="name" value="reduction_ops_test"/>
        <string name="size" value="small"/>
        <list name="tags"/>
        <rule-input name="//tensorflow/core:reduction_ops"/>
    </rule>
    <rule class="cc_test" location="/src/tensorflow/core/BUILD:90:8"
          name="//tensorflow/core:matmul_op_test_gpu">
        <string name="size" value="small"/>
        <list name="tags">
            <string value="gpu"/>
            <string value="requires-gpu-nvidia"/>
        </list>
    </rule>
    <rule class="py_test" location="/src/tensorflow/python/kernel_tests/BUILD:3:8"
          name="//tensorflow/python/kernel_tests:reduction_ops_test">
        <list name="tags"/>
    </rule>
</query>
"""


def test_changed_files_go_to_their_packages_and_links_are_skipped():
    changes = parse_changes([
        "P\ttensorflow/core\ttensorflow/core/kernels/reduce_sum_op.cc",
        "P\ttensorflow/core\ttensorflow/core/BUILD",
        "P\t.\tsetup_helper.py",
        "N\t\tREADME.md",
        "N\t\tbazel-bin",
        "garbage",
        "K\tabc123 9f86d0",
    ])
    assert changes.owned == [("tensorflow/core", "tensorflow/core/kernels/reduce_sum_op.cc"),
                             ("tensorflow/core", "tensorflow/core/BUILD"),
                             ("", "setup_helper.py")]
    assert changes.unowned == ["README.md"] and changes.packages == ["tensorflow/core", ""]
    assert (changes.graph_key, changes.gpu) == ("abc123 9f86d0", False)
    assert parse_changes(["G", "G"]).gpu is True
    expr = query_expression(changes)
    assert expr == ('kind(".*_test rule", rdeps(//..., set('
                    '"//tensorflow/core:kernels/reduce_sum_op.cc" "//:setup_helper.py"))'
                    ' + "//tensorflow/core:all")')
    wide = query_expression(changes, whole_packages=True)
    assert wide.endswith('+ "//tensorflow/core:all" + "//:all")')
    assert query_expression(parse_changes(["N\t\tREADME.md"])) == ""


def test_the_query_runs_with_the_builds_startup_options():
    build = SimpleNamespace(name="build", argv=("bazel", "--output_user_root=/cache/o",
                                                "build", "--config=opt", "//t:wheel"))
    argv = query_argv(SimpleNamespace(steps=[build]), "EXPR")  # type: ignore[arg-type]
    assert argv == ["bazel", "--output_user_root=/cache/o", "query", "--keep_going",
                    "--output=xml", "EXPR"]


def test_query_xml_gives_labels_kinds_sizes_and_tags():
    found = parse_query_xml(XML)
    assert [(c.label, c.kind, c.size, c.tags) for c in found] == [
        ("//tensorflow/core:matmul_op_test_gpu", "cc_test", "small",
         ("gpu", "requires-gpu-nvidia")),
        ("//tensorflow/core:reduction_ops_test", "cc_test", "small", ()),
        ("//tensorflow/python/kernel_tests:reduction_ops_test", "py_test", "medium", ()),
    ]
    assert parse_query_xml("") == []


def test_tag_filters_as_bazel_applies_them():
    assert passes((), CPU) and not passes(("gpu",), CPU) and passes(("no_gpu",), CPU)
    assert not passes(("manual", "x"), CPU)
    assert passes(("gpu",), ["gpu"]) and not passes(("cpu",), ["gpu", "-manual"])


def _cand(label: str, size: str = "small", tags: tuple[str, ...] = ()) -> Candidate:
    return Candidate(label, "cc_test", size, tags)


def test_narrow_filters_then_caps_small_tests_first_and_estimates():
    sel = Selection(parse_changes([]), found=[
        _cand("//a:big", "large"), _cand("//a:gpu", tags=("gpu",)), _cand("//a:one"),
        _cand("//b:two", "medium"), _cand("//b:three")])
    narrow(sel, CPU, r"^//[ab]:[a-z]+$", 3)
    assert [c.label for c in sel.by_tags] == ["//a:gpu"]
    assert sel.labels == ["//a:one", "//b:three", "//b:two"]
    assert [c.label for c in sel.over_cap] == ["//a:big"]
    assert sel.estimate() == ({"small": 2, "medium": 1}, 2 * 60 + 300)
    narrow(again := Selection(sel.changes, found=sel.found), CPU, "b:", 50)
    assert again.labels == ["//b:three", "//b:two"] and len(again.by_filter) == 2
