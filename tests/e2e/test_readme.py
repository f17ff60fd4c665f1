"""The README as a program: the shell blocks of its Quick start and Model registry sections, each marked
`<!-- readme-test -->`, run in order, as written, against a fresh `scripts/run` with an empty HOME (no
~/.aws/config, no region) and nothing of the caller's AWS_* or DEPOT_* settings. A README change that
breaks a block, or a block added to those sections without the mark, fails here.

`scripts/run` runs in a copy of the repository's scripts (a git repository of its own, so `git rev-parse
--show-toplevel` names it and its var/ starts empty) with DEPOT_RUN_BIN_DIR pointing at the binaries under
test, which also appear as the copy's build/release. Marks:
  `<!-- readme-test: server -->`           started in the background in the copy; the rest waits for /readyz
  `<!-- readme-test: in the repository -->` runs with the copy as the current directory
  `<!-- readme-test -->`                    runs in a scratch directory ("from any directory")
All blocks but the server's run in one bash (set -euo pipefail), so variables carry over as in a terminal.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests

from depot_harness import REPO_ROOT, clean_env, free_port

README = REPO_ROOT / "README.md"
TESTED_SECTIONS = ("## Quick start", "## Model registry")
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)
MARK = re.compile(r"<!-- readme-test(?::\s*([^>]*?))?\s*-->\n\Z")


def sections(text: str) -> list[tuple[int, str]]:
    """(offset, text) of each tested section, up to the next `## ` heading."""
    out = []
    for heading in TESTED_SECTIONS:
        start = text.index("\n" + heading + "\n") + 1
        end = text.find("\n## ", start + len(heading))
        out.append((start, text[start:end if end >= 0 else len(text)]))
    return out


def readme_blocks(text: str) -> list[dict]:
    """Every fenced block of the tested sections: language, body, README line, mark (None = unmarked)."""
    blocks = []
    for offset, section in sections(text):
        for m in BLOCK.finditer(section):
            mark = MARK.search(section[:m.start()])
            blocks.append({"lang": m.group(1), "body": m.group(2),
                           "line": text.count("\n", 0, offset + m.start()) + 1,
                           "mark": None if mark is None else (mark.group(1) or "").strip()})
    return blocks


def test_every_shell_block_of_the_walkthroughs_is_tested():
    blocks = readme_blocks(README.read_text())
    shell = [b for b in blocks if b["lang"] in ("sh", "bash", "shell", "console", "")]
    assert len(shell) >= 6, "the Quick start and Model registry sections lost their examples"
    unmarked = [b["line"] for b in shell if b["mark"] is None]
    assert not unmarked, f"README.md lines {unmarked}: shell blocks without <!-- readme-test --> mark"
    kinds = [b["mark"] for b in shell]
    assert kinds[0] == "server" and kinds.count("server") == 1, kinds
    assert set(kinds) <= {"server", "in the repository", ""}, kinds


def make_repository_copy(root: Path, bin_dir: Path) -> None:
    shutil.copytree(REPO_ROOT / "scripts", root / "scripts", symlinks=True)
    (root / "build" / "release").mkdir(parents=True)
    for name in ("depotd", "depotctl"):
        (root / "build" / "release" / name).symlink_to(bin_dir / name)
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def stop(proc: subprocess.Popen, timeout: float = 60) -> None:
    """SIGTERM to scripts/run, which stops depotd and its PostgreSQL; SIGKILL to the group if it hangs."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.fixture
def short_tmp():
    """A directory PostgreSQL (running as `postgres` under root) can reach, with a path short enough for
    its unix socket under var/pg: pytest's own are 0700 and long."""
    path = Path(tempfile.mkdtemp(prefix="depot-readme-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.skipif(os.environ.get("DEPOT_E2E_STORAGE", "localfs") != "localfs",
                    reason="the README's scripts/run uses the local blob store: one run is enough")
def test_readme_walkthroughs_run_as_written(short_tmp):
    tmp_path = short_tmp
    bin_dir = Path(os.environ.get("DEPOT_BIN_DIR", REPO_ROOT / "build" / "asan")).resolve()
    blocks = [b for b in readme_blocks(README.read_text()) if b["mark"] is not None]
    repo, work, home = tmp_path / "depot", tmp_path / "work", tmp_path / "home"
    make_repository_copy(repo, bin_dir)
    work.mkdir()
    home.mkdir()
    env = {k: v for k, v in clean_env().items() if not k.startswith("DEPOT_")}
    env.update({"HOME": str(home), "PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "AWS_PAGER": "",
                "AWS_EC2_METADATA_DISABLED": "true"})
    # The only settings the harness adds: binaries under test, free ports, a throwaway PostgreSQL.
    server_env = dict(env, DEPOT_RUN_BIN_DIR=str(bin_dir), DEPOT_LISTEN=f"127.0.0.1:{free_port()}",
                      DEPOT_PG_PORT=str(free_port()), DEPOT_PG_FAST="1")

    server_log = tmp_path / "scripts-run.log"
    with open(server_log, "wb") as log:
        server = subprocess.Popen(["bash", "-euo", "pipefail", "-c", blocks[0]["body"]], cwd=repo, env=server_env,
                                  stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        ready = False
        while time.monotonic() < deadline and server.poll() is None and not ready:
            endpoint = repo / "var" / "endpoint"
            if endpoint.exists():
                try:
                    ready = requests.get(endpoint.read_text().strip() + "/readyz", timeout=2).status_code == 200
                except requests.RequestException:
                    pass
            time.sleep(0.2)
        assert ready, f"scripts/run did not serve within 180 s:\n{server_log.read_text()[-4000:]}"

        script = ["set -euo pipefail", 'trap \'echo "README.md block at line $README_LINE failed: $BASH_COMMAND" >&2\' ERR']
        for b in blocks[1:]:
            where = repo if b["mark"] == "in the repository" else work
            script += [f"README_LINE={b['line']}", f"echo '### README.md line {b['line']}' >&2", f"cd '{where}'",
                       b["body"]]
        proc = subprocess.run(["bash", "-c", "\n".join(script)], env=env, cwd=work, capture_output=True, text=True,
                              timeout=900)
        assert proc.returncode == 0, (f"a README block failed (exit {proc.returncode})\n--- stdout\n"
                                      f"{proc.stdout[-4000:]}\n--- stderr\n{proc.stderr[-6000:]}")
        # The walkthrough downloaded the approved files and relied on no AWS configuration in HOME.
        assert (work / "serve" / "weights.bin").read_bytes() == (work / "resnet" / "weights.bin").read_bytes()
        assert (work / "serve-vit" / "config.json").exists()
        assert not (home / ".aws" / "config").exists()
    finally:
        stop(server)
    assert server.returncode == 0, f"scripts/run did not stop cleanly:\n{server_log.read_text()[-4000:]}"
    assert "ERROR: AddressSanitizer" not in server_log.read_text()
    assert not (repo / "var" / "pg" / "postmaster.pid").exists() and not any((repo / "var" / "pg").glob("**/postmaster.pid"))
