"""Scale-out: variants built on a remote Nix machine, and shared through a signed binary cache.

The remote is an sshd on 127.0.0.1 in its own mount namespace with an empty ``/nix``
(``remote_support``): a machine with nothing but Nix. Every process started here is
stopped by its pid, and every store or cache made here is removed.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from kernel_builder import nix
from kernel_builder.flake.cache import CacheCheck, cache_url, check_cache, key_files, read_public_key, refusal
from kernel_builder.errors import ConfigError
from nix_support import PYTHON, REPO, commit_all, copy_kernel, kernel_builder, run_with_kernels
from remote_support import LoopbackRemote, free_port, start_remote

CPU213 = "torch213-cxx11-cpu-x86_64-linux"
# relu's CPU variant is built per object (docs/nix.md): these derivations make its module
RELU_PARTS = sorted((f"relu-{CPU213}-plan", f"0-obj-relu-{CPU213}-relu_cpu-relu_cpu.cpp",
                     f"0-obj-relu-{CPU213}-torch-ext-torch_binding.cpp", f"relu-{CPU213}-link"))
LOAD_RELU = """
import json, torch
from pathlib import Path
from kernels import get_local_kernel
kernel = get_local_kernel(Path({path!r}))
x = torch.randn(257)
assert torch.equal(kernel.relu(x), torch.relu(x))
print(json.dumps({{"module": kernel.__name__}}))
"""
# The kernel flake names the cache and its key for plain Nix (`--accept-flake-config`).
FLAKE = """{
  nixConfig = {
    extra-substituters = [ "%(cache)s" ];
    extra-trusted-public-keys = [ "%(key)s" ];
  };
  inputs.kernel-builder.url = "git+file://%(repo)s";
  outputs = { self, kernel-builder }:
    kernel-builder.lib.genKernelFlakeOutputs { inherit self; path = ./.; };
}
"""


# -- pure parts -----------------------------------------------------------------------------


class TestLogEvents:
    def test_a_remote_build_names_its_machine(self) -> None:
        line = ('@nix {"action":"start","fields":["/nix/store/x-relu-v.drv","ssh://root@127.0.0.1",1,1],"id":5,'
                '"level":3,"text":"building \'/nix/store/x-relu-v.drv\' on \'ssh://root@127.0.0.1\'","type":105}')
        assert nix.parse_log_line(line) == nix.BuildEvent("start", drv="/nix/store/x-relu-v.drv", text="5",
                                                          machine="ssh://root@127.0.0.1")

    def test_a_substitution_names_path_and_cache(self) -> None:
        line = '@nix {"action":"start","fields":["/nix/store/y-relu-v","file:///c"],"id":9,"level":0,"text":"","type":108}'
        assert nix.parse_log_line(line) == nix.BuildEvent("substitute", path="/nix/store/y-relu-v", machine="file:///c")

    def test_an_unusable_builder_is_its_own_event(self) -> None:
        line = ('@nix {"action":"msg","level":0,"msg":"cannot build on \'ssh://root@127.0.0.1\': \\u001b[31;1merror:'
                '\\u001b[0m cannot connect to \'root@127.0.0.1\': ssh: connect to host 127.0.0.1 port 1: Connection refused"}')
        event = nix.parse_log_line(line)
        assert event is not None and event.kind == "builder-error" and event.machine == "ssh://root@127.0.0.1"
        assert event.text.startswith("cannot connect to 'root@127.0.0.1'") and "Connection refused" in event.text

    def test_an_untrusted_substitute_is_its_own_event(self) -> None:
        line = ('@nix {"action":"msg","level":1,"msg":"\\u001b[35;1mwarning:\\u001b[0m the substitute for \'/nix/store/z-a\' '
                'from \'file:///c\' is not signed by any of the keys in \'trusted-public-keys\'"}')
        assert nix.parse_log_line(line) == nix.BuildEvent(
            "untrusted", path="/nix/store/z-a", machine="file:///c",
            text="warning: the substitute for '/nix/store/z-a' from 'file:///c' is not signed by any of the keys in 'trusted-public-keys'")


class TestCacheRules:
    def test_caches_are_off_unless_asked_for_and_then_need_signatures(self) -> None:
        assert "substituters =\n" in nix.NixOptions().env()["NIX_CONFIG"]
        config = nix.NixOptions(substituters=("file:///c",), trusted_keys=("k-1:" + "A" * 43 + "=",)).env()["NIX_CONFIG"]
        assert "substituters = file:///c\n" in config and "require-sigs = true" in config
        assert f"trusted-public-keys = k-1:{'A' * 43}=\n" in config

    def test_key_names(self, tmp_path: Path) -> None:
        assert key_files("team-cache-1", tmp_path) == (tmp_path / "team-cache-1.sec", tmp_path / "team-cache-1.pub")
        with pytest.raises(ConfigError, match="invalid key name"):
            key_files("a/b", tmp_path)

    def test_public_keys_come_literally_or_from_a_pub_file_never_a_secret(self, tmp_path: Path) -> None:
        key = "t-1:" + "B" * 43 + "="
        (tmp_path / "t-1.pub").write_text(key + "\n")
        (tmp_path / "t-1.sec").write_text("t-1:" + "C" * 86 + "==")
        assert read_public_key(key) == key == read_public_key(str(tmp_path / "t-1.pub"))
        with pytest.raises(ConfigError, match="is a secret key"):
            read_public_key(str(tmp_path / "t-1.sec"))
        with pytest.raises(ConfigError, match="not a public key"):
            read_public_key("t-1")

    def test_cache_urls(self, tmp_path: Path) -> None:
        assert cache_url(str(tmp_path)) == f"file://{tmp_path}"
        assert cache_url("s3://b?region=eu-west-1") == "s3://b?region=eu-west-1"
        with pytest.raises(ConfigError, match="unsupported cache URL"):
            cache_url("ftp://x")

    def test_check_cache_sorts_variants_and_explains_refusals(self) -> None:
        outputs = {"a": "/nix/store/a", "b": "/nix/store/b", "c": "/nix/store/c", "d": "/nix/store/d"}
        found = {"file:///one": {"/nix/store/a": ["t-1"], "/nix/store/b": ["o-1"], "/nix/store/c": []},
                 "file:///two": {"/nix/store/b": ["t-1"]}}
        untrusted = {"file:///one": ["/nix/store/b", "/nix/store/c"], "file:///two": []}
        check = check_cache(found, untrusted, outputs)
        assert check == CacheCheck({"a": "file:///one", "b": "file:///two"}, {"c": ("file:///one", (), "/nix/store/c")})
        refused = {"b": ("file:///one", ("o-1",), "/nix/store/b"), "c": ("file:///one", (), "/nix/store/c"),
                   "d": ("https://x", ("t-1",), "/nix/store/d")}
        message = str(refusal(CacheCheck({}, refused), ["t-1:x"]))
        assert "trusted keys: t-1" in message and "b: file:///one has it signed by o-1, a key you do not trust" in message
        assert "c: file:///one has it unsigned" in message and "--trusted-key" in message
        assert "d: https://x has a signature named t-1 that does not verify with your t-1 key" in message


def test_cache_key_writes_a_pair_and_never_overwrites(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = kernel_builder("cache", "key", "team-1", "--out", str(tmp_path), env=env)
    public = (tmp_path / "team-1.pub").read_text().strip()
    assert done.stdout.strip() == public and public.startswith("team-1:")
    assert (tmp_path / "team-1.sec").stat().st_mode & 0o777 == 0o600
    again = kernel_builder("cache", "key", "team-1", "--out", str(tmp_path), env=env, check=False)
    assert again.returncode == 3 and "already exists" in again.stderr and "Traceback" not in again.stderr


def test_a_cache_needs_a_trusted_key(tmp_path: Path) -> None:
    kernel = copy_kernel("relu", tmp_path / "k", git=False)
    done = kernel_builder("build", str(kernel), "--cache", str(tmp_path / "c"), env=dict(os.environ), check=False)
    assert done.returncode == 3  # a configuration error
    assert "--cache needs --trusted-key" in done.stderr and "Traceback" not in done.stderr


# -- a loopback remote and a file:// cache ------------------------------------------------------

def cli_env(remote: LoopbackRemote | None = None) -> dict[str, str]:
    """The CLI of this checkout (a git worktree's too, not only the installed one)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "python")}
    return remote.env(env) if remote else env


def out_path(drv: str) -> str:
    return subprocess.run(["nix-store", "-q", "--outputs", drv], capture_output=True, text=True, check=True).stdout.strip()


def forget_locally(kernel: Path, path: str) -> None:
    """Drop kernel-builder's GC roots of KERNEL and delete PATH from this store."""
    from kernel_builder.flake.flake_build import gcroot_dir_name
    from kernel_builder.state import state_dir

    for link in (state_dir() / "gcroots" / gcroot_dir_name(kernel)).glob("result*"):
        link.unlink()
    subprocess.run(["nix-store", "--delete", path], capture_output=True, text=True, check=True)
    assert not Path(path).exists()


def start(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest, name: str) -> LoopbackRemote:
    remote = start_remote(tmp_path_factory.mktemp(name) / "machine")
    request.addfinalizer(remote.stop)
    return remote


@pytest.fixture(scope="module")
def fetched() -> None:
    kernel_builder("toolchain", "fetch", env=cli_env())


@pytest.fixture(scope="module")
def remote(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> LoopbackRemote:
    return start(tmp_path_factory, request, "remote")


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> LoopbackRemote:
    """A second empty-store machine, for what a cache gives a store that built nothing."""
    return start(tmp_path_factory, request, "fresh")


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("keys")
    for name in ("team-cache-1", "other-1"):
        kernel_builder("cache", "key", name, "--out", str(where), env=cli_env())
    return where


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache") / "store"


@pytest.fixture(scope="module")
def relu(tmp_path_factory: pytest.TempPathFactory, keys: Path, cache_dir: Path, fetched: None) -> Path:
    """A salted, committed relu copy whose flake names the test cache and key in nixConfig."""
    kernel = copy_kernel("relu", tmp_path_factory.mktemp("scale") / "relu", git=False, salt=True)
    key = (keys / "team-cache-1.pub").read_text().strip()
    (kernel / "flake.nix").write_text(FLAKE % {"cache": f"file://{cache_dir}", "key": key, "repo": REPO})
    commit_all(kernel, init=True)
    return kernel


@pytest.fixture(scope="module")
def remote_build(relu: Path, remote: LoopbackRemote) -> dict[str, object]:
    """relu's torch 2.13 CPU variant built on the remote only (-j 0)."""
    done = kernel_builder("build", str(relu), "--variant", CPU213, "-j", "0", "--builders", remote.builders(),
                          "--json", env=cli_env(remote))
    row = json.loads(done.stdout)[0]
    row["stderr"] = done.stderr
    return row


@pytest.fixture(scope="module")
def pushed(relu: Path, remote_build: dict[str, object], keys: Path, cache_dir: Path) -> dict[str, object]:
    done = kernel_builder("cache", "push", str(relu), "--to", f"file://{cache_dir}", "--secret-key",
                          str(keys / "team-cache-1.sec"), "--variant", CPU213, "--json", env=cli_env())
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_remote_build_with_no_local_jobs(relu: Path, remote: LoopbackRemote, remote_build: dict[str, object]) -> None:
    assert remote_build["status"] == "built" and remote_build["where"] == remote.uri
    assert f"building {CPU213} on {remote.uri}" in str(remote_build["stderr"])
    output = out_path(str(remote_build["drv"]))
    remote.ssh(f"nix-store --check-validity {output}")  # the remote store holds the output ...
    assert Path(output).is_dir()  # ... and so does this one
    remote_store = remote.ssh("ls /nix/store").stdout
    assert "-kb-cc-gcc12" in remote_store and "-kb-env-torch2.13" in remote_store  # the toolchain travelled
    metadata = json.loads((relu / "build" / CPU213 / "metadata.json").read_text())
    loaded = json.loads(run_with_kernels(PYTHON, LOAD_RELU.format(path=str(relu / "build" / CPU213))).splitlines()[-1])
    assert loaded["module"] == metadata["id"]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_unreachable_builder_is_named(tmp_path: Path, remote: LoopbackRemote, fetched: None) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", salt=True)
    env = {**cli_env(), "NIX_SSHOPTS": remote.sshopts.replace(f"-p {remote.port}", f"-p {free_port()}")}
    done = kernel_builder("build", str(kernel), "--variant", CPU213, "-j", "0", "--builders", remote.builders(),
                          env=env, check=False)
    assert done.returncode == 4 and "Traceback" not in done.stderr  # a build error
    assert f"no remote builder could take the build (and -j 0 allows no local build):\n  {remote.uri}: " in done.stderr
    assert "Connection refused" in done.stderr and "NIX_SSHOPTS" in done.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_an_unreachable_builder_falls_back_to_local_jobs(tmp_path: Path, remote: LoopbackRemote, fetched: None) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", salt=True)
    env = {**cli_env(), "NIX_SSHOPTS": remote.sshopts.replace(f"-p {remote.port}", f"-p {free_port()}")}
    done = kernel_builder("build", str(kernel), "--variant", CPU213, "-j", "1", "--builders", remote.builders(),
                          "--json", env=env)
    row = json.loads(done.stdout)[0]
    assert row["status"] == "built" and row["where"] == "local"
    assert f"warning: cannot build on {remote.uri}: " in done.stderr and "building on this machine instead" in done.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_fresh_store_substitutes_the_pushed_variant_without_building(
    fresh: LoopbackRemote, remote_build: dict[str, object], pushed: dict[str, object], keys: Path, cache_dir: Path,
) -> None:
    output = out_path(str(remote_build["drv"]))
    assert pushed["variants"] == {CPU213: output} and pushed["key"] == "team-cache-1"
    assert int(str(pushed["paths"])) > 5  # the toolchain closure went along
    assert fresh.ssh(f"test -e {output} || echo absent").stdout.strip() == "absent"
    wrong = (keys / "other-1.pub").read_text().strip()
    refused = fresh.ssh(f"nix-store -r {output} --option substituters file://{cache_dir} "
                        f"--option trusted-public-keys '{wrong}'", check=False)
    assert refused.returncode != 0 and "is not signed by any of the keys in 'trusted-public-keys'" in refused.stderr
    key = (keys / "team-cache-1.pub").read_text().strip()
    done = fresh.ssh(f"nix-store -r {output} --option substituters file://{cache_dir} --option trusted-public-keys '{key}'")
    assert f"copying path '{output}' from 'file://{cache_dir}'" in done.stderr
    assert "building" not in done.stderr
    assert done.stdout.split() == [output]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_fresh_store_builds_a_changed_variant_with_the_toolchain_from_the_cache(
    fresh: LoopbackRemote, pushed: dict[str, object], keys: Path, cache_dir: Path, tmp_path: Path, fetched: None,
) -> None:
    kernel = copy_kernel("relu", tmp_path / "relu", salt=True)  # new sources: not in the cache
    flake_args = shlex.split(kernel_builder("build", str(kernel), "--print-nix-args", env=cli_env()).stdout)
    drv = subprocess.run(["nix", "eval", "--raw", *flake_args, f"{kernel}#redistributable.{CPU213}.drvPath"],
                         env=nix.nix_env(), capture_output=True, text=True, check=True).stdout
    subprocess.run(["nix", "copy", "--derivation", "--to", fresh.uri, drv], env=nix.nix_env(fresh.env()),
                   capture_output=True, text=True, check=True)  # only the .drv files and sources
    key = (keys / "team-cache-1.pub").read_text().strip()
    done = fresh.ssh(f"nix-store -r {drv} --option substituters file://{cache_dir} --option trusted-public-keys '{key}'")
    built = re.findall(r"building '(/nix/store/[^']+)'", done.stderr)
    names = sorted(Path(b).name.split("-", 1)[1].removesuffix(".drv") for b in built)
    assert drv in built and names == sorted([*RELU_PARTS, f"relu-{CPU213}"])  # and no toolchain derivation
    for part in ("kb-env-torch2.13", "kb-cc-gcc12", "kb-runtime"):
        assert re.search(rf"copying path '/nix/store/[a-z0-9]+-{part}' from 'file://{cache_dir}'", done.stderr), part


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_build_fetches_cached_variants_and_refuses_untrusted_ones(
    relu: Path, remote_build: dict[str, object], pushed: dict[str, object], keys: Path, cache_dir: Path, tmp_path: Path,
) -> None:
    output = out_path(str(remote_build["drv"]))
    forget_locally(relu, output)
    wrong = kernel_builder("build", str(relu), "--variant", CPU213, "--cache", f"file://{cache_dir}",
                           "--trusted-key", str(keys / "other-1.pub"), env=cli_env(), check=False)
    assert wrong.returncode == 4 and "Traceback" not in wrong.stderr
    assert f"{CPU213}: file://{cache_dir} has it signed by team-cache-1" in wrong.stderr
    assert "trusted keys: other-1" in wrong.stderr and not Path(output).exists()
    unsigned = tmp_path / "unsigned"  # the same path in a cache whose narinfo carries no signature
    subprocess.run(["nix", "copy", "--from", f"file://{cache_dir}", "--to", f"file://{unsigned}", output],
                   env=nix.nix_env(), capture_output=True, check=True)
    narinfo = unsigned / (Path(output).name.split("-", 1)[0] + ".narinfo")
    narinfo.write_text("".join(line for line in narinfo.read_text().splitlines(keepends=True) if not line.startswith("Sig:")))
    done = kernel_builder("build", str(relu), "--variant", CPU213, "--cache", str(unsigned),
                          "--trusted-key", str(keys / "team-cache-1.pub"), env=cli_env(), check=False)
    assert done.returncode == 4 and f"{CPU213}: file://{unsigned} has it unsigned" in done.stderr
    done = kernel_builder("build", str(relu), "--variant", CPU213, "-j", "0", "--cache", f"file://{cache_dir}",
                          "--trusted-key", str(keys / "team-cache-1.pub"), "--json", env=cli_env())
    row = json.loads(done.stdout)[0]
    assert row["status"] == "fetched" and row["where"] == f"file://{cache_dir}"
    assert Path(output).is_dir() and (relu / "build" / CPU213 / "metadata.json").is_file()
    assert "1 variant(s): 1 fetched from a cache; results in" in done.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_plain_nix_substitutes_from_the_cache_the_flake_names(
    relu: Path, pushed: dict[str, object], keys: Path, cache_dir: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KERNEL_BUILDER_", "NIX_"))}
    env["NIX_CONFIG"] = ("experimental-features = nix-command flakes\nbuild-users-group =\nsubstituters =\n"
                         f"sandbox = true\nflake-registry = {nix.empty_registry()}\nnarinfo-cache-negative-ttl = 0\n")

    def plain(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["nix", *args], cwd=relu, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-4000:]
        return done

    installable = f".#redistributable.{CPU213}"
    output = plain("eval", "--raw", f"{installable}.outPath").stdout
    if output not in pushed["variants"].values():  # type: ignore[union-attr]
        # plain Nix sees the committed builder, kernel-builder its working tree: push this one too
        plain("build", "--no-link", installable)
        subprocess.run(["nix", "copy", "--to", f"file://{cache_dir}?secret-key={keys / 'team-cache-1.sec'}", output],
                       env=nix.nix_env(), capture_output=True, check=True)
    forget_locally(relu, output)
    done = plain("build", "--no-link", "--accept-flake-config", installable)
    assert f"copying path '{output}' from 'file://{cache_dir}'" in done.stderr and "building" not in done.stderr
    forget_locally(relu, output)
    key = (keys / "team-cache-1.pub").read_text().strip()
    done = plain("build", "--no-link", installable, "--option", "substituters", f"file://{cache_dir}",
                 "--option", "trusted-public-keys", key)
    assert f"copying path '{output}' from 'file://{cache_dir}'" in done.stderr and "building" not in done.stderr


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_push_objects_adds_the_plan_objects_and_link(
    relu: Path, remote_build: dict[str, object], fresh: LoopbackRemote, keys: Path, tmp_path: Path,
) -> None:
    def push(cache: Path, *extra: str) -> dict[str, object]:
        done = kernel_builder("cache", "push", str(relu), "--to", f"file://{cache}", "--secret-key",
                              str(keys / "team-cache-1.sec"), "--variant", CPU213, "--variants-only", *extra,
                              "--json", env=cli_env())
        return json.loads(done.stdout)

    kernel_builder("build", str(relu), "--variant", CPU213, env=cli_env())  # here again, if a test above forgot it
    with_objects = push(tmp_path / "with", "--objects")
    parts = [str(p) for p in with_objects["parts"]]  # type: ignore[attr-defined]
    assert sorted(Path(p).name.split("-", 1)[1] for p in parts) == RELU_PARTS
    signed = nix.cache_path_info(f"file://{tmp_path / 'with'}", parts)
    assert {p: signed.get(p) for p in parts} == {p: ["team-cache-1"] for p in parts}
    without = push(tmp_path / "without")
    assert without["parts"] == [] and nix.cache_path_info(f"file://{tmp_path / 'without'}", parts) == {}
    # a store that trusts the key fetches an object instead of compiling it
    obj = next(p for p in parts if p.endswith("-relu_cpu-relu_cpu.cpp"))
    key = (keys / "team-cache-1.pub").read_text().strip()
    done = fresh.ssh(f"nix-store -r {obj} --option substituters file://{tmp_path / 'with'} "
                     f"--option trusted-public-keys '{key}'")
    assert f"copying path '{obj}' from 'file://{tmp_path / 'with'}'" in done.stderr and "building" not in done.stderr
