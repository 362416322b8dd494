"""Host detection, its report, recipe problems and the small core modules' errors are
translatable: run in the pseudo language (every translated text comes back as ⟦text⟧),
what a person reads has no English outside the marks; in zh_CN it is Chinese.

Machines are described with the fakes the detection tests use (tests/core/fake_nvml.py,
tests/data/nvidia-smi, tests/data/sysfs, tests/data/cpuinfo); recipes with the mistakes
tests/core/test_recipe.py makes.
"""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import docker.errors
import pytest

from tests.core.detect.test_detect_docker import _failing, _sdk_error
from tests.core.detect.test_detect_host import _fake_root
from tests.core.fake_nvml import SCENARIOS, scenario, write_fake_nvidia_smi
from tests.i18n_scan import unmarked
from tfwizard.cli import capture
from tfwizard.core import i18n, resources, safety
from tfwizard.core.building.plan.configure import configure_env, simulate_configure
from tfwizard.core.detect import detect_host, render_host_report
from tfwizard.core.detect.cpu import probe_cpu
from tfwizard.core.detect.docker_probe import probe_docker
from tfwizard.core.detect.process import subprocess_runner
from tfwizard.core.errors import RecipeError, TfWizardError, UnsafeValue, UsageError
from tfwizard.core.host import HostProfile
from tfwizard.core.recipe import Recipe, load_recipe, parse_recipe
from tfwizard.core.secrets import resolve

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
LAPTOP = ROOT / "recipes" / "tf218-cuda-laptop.toml"
SMI_SCENARIOS = sorted(p.name for p in (DATA / "nvidia-smi").iterdir() if p.is_dir())


# -- fake machines ------------------------------------------------------------------------


class _Docker:
    """A docker SDK client of an engine that answers, with or without GPU runtimes."""

    def __init__(self, runtimes=("runc", "nvidia"), cdi=None, rootless=False) -> None:
        self.runtimes, self.cdi, self.rootless = runtimes, cdi, rootless

    def __call__(self):
        return self

    def version(self):
        return {"Version": "27.3.1", "ApiVersion": "1.47"}

    def info(self):
        info = {"Runtimes": {name: {} for name in self.runtimes},
                "SecurityOptions": ["name=rootless"] if self.rootless else []}
        if self.cdi is not None:
            info["CDISpecDirs"] = self.cdi
        return info

    def close(self):
        pass




def _detect(tmp_path: Path, **kw) -> HostProfile:
    args = dict(env={"PATH": str(tmp_path / "empty")}, nvml=scenario("no_library"),
                docker_client_factory=_Docker(), disk_path=tmp_path, machine="x86_64",
                glibc="2.39")
    args.update(kw)
    if "root" not in args:
        args["root"] = _fake_root(tmp_path)
    return detect_host(**args)


def _report(profile: HostProfile) -> str:
    """The report with its wrapped lines joined again (a wrapped text's continuation lines,
    indented by 4, hold neither ⟦ nor ⟧)."""
    report = render_host_report(profile)
    assert report.count("⟦") >= 8, report  # the headings and the lines under them
    return _unwrap(report)


def _unwrap(report: str) -> str:
    return report.replace("\n    ", " ")


def _messages(profile: HostProfile) -> str:
    return "\n".join([profile.nvidia.message, profile.amd.message, profile.docker.message,
                      profile.cpu.model or ""])


# -- detection and its report ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_nvml_scenario_is_marked(pseudo_lang, tmp_path: Path, name: str) -> None:
    profile = _detect(tmp_path, nvml=scenario(name), docker_client_factory=_Docker(("runc",)))
    report = _report(profile)
    assert unmarked(report) == []
    assert unmarked(_messages(profile)) == []
    assert "⟦" in profile.nvidia.message  # made in the language of detection time
    assert "⟦" not in profile.nvidia.status and "⟦" not in profile.nvidia.source


@pytest.mark.parametrize("smi", SMI_SCENARIOS)
def test_every_nvidia_smi_scenario_is_marked(pseudo_lang, tmp_path: Path, smi: str) -> None:
    bin_dir = tmp_path / "bin"
    write_fake_nvidia_smi(bin_dir, smi)
    profile = _detect(tmp_path, env={"PATH": str(bin_dir)}, nvml=scenario("no_library"))
    assert profile.nvidia.source == "nvidia-smi"
    report = _report(profile)
    assert unmarked(report) == []
    assert unmarked(_messages(profile)) == []


