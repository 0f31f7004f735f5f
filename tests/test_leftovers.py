"""Temporary folders of processes killed before their exit handlers ran (SIGKILL, a Dask
worker's grading process whose worker died) are removed by a later process of the same kind."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from conftest import REPO

from autograder.confinement import leftovers


def _gone_pid() -> int:
    """The pid of a process that has ended (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_only_old_folders_of_ended_makers_of_the_same_kind_and_user_go(tmp_path):
    gone, old = _gone_pid(), time.time() - leftovers.STALE_SECONDS - 60
    made = {
        "stale": tmp_path / f"autograder-kernels-{gone}-abc123",
        "recent": tmp_path / f"autograder-kernels-{gone}-def456",
        "maker alive": tmp_path / f"autograder-kernels-{os.getpid()}-ghi789",
        "other kind": tmp_path / f"autograder-hypothesis-{gone}-jkl012",
        "unnamed": tmp_path / "autograder-kernels-mno345",
    }
    for name, folder in made.items():
        folder.mkdir()
        (folder / "k-1").mkdir()
        if name != "recent":
            os.utime(folder, (old, old))
    file_named_so = tmp_path / f"autograder-kernels-{gone}-pqr678"
    file_named_so.write_text("a file, not a folder")
    os.utime(file_named_so, (old, old))
    link_named_so = tmp_path / f"autograder-kernels-{gone}-stu901"
    link_named_so.symlink_to(made["maker alive"])

    removed = leftovers.remove_stale("kernels", str(tmp_path))

    assert removed == [str(made["stale"])]
    assert [name for name, folder in made.items() if not folder.exists()] == ["stale"]
    assert file_named_so.exists() and link_named_so.is_symlink() and (made["maker alive"] / "k-1").exists()


def test_a_killed_processs_folder_is_named_for_it_and_removed_by_the_next_once_stale(tmp_path):
    """The folder a process makes names its pid; killed, it leaves the folder; the next process of the
    kind removes it once it is stale (here: aged by hand), and its own is removed when it exits."""
    code = ("import os, sys, time\nfrom autograder.confinement import leftovers\n"
            "print(leftovers.private_folder('kernels', sys.argv[1]), flush=True)\n"
            "if sys.argv[2] == 'killed': time.sleep(600)\n")
    killed = subprocess.Popen([sys.executable, "-c", code, str(tmp_path), "killed"], cwd=REPO,
                              stdout=subprocess.PIPE, text=True)
    left = killed.stdout.readline().strip()
    assert os.path.basename(left).startswith(f"autograder-kernels-{killed.pid}-")
    killed.kill()
    killed.wait()
    assert os.path.isdir(left)  # no exit handler ran
    old = time.time() - leftovers.STALE_SECONDS - 60
    os.utime(left, (old, old))
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path), "exits"], cwd=REPO, capture_output=True,
                          text=True, check=True)
    assert not os.path.exists(left)
    assert not os.path.exists(done.stdout.strip())  # its own, at its exit
    assert list(tmp_path.iterdir()) == []


def test_the_hypothesis_folder_of_a_killed_grading_process_goes_too(tmp_path):
    """Every process that imports the graders' settings has a hypothesis folder of its own: named
    for it, and removed by the next such process once its maker was killed and it is stale."""
    code = ("import sys, time\nfrom autograder.kit import settings\nprint(settings.HOME, flush=True)\n"
            "if sys.argv[1] == 'killed': time.sleep(600)\n")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    killed = subprocess.Popen([sys.executable, "-c", code, "killed"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                              text=True)
    left = killed.stdout.readline().strip()
    assert os.path.dirname(left) == str(tmp_path)
    assert os.path.basename(left).startswith(f"autograder-hypothesis-{killed.pid}-")
    killed.kill()
    killed.wait()
    assert os.path.isdir(left)
    old = time.time() - leftovers.STALE_SECONDS - 60
    os.utime(left, (old, old))
    subprocess.run([sys.executable, "-c", code, "exits"], cwd=REPO, env=env, check=True, capture_output=True)
    assert list(tmp_path.iterdir()) == []
