"""Single fixes on the compute-capability list never conflict; causes come before symptoms.

The case is the UX review's: a recipe with compute_capabilities = ["3.5"] for the RTX 4070
(CC 8.9) of the real host profiles in tests/data/hosts.
"""

from __future__ import annotations

from tests.core.rules.test_rules import LAPTOP, codes, host
from tfwizard.core.findings import SYMPTOMS
from tfwizard.core.rules import apply_fix, evaluate


def cc35(build: str = "ada-8.9-driver550"):
    recipe = LAPTOP.with_changes({"cuda.compute_capabilities": ["3.5"],
                                  "cuda.version": "12.5.1"})
    return recipe, evaluate(recipe, host(build), None)


def test_each_single_cc_fix_leaves_no_compute_capability_error():
    recipe, found = cc35()
    assert "CC_DROPPED_BY_CUDA" in codes(found, "error")
    fixes = [f for f in found if f.fix is not None and f.key == "cuda.compute_capabilities"]
    assert any(f.fix.label == "Add sm_89" for f in fixes)
    for finding in fixes:
        fixed = apply_fix(recipe, finding)
        assert "3.5" not in fixed.cuda.compute_capabilities, finding.fix.label
        left = [f.code for f in evaluate(fixed, host("ada-8.9-driver550"), None)
                if f.severity == "error" and f.key == "cuda.compute_capabilities"]
        assert left == [], (finding.fix.label, left)


def test_add_keeps_what_the_cuda_can_build():
    recipe = LAPTOP.with_changes({"cuda.compute_capabilities": ["3.5", "sm_75"],
                                  "cuda.version": "12.5.1"})
    found = evaluate(recipe, host("ada-8.9-driver550"), None)
    adds = [f.fix.changes for f in found if f.fix and f.fix.label.startswith("Add ")]
    assert adds and all(c == {"cuda.compute_capabilities": ["sm_75", "sm_89"]} for c in adds)


def test_the_cause_comes_before_the_symptom():
    _recipe, found = cc35()
    errors = [f.code for f in found if f.severity == "error"]
    assert "PTX_DRIVER" in errors or "CC_NOT_COVERED" in errors, errors
    causes = [i for i, c in enumerate(errors) if c not in SYMPTOMS]
    symptoms = [i for i, c in enumerate(errors) if c in SYMPTOMS]
    assert not symptoms or max(causes) < min(symptoms), errors