@pytest.mark.parametrize(("amd", "cpuinfo", "env"), [
    ("mi210", "aarch64-neoverse-v1.txt", {}),
    ("rx7900", "aarch64-neoverse-n1.txt", {}),
    ("rx6600-override", "x86_64-xeon-avx512.txt", {"HSA_OVERRIDE_GFX_VERSION": "10.3.0"}),
    ("rx6600-override", "x86_64-xeon-avx512.txt", {}),  # rocminfo reports another target
    ("cpu-only", "x86_64-xeon-avx512.txt", {"HSA_OVERRIDE_GFX_VERSION": "bogus"}),
])
def test_amd_trees_and_cpuinfo_samples_are_marked(pseudo_lang, tmp_path: Path, amd: str,
                                                  cpuinfo: str, env: dict) -> None:
    root = _fake_root(tmp_path, cpuinfo=cpuinfo, amd=amd)
    rocminfo = root / "rocminfo.out"

    def run(argv, timeout):
        if argv[0] == "rocminfo" and rocminfo.exists():
            return 0, rocminfo.read_text(), ""
        return subprocess_runner({"PATH": ""})(argv, timeout)  # "not found on PATH"

    profile = _detect(tmp_path, env=env, run=run, root=root)
    report = _report(profile)
    assert unmarked(report) == []
    assert unmarked(_messages(profile)) == []
    if amd != "cpu-only":
        assert profile.amd.status == "ok" and "⟦" in profile.amd.message


def test_two_amd_gpus_and_no_rocm(pseudo_lang, tmp_path: Path) -> None:
    root = _fake_root(tmp_path, amd="mi210")
    nodes = root / "sys/class/kfd/kfd/topology/nodes"
    shutil.copytree(nodes / "1", nodes / "2")
    shutil.rmtree(root / "opt")
    profile = _detect(tmp_path, root=root)
    assert len(profile.amd.gpus) == 2 and profile.amd.rocm_version is None
    assert unmarked(_report(profile)) == []


def test_unknown_arm_core_and_wsl2(pseudo_lang, tmp_path: Path) -> None:
    root = _fake_root(tmp_path, wsl=True)
    (root / "proc/cpuinfo").write_text(
        "processor\t: 0\nFeatures\t: fp asimd\nCPU implementer\t: 0x61\nCPU part\t: 0x022\n")
    assert "⟦" in (probe_cpu(root=root, machine="aarch64").model or "")
    profile = _detect(tmp_path, root=root, machine="aarch64")
    assert profile.os.wsl2
    report = _report(profile)
    assert unmarked(report) == []
    assert "0x61" in report and "/usr/lib/wsl/lib/libcuda.so.1" in report


@pytest.mark.parametrize("factory", [
    _Docker(("runc",)),  # no NVIDIA runtime: the Container Toolkit advice
    _Docker(("runc",), cdi=["/etc/cdi"], rootless=True),
    _failing(_sdk_error(PermissionError(13, "Permission denied"))),
    _failing(_sdk_error(TimeoutError(110, "Connection timed out"))),
    _failing(_sdk_error(FileNotFoundError(2, "No such file or directory"))),
    _failing(_sdk_error(ConnectionRefusedError(111, "Connection refused"))),
    _failing(ImportError("No module named 'docker'")),
    _failing(docker.errors.DockerException("something odd")),
    _failing(docker.errors.DockerException("")),
], ids=["no-nvidia-runtime", "cdi-rootless", "permission", "timeout", "no-socket", "refused",
        "no-sdk", "odd", "no-reason"])
def test_every_docker_state_is_marked(pseudo_lang, tmp_path: Path, factory) -> None:
    bin_dir = tmp_path / "bin"
    write_fake_nvidia_smi(bin_dir, "r550-rtx3060-laptop")  # a usable GPU: runtime advice
    fake_docker = bin_dir / "docker"  # installed, so a missing socket means "not running"
    fake_docker.write_text("#!/bin/sh\nexit 1\n")
    fake_docker.chmod(0o755)
    profile = _detect(tmp_path, env={"PATH": str(bin_dir)}, docker_client_factory=factory)
    assert profile.nvidia.status == "ok"
    report = _report(profile)
    assert unmarked(report) == []
    assert unmarked(profile.docker.message) == []
    assert "⟦" not in profile.docker.status


