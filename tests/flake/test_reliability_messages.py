"""Issue 24, finding 10: messages that misled. Each now says what happened and what to do."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from kernel_builder.errors import NixError
from kernel_builder import nix
from nix_support import copy_kernel

PUBLIC = "team-1:" + "A" * 43 + "="


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_kernel("relu", tmp_path_factory.mktemp("messages") / "k", git=False)


def _build(kernel: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KERNEL_BUILDER_STATE_DIR": str(tmp_path / "state")}
    return subprocess.run([sys.executable, "-m", "kernel_builder", "build", str(kernel), *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)


def test_a_mistyped_cache_is_an_error_not_an_empty_cache(kernel: Path, tmp_path: Path) -> None:
    done = _build(kernel, tmp_path, "--cache", "./typo-cache", "--trusted-key", PUBLIC)
    assert done.returncode == 3, done.stderr
    assert f"--cache ./typo-cache: {tmp_path / 'typo-cache'} does not exist" in done.stderr
    assert not (tmp_path / "typo-cache").exists()
    (tmp_path / "plain-dir").mkdir()
    done = _build(kernel, tmp_path, "--cache", f"file://{tmp_path / 'plain-dir'}", "--trusted-key", PUBLIC)
    assert done.returncode == 3 and "is not a binary cache (no nix-cache-info)" in done.stderr, done.stderr


def test_the_machines_file_is_checked(kernel: Path, tmp_path: Path) -> None:
    for jobs in ("0", "1"):
        done = _build(kernel, tmp_path, "-j", jobs, "--builders", "@/missing/file")
        assert done.returncode == 3, done.stderr
        assert "--builders @/missing/file: the machines file /missing/file does not exist" in done.stderr
    (tmp_path / "machines").write_text("# nothing yet\n")
    done = _build(kernel, tmp_path, "--builders", f"@{tmp_path / 'machines'}")
    assert done.returncode == 3 and "lists no machine" in done.stderr, done.stderr


def test_no_local_jobs_without_builders_says_so(kernel: Path, tmp_path: Path) -> None:
    done = _build(kernel, tmp_path, "-j", "0")
    assert done.returncode == 3, done.stderr
    assert "-j 0 allows no build on this machine, and neither --builders nor --cache was given" in done.stderr
    assert "unable to start any build" not in done.stderr
    # -j 0 with a cache is how a client fetches and builds nothing (test_flake_scaleout)
    from kernel_builder.nix import check_builders  # lazy: test-only

    check_builders(None, 0, caches=True)


def test_a_secret_key_path_with_an_ampersand_signs(tmp_path: Path) -> None:
    keys = tmp_path / "a&b=c"
    keys.mkdir()
    nix.generate_cache_key("amp-1", keys / "amp-1.sec", keys / "amp-1.pub")
    payload = tmp_path / "payload.txt"
    payload.write_text(f"signed {tmp_path}\n")
    path = nix.run_nix(["--add", str(payload)], program="nix-store").stdout.strip()
    cache = tmp_path / "cache"
    nix.copy_to_cache(f"file://{cache}", [path], keys / "amp-1.sec")
    info = json.loads(nix.run_nix(["path-info", "--json", "--store", f"file://{cache}", path]).stdout)
    assert any(sig.startswith("amp-1:") for sig in info[0].get("signatures", [])), info


def test_nix_commands_in_messages_can_be_pasted() -> None:
    with pytest.raises(NixError) as info:
        nix.run_nix(["eval", "--expr", "1 + "])
    assert shlex.quote("1 + ") in str(info.value)


def test_fallback_is_not_suggested() -> None:
    text = ("error: some substitutes for the outputs of derivation '/nix/store/x.drv' failed (usually happens due to "
            "networking issues); try '--fallback' to build derivation from source ")
    explained = nix.explain(text)
    assert "--fallback" not in explained and "kernel-builder cache push" in explained


def _input_addressed_path(salt: str) -> str:
    """A tiny input-addressed store path without references, built by the seed busybox."""
    from kernel_builder.toolchain.pinned.lockfile import load_lock  # lazy: test-only

    seed = load_lock().seed.store_path
    expr = (f'derivation {{ name = "kb-cache-entry"; system = "x86_64-linux"; builder = "${{builtins.storePath "{seed}"}}/busybox"; '
            f'args = ["sh" "-c" "echo entry > $out"]; salt = {json.dumps(salt)}; }}')
    done = subprocess.run(["nix", "build", "--impure", "--no-link", "--json", "--expr", expr], env=nix.nix_env(),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)[0]["outputs"]["out"]


def test_the_three_cache_refusals_each_name_their_cause(tmp_path: Path) -> None:
    """A changed NarHash, an impostor key of the trusted key's name, and a key nobody
    trusts were one message ("without a trusted signature … signed by team-1"); each now
    says what happened, read from a real signed file:// cache."""
    from kernel_builder.flake.cache import CacheCheck, make_key_pair, read_public_key, refusal  # lazy: test-only

    team, _ = make_key_pair("team-1", tmp_path / "keys")
    impostor, _ = make_key_pair("team-1", tmp_path / "impostor")  # the same name, another key
    stranger, _ = make_key_pair("other-1", tmp_path / "keys")
    trusted = [read_public_key(str(tmp_path / "keys" / "team-1.pub"))]
    path = _input_addressed_path(str(tmp_path))  # content-addressed paths need no signature at all

    def cache_signed_by(secret: Path, name: str) -> str:
        directory = tmp_path / name
        subprocess.run(["nix", "copy", "--to", f"file://{directory}?secret-key={secret}", path], env=nix.nix_env(),
                       capture_output=True, text=True, check=True)
        return f"file://{directory}"

    good = cache_signed_by(team, "good")
    changed = cache_signed_by(team, "changed")
    narinfo = Path(changed[len("file://"):]) / (Path(path).name.split("-", 1)[0] + ".narinfo")
    lines = narinfo.read_text().splitlines()
    narinfo.write_text("\n".join(f"NarHash: sha256:{'1' * 52}" if line.startswith("NarHash:") else line for line in lines) + "\n")
    forged = cache_signed_by(impostor, "forged")
    foreign = cache_signed_by(stranger, "foreign")

    refused = {}
    for url in (good, changed, forged, foreign):
        found = nix.cache_path_info(url, [path])
        if nix.untrusted_paths(url, [path], trusted):
            refused[url] = (url, tuple(found[path]), path)
    assert good not in refused and set(refused) == {changed, forged, foreign}
    assert nix.modified_paths(changed, [path]) == [path]  # Nix reads the NAR (zstd or xz) and compares
    assert nix.modified_paths(forged, [path]) == nix.modified_paths(good, [path]) == []
    message = str(refusal(CacheCheck({}, {changed: refused[changed]}, frozenset([path])), trusted))
    assert f"{changed} has it signed by team-1, but its NAR does not match the narinfo's NarHash" in message
    # one message per cache here: the refusal is per variant, and every cache holds the same path
    message = str(refusal(CacheCheck({}, {url: refused[url] for url in (forged, foreign)}), trusted))
    assert f"{forged} has a signature named team-1 that does not verify with your team-1 key" in message
    assert f"{foreign} has it signed by other-1, a key you do not trust" in message


def test_a_narinfo_whose_nar_is_missing_is_named(tmp_path: Path) -> None:
    """A narinfo without its NAR made Nix quietly rebuild; `build` now warns naming the
    cache, the path and the missing file (``query_caches`` drops it from what it fetches)."""
    from kernel_builder.flake.cache import make_key_pair  # lazy: test-only
    from kernel_builder.flake.narinfo import missing_nar  # lazy: test-only

    secret, _ = make_key_pair("team-1", tmp_path / "keys")
    path = _input_addressed_path(str(tmp_path))
    cache = tmp_path / "cache"
    subprocess.run(["nix", "copy", "--to", f"file://{cache}?secret-key={secret}", path], env=nix.nix_env(),
                   capture_output=True, text=True, check=True)
    assert missing_nar(f"file://{cache}", path) is None
    nars = list((cache / "nar").iterdir())
    assert len(nars) == 1
    nars[0].unlink()
    assert missing_nar(f"file://{cache}", path) == nars[0]
    assert missing_nar("https://cache.example", path) is None