def test_docker_not_installed_and_docker_host(pseudo_lang) -> None:
    missing = _failing(_sdk_error(FileNotFoundError(2, "No such file or directory")))
    not_installed = probe_docker(env={"PATH": "/nonexistent"}, client_factory=missing)
    assert not_installed.status == "not_installed"
    elsewhere = probe_docker(env={"DOCKER_HOST": "tcp://10.0.0.9:2375"},
                             client_factory=_failing(_sdk_error(
                                 ConnectionRefusedError(111, "Connection refused"))))
    assert elsewhere.status == "not_running"
    for info in (not_installed, elsewhere):
        assert info.message.startswith("⟦") and unmarked(info.message) == []


def test_everything_broken_is_marked(pseudo_lang, tmp_path: Path) -> None:
    class Nvml:
        def __getattr__(self, name):
            raise MemoryError("nvml exploded")

    def run(argv, timeout):
        raise RuntimeError("runner exploded")

    profile = detect_host(env={}, nvml=Nvml(), run=run, root=tmp_path / "does-not-exist",
                          docker_client_factory=_failing(KeyError("docker exploded")),
                          disk_path=tmp_path / "missing")
    assert profile.nvidia.status == "error" and profile.docker.status == "error"
    assert unmarked(_report(profile)) == []


def test_the_runner_messages_are_marked(pseudo_lang, tmp_path: Path) -> None:
    slow = tmp_path / "slow"
    slow.write_text("#!/bin/sh\nwhile :; do :; done\n")
    slow.chmod(0o755)
    run = subprocess_runner({"PATH": str(tmp_path)})
    for argv, timeout in ([], 1.0), (["no-such-program"], 1.0), ([str(slow)], 0.3):
        _rc, _out, err = run(argv, timeout)
        assert err and unmarked(err) == [] and "⟦" in err


@pytest.mark.parametrize("path", sorted((DATA / "hosts").glob("*.json")), ids=lambda p: p.stem)
def test_saved_profiles_render_with_marked_report_lines(pseudo_lang, path: Path) -> None:
    """A saved profile keeps the messages of its detection (English here): every line the
    report itself adds is marked."""
    profile = HostProfile.load(path)
    stored = [m.rstrip(".") for m in (profile.nvidia.message, profile.amd.message,
                                      profile.docker.message) if m]
    stored += [m[:1].upper() + m[1:] for m in stored]  # the report starts a sentence with it
    report = _report(profile)
    assert unmarked(report, allow=tuple(stored)) == []


def test_host_profile_errors_are_marked(pseudo_lang, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    texts = []
    for content in ("{", "[]", '{"schema": 99}', '{"nvidia": {"gpus": {}}}',
                    '{"nvidia": {"gpus": [{"index": "0"}]}}', '{"nvidia": []}',
                    '{"os": {"wsl2": "yes"}}', '{"cpu": {"model": 5}}',
                    '{"nvidia": {"gpus": [{}]}}', b"\xff"):
        if isinstance(content, bytes):
            bad.write_bytes(content)
        else:
            bad.write_text(content)
        with pytest.raises(UsageError) as info:
            HostProfile.load(bad)
        texts.append(str(info.value))
    with pytest.raises(UsageError) as info:
        HostProfile.load(tmp_path / "missing.json")
    texts.append(str(info.value))
    for text in texts:
        assert "⟦" in text and unmarked(text) == [], text


# -- recipe problems --------------------------------------------------------------------------

HEAD = "schema=1\nname='x'\n[tensorflow]\nversion='2.18.0'\n"
BAD_RECIPES = [
    # the mistakes tests/core/test_recipe.py makes
    "name='x'\n[tensorflow]\nversion='2.18.0'\n",
    "schema=9\nname='x'\n[tensorflow]\nversion='2.18.0'\n",
    "schema=1\n[tensorflow]\nversion='2.18.0'\n",
    "schema=1\nname='a b'\n[tensorflow]\nversion='2.18.0'\n",
    "schema=1\nname='x'\n[tensorflow]\nversion='2.99.0'\n",
    "schema=1\nname='x'\n",
    HEAD + "[backend]\nkind='tpu'\n",
    HEAD + "[build]\njobs=-1\n",
    HEAD + "[build]\nopt_flags='-O2'\n",
    HEAD + "[build]\nbazel_flags=['--copt=$(id)']\n",
    HEAD + "[build]\nbazel_flags=['--output_base=/etc']\n",
    HEAD + "[cuda]\ncompute_capabilities=['86']\n",
    "schema=1\nname='x'\nbuidl=1\n[tensorflow]\nversion='2.18.0'\n",
    HEAD + "[build]\nimage='Bad Image'\n",
    "schema=1\nname='x'\n[tensorflow]\nref='--upload-pack=x'\n",
    # and every other check
    "schema='1'\nname=3\ndescription=4\nzzzzzz=1\n[tensorflow]\nversion='2.18'\n",
    "schema=0\nname='x'\ndescription='a\\u0000b'\nbuild=3\n[tensorflow]\nref='main'\n"
    "source_dir='/src'\n",
    "schema=1\nname='x'\n[tensorflow]\n",
    HEAD + "[cuda]\nversion='12.5'\ncudnn='9'\ncompiler='nvc'\nlocal_cuda_path='-x'\n"
    "local_cudnn_path='a\"b'\n",
    HEAD + "[python]\nversion='2.7'\n[toolchain]\nclang='eighteen'\n[rocm]\n"
    "amdgpu_targets=['sm_86', 7]\n",
    HEAD + "[build]\nxla='yes'\njobs=true\nopt_flags=[1]\nbazel_flags=['copt', '--a b']\n"
    "system_libs=5\nimage=7\n",
    HEAD + "[build]\nopt_flags=['O2', '-O\"2']\nbazel_flags=" + repr(["--x"] * 300) + "\n",
    HEAD + "[remote]\nheaders=['bad header', 'x=${A}', 'y=a;b']\ncache='ftp://x'\n"
    "[network]\nhttp_proxy='${bad-name}'\nno_proxy='a b'\n",
    HEAD + "[install]\nextras=['a b']\nvenv='" + "v" * 5000 + "'\n",
    HEAD + "[cuda]\nversion='12.5.1'\ncompilr='clang'\n",
    HEAD + "[install]\nindex_url=\"https://x/\\ny\"\n",
    "schema = 1\nname = \n",  # TOML syntax
    "schema=1\nschema=1\n",  # a key twice
]
#: what tomlkit itself says about broken TOML (its words, in English)
TOMLKIT_WORDS = ("Unexpected character", "already exists")


def _problem_texts(data: str | bytes) -> str:
    with pytest.raises(RecipeError) as info:
        parse_recipe(data, "bad.toml")
    assert info.value.problems
    return "\n".join([str(info.value)] + [f"{p.message}\n{p.suggestion}"
                                          for p in info.value.problems])


@pytest.mark.parametrize("text", BAD_RECIPES)
def test_recipe_problems_are_marked(pseudo_lang, text: str) -> None:
    found = _problem_texts(text)
    assert "⟦" in found
    assert unmarked(found, allow=TOMLKIT_WORDS) == []


def test_recipe_file_problems_are_marked(pseudo_lang, tmp_path: Path) -> None:
    texts = [_problem_texts(b"schema = 1\nname = '\xff'\n"),
             _problem_texts(b"#" * 1_000_001), _problem_texts("#" * 1_000_001)]
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * 1_000_001)
    for path in (big, tmp_path / "missing.toml", tmp_path):
        with pytest.raises(TfWizardError) as info:
            load_recipe(path)
        texts.append(str(info.value))
    with pytest.raises(UsageError) as info:
        Recipe().with_changes({"cuda.nope": 1})
    texts.append(str(info.value))
    for text in texts:
        assert "⟦" in text and unmarked(text) == [], text


def test_three_mistakes_at_once(pseudo_lang) -> None:
    text = LAPTOP.read_text().replace('version = "12.5.1"', 'version = "12.5"')
    text = text.replace("xla = true", 'xla = "yes"').replace('compiler = "clang"',
                                                              'compilr = "clang"')
    with pytest.raises(RecipeError) as info:
        parse_recipe(text, "laptop.toml")
    report = str(info.value)
    assert report.splitlines()[0] == "⟦laptop.toml: 3 problems⟧"
    assert len(report.splitlines()) == 4 and unmarked(report) == []


# -- the smaller modules' errors --------------------------------------------------------------


def test_safety_secrets_configure_and_resources_are_marked(pseudo_lang, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    texts = [safety.check_output_dir(p) for p in ("/", "/usr", "/usr/lib/x", "/var",
                                                  tmp_path / "file", tmp_path / "file" / "x")]
    texts += [safety.check_mount_source(p) for p in ("/etc", tmp_path / "nope")]
    texts += [safety.check_flag("O2", bazel=False), safety.check_git_ref("-x"),
              safety.check_url("x" * 5000), safety.check_path_text("a\nb")]
    with pytest.raises(ValueError) as escape:
        safety.safe_relative("../x")
    texts.append(str(escape.value))
    with pytest.raises(UsageError) as unset:
        resolve("${TFWIZARD_TEST_UNSET_SECRET}", {})
    texts.append(str(unset.value))
    recipe = load_recipe(LAPTOP)
    recipe.build.opt_flags = ["-O2\n-O3"]
    with pytest.raises(UnsafeValue) as unsafe:
        configure_env(recipe, None)
    texts.append(str(unsafe.value))
    predicted = simulate_configure({"TF_NEED_CUDA": "1", "HERMETIC_CUDA_COMPUTE_CAPABILITIES": "8"})
    texts += predicted.messages
    assert all(texts) and len(texts) == 16
    # without its data folder tfwizard has no catalog: that one message is English on purpose
    assert "resources/" in str(resources._not_found())
    for text in texts:
        assert "⟦" in text and unmarked(text) == [], text


def test_configure_py_output_stays_configure_pys(pseudo_lang) -> None:
    """What the real configure.py would print is predicted word for word, not translated."""
    result = simulate_configure({"TF_NEED_CUDA": "maybe"})
    assert result.error.startswith("UserInputError: Environment variable TF_NEED_CUDA")
    assert "⟦" not in result.error


# -- through the command line ----------------------------------------------------------------


def test_cli_detect_in_pseudo(tmp_path: Path) -> None:
    env = {"TFWIZARD_LANG": "pseudo", "PATH": str(tmp_path), "HOME": str(tmp_path)}
    status, out, err = capture(["detect"], env)
    assert status == 0, err
    assert "⟦" in out and unmarked(_unwrap(out)) == [], out
    status, out, err = capture(["detect", "--json"], env)
    assert status == 0, err
    profile = json.loads(out)
    machine_fields = [profile[part]["status"] for part in ("nvidia", "amd", "docker")]
    machine_fields += [profile["nvidia"]["source"], profile["amd"]["source"], profile["os"]["system"]]
    assert all(field and "⟦" not in field for field in machine_fields)  # they stay English
    assert i18n.language() == "en"


def test_cli_recipe_validate_in_pseudo(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(BAD_RECIPES[15])
    status, out, err = capture(["recipe", "validate", str(bad)], {"TFWIZARD_LANG": "pseudo"})
    assert status == 2
    assert len(out.splitlines()) > 3 and unmarked(out + err) == [], out
    status, out, err = capture(["recipe", "validate", str(tmp_path / "missing.toml")],
                               {"TFWIZARD_LANG": "pseudo"})
    assert status == 2 and "⟦" in err and unmarked(out + err) == [], err


# -- in Chinese --------------------------------------------------------------------------------


def test_detect_report_in_chinese(zh_cn_lang, tmp_path: Path) -> None:
    profile = _detect(tmp_path, nvml=scenario("no_library"),
                      docker_client_factory=_failing(_sdk_error(
                          PermissionError(13, "Permission denied"))))
    wrapped = render_host_report(profile)
    # wrapped by terminal columns: a Chinese character takes two
    assert max(sum(1 + (unicodedata.east_asian_width(c) in "WF") for c in line)
               for line in wrapped.splitlines()) <= 100
    assert any(len(line) < 60 and line.startswith("    ") for line in wrapped.splitlines())
    report = _unwrap(wrapped)
    assert "未检测到 NVIDIA GPU" in report
    assert "\n资源\n" in report and "可用磁盘空间" in report
    assert "sudo usermod -aG docker $USER" in report  # commands stay as they are


def test_recipe_problem_in_chinese(zh_cn_lang) -> None:
    text = LAPTOP.read_text().replace('version = "12.5.1"', 'version = "12.5"')
    with pytest.raises(RecipeError) as info:
        parse_recipe(text, "laptop.toml")
    [problem] = info.value.problems
    assert problem.message == "“12.5” 不是完整的版本号"
    assert "laptop.toml：1 个问题" in str(info.value)


def test_cli_recipe_validate_in_chinese(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("schema=1\nname='x'\nbuidl=1\n[tensorflow]\nversion='2.18.0'\n")
    status, out, _err = capture(["recipe", "validate", str(bad)], {"TFWIZARD_LANG": "zh_CN"})
    assert status == 2 and "不是配方中的键" in out and "你是不是想写" in out
