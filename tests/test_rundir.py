"""Run directories (ccdyn.rundir): manifest and lock, overwrite only of a ccdyn run and only once the
new run has started, resume against the config fingerprint, fingerprinted chunks, write errors that
name the file."""

import errno
import json
import os

import numpy as np
import pytest

from ccdyn import io, rundir
from ccdyn.rundir import RunDir, RunDirError

CFG = {"seed": 0, "lr": 0.1, "chunk_size": 64, "nested": {"tau": 1.0}}
OUT = ("summary.json", "chunks")


def _open(path, config=CFG, **kw):
    kw.setdefault("outputs", OUT)
    return RunDir.open(path, config, script="scripts/x.py", version="0", **kw)


def _complete(path, config=CFG):
    run = _open(path, config)
    io.write_json(run.path / "summary.json", {"ok": 1})
    run.finish()
    return run


def test_fresh_run_has_manifest_config_and_a_lock_that_refuses_a_second_writer(tmp_path):
    run = _open(tmp_path / "r")
    m = json.loads((tmp_path / "r" / rundir.MANIFEST).read_text())
    assert m["tool"] == "ccdyn" and m["state"] == "running" and m["fingerprint"] == run.fingerprint
    assert io.read_json(tmp_path / "r" / "config.json") == CFG
    for kw in ({"overwrite": True}, {"resume": True}):  # a live run is never touched
        with pytest.raises(RunDirError, match="in progress"):
            _open(tmp_path / "r", **kw)
    run.finish()
    assert io.read_json(tmp_path / "r" / rundir.MANIFEST)["state"] == "complete"
    with pytest.raises(RunDirError, match="pass --overwrite to replace it or --resume"):
        _open(tmp_path / "r")
    with pytest.raises(RunDirError, match="pass --overwrite to replace it \\(--output_dir"):
        _open(tmp_path / "r", can_resume=False)


def test_fingerprint_ignores_key_order_and_differences_name_the_field():
    assert rundir.fingerprint({"a": 1, "b": (2, 3)}) == rundir.fingerprint({"b": [2, 3], "a": 1})
    assert rundir.fingerprint({"a": 1}) != rundir.fingerprint({"a": 2})
    assert rundir.differences(CFG, {**CFG, "nested": {"tau": 2.0}}) == ["nested.tau: 1.0 -> 2.0"]


def test_overwrite_refuses_foreign_files_and_protected_directories(tmp_path, monkeypatch):
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "manuscript.tex").write_text("precious")
    with pytest.raises(RunDirError, match="is not a ccdyn run \\(manuscript.tex\\)"):
        _open(tmp_path / "paper", overwrite=True)
    assert (tmp_path / "paper" / "manuscript.tex").read_text() == "precious"
    _complete(tmp_path / "r")
    (tmp_path / "r" / "notes.txt").write_text("mine")
    with pytest.raises(RunDirError, match="holds files that ccdyn did not write \\(notes.txt\\)"):
        _open(tmp_path / "r", overwrite=True)
    assert (tmp_path / "r" / "notes.txt").exists() and (tmp_path / "r" / "summary.json").exists()
    run = _open(tmp_path / "s")
    run.finish()
    monkeypatch.chdir(tmp_path / "s")
    for p in (".", str(tmp_path / "s"), ".."):
        with pytest.raises(RunDirError):
            _open(p, overwrite=True)
    assert (tmp_path / "s" / rundir.MANIFEST).exists()
    with pytest.raises(RunDirError, match="holds a run of scripts/x.py, not scripts/y.py"):
        RunDir.open(tmp_path / "s", CFG, script="scripts/y.py", version="0", overwrite=True)


def test_overwrite_swaps_only_once_the_new_run_has_started(tmp_path):
    _complete(tmp_path / "r")
    new = _open(tmp_path / "r", {**CFG, "seed": 1}, overwrite=True)
    assert new.path != tmp_path / "r" and new.path.parent == tmp_path  # built beside the old run
    assert io.read_json(tmp_path / "r" / "config.json")["seed"] == 0
    new.fail("the new run could not start")  # e.g. out of memory while compiling
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]  # staging removed, old run untouched
    assert io.read_json(tmp_path / "r" / "summary.json") == {"ok": 1}

    new = _open(tmp_path / "r", {**CFG, "seed": 1}, overwrite=True)
    store = new.chunk_store()
    store.save(0, {"w": np.ones(3)})  # the first chunk on disk: the run has started
    assert new.path == tmp_path / "r" and sorted(p.name for p in tmp_path.iterdir()) == ["r"]
    assert io.read_json(tmp_path / "r" / "config.json")["seed"] == 1
    assert not (tmp_path / "r" / "summary.json").exists() and store.load(0)["w"].tolist() == [1, 1, 1]
    with pytest.raises(RunDirError, match="in progress"):
        _open(tmp_path / "r", overwrite=True)
    new.fail("crashed later")
    assert io.read_json(tmp_path / "r" / rundir.MANIFEST)["state"] == "failed"
    _open(tmp_path / "r", {**CFG, "seed": 2}, overwrite=True).finish()  # a failed run may be replaced


def test_a_run_from_before_manifests_counts_when_every_file_is_the_scripts(tmp_path):
    (tmp_path / "old" / "chunks").mkdir(parents=True)
    io.write_json(tmp_path / "old" / "summary.json", {})
    io.write_json(tmp_path / "old" / "config.json", CFG)
    _open(tmp_path / "old", overwrite=True).finish()
    assert io.read_json(tmp_path / "old" / rundir.MANIFEST)["state"] == "complete"


def test_resume_refuses_another_config_naming_the_field_and_keeps_ignored_fields(tmp_path):
    _complete(tmp_path / "r")
    with pytest.raises(RunDirError, match="another configuration: nested.tau: 1.0 -> 2.0"):
        _open(tmp_path / "r", {**CFG, "nested": {"tau": 2.0}}, resume=True)
    (tmp_path / "r" / ".summary.json.abc123.tmp").write_text("{")  # a write that a kill -9 interrupted
    run = _open(tmp_path / "r", {**CFG, "chunk_size": 16}, resume=True, ignore=("chunk_size",))
    assert run.config["chunk_size"] == 64 and "chunk_size = 64 kept from the run" in run.notes[0]
    run.release()
    (tmp_path / "r" / "config.json").write_text("{trunc")
    with pytest.raises(RunDirError, match="config.json is not readable"):
        _open(tmp_path / "r", resume=True)
    with pytest.raises(RunDirError, match="exclude each other"):
        _open(tmp_path / "r", resume=True, overwrite=True)


def test_chunks_carry_the_fingerprint_and_bad_chunks_name_their_file(tmp_path):
    a, b = _open(tmp_path / "a"), _open(tmp_path / "b", {**CFG, "seed": 9})
    a.chunk_store().save(0, {"w": np.zeros(2)})
    b.chunk_store().save(0, {"w": np.ones(2)})
    os.replace(b.chunk_store().path(0), a.chunk_store().path(1))  # a chunk copied from another run
    with pytest.raises(RunDirError, match="chunk_000001.npz belongs to another run"):
        a.chunk_store().verify()
    data = a.chunk_store().path(0).read_bytes()
    a.chunk_store().path(1).write_bytes(data[: len(data) // 2])  # truncated
    with pytest.raises(RunDirError, match="chunk_000001.npz.*not a readable .npz"):
        a.chunk_store().verify()
    a.chunk_store().path(1).unlink()
    assert a.chunk_store().verify() == 1


def test_a_run_that_never_started_leaves_nothing_behind(tmp_path):
    _open(tmp_path / "new").fail("bad input found late")
    assert not (tmp_path / "new").exists()
    (tmp_path / "empty").mkdir()
    _open(tmp_path / "empty").fail("bad input found late")
    assert list((tmp_path / "empty").iterdir()) == []


def test_output_paths_that_cannot_be_a_run_directory(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(RunDirError, match="is not a directory"):
        _open(tmp_path / "f")
    with pytest.raises(RunDirError, match="cannot use output_dir .*f/sub"):
        _open(tmp_path / "f" / "sub")


def test_a_failed_write_names_the_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left on device") as e:
        io.write_json(tmp_path / "s.json", {"a": 1})
    assert e.value.filename == str(tmp_path / "s.json") and list(tmp_path.iterdir()) == []


def test_read_npz_names_the_file_for_npy_empty_and_truncated(tmp_path):
    np.save(tmp_path / "a.npy", np.ones(3))
    (tmp_path / "zero.npz").write_bytes(b"")
    io.write_npz(tmp_path / "ok.npz", x=np.ones(3))
    (tmp_path / "half.npz").write_bytes((tmp_path / "ok.npz").read_bytes()[:40])
    for name, why in (("a.npy", "single array"), ("zero.npz", "empty file"), ("half.npz", ""), ("none.npz", "")):
        with pytest.raises(ValueError, match=f"{name} is not a readable .npz file.*{why}"):
            io.read_npz(tmp_path / name)


# A user's file anywhere in a finished run: --overwrite refuses the run and the file survives.
USER_FILES = [("notes.txt", "notes.txt"), ("chunks/notes.txt", "chunks/notes.txt"), ("runs/notes.txt", "runs/notes.txt"),
              ("chunks/sub/chunk_000009.npz", "chunks/sub/"), ("mine/summary.json", "mine/"),
              ("chunks/chunk_1.npz.bak", "chunks/chunk_1.npz.bak")]


@pytest.mark.parametrize("where, named", USER_FILES, ids=[w for w, _ in USER_FILES])
def test_overwrite_refuses_a_users_file_at_any_level(tmp_path, where, named):
    run = _open(tmp_path / "r", outputs=OUT + ("runs",))
    run.chunk_store().save(0, {"w": np.ones(2)})
    io.write_json(run.path / "runs" / "a.json", {})
    run.finish()
    (tmp_path / "r" / where).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "r" / where).write_text("mine")
    with pytest.raises(RunDirError, match=f"holds files that ccdyn did not write \\({named}"):
        _open(tmp_path / "r", overwrite=True, outputs=OUT + ("runs",))
    assert (tmp_path / "r" / where).read_text() == "mine" and (tmp_path / "r" / "chunks" / "chunk_000000.npz").exists()
    (tmp_path / "r" / where).unlink()
    if (tmp_path / "r" / where).parent != tmp_path / "r" and not any((tmp_path / "r" / where).parent.iterdir()):
        (tmp_path / "r" / where).parent.rmdir()
    _open(tmp_path / "r", overwrite=True, outputs=OUT + ("runs",)).finish()  # the run's own files alone: replaced
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == [".ccdyn.lock", "ccdyn-run.json", "config.json"]


def test_foreign_entries_match_nested_patterns_component_by_component(tmp_path):
    for rel in ("a/x_1.csv", "a/b/x_1.csv", "chunks/.chunk_000001.npz.ab.tmp", "link"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    (tmp_path / "lnk").symlink_to(tmp_path / "a")  # a link to a folder is an entry, never followed
    assert rundir.foreign_entries(tmp_path, ("a/x_*.csv", "chunks", "link")) == ["a/b/", "lnk"]
    assert rundir.foreign_entries(tmp_path, ("a/*", "chunks", "link", "lnk")) == ["a/b/x_1.csv"]  # a folder's files are checked


def test_a_run_that_wrote_an_output_and_fails_keeps_it_marked_failed_and_listed(tmp_path):
    _complete(tmp_path / "r")
    for path, kw in ((tmp_path / "new", {}), (tmp_path / "r", {"overwrite": True})):
        run = _open(path, {**CFG, "seed": 5}, **kw)
        io.write_json(run.path / "summary.json", {"late": 1})  # first output, then a late failure
        run.fail("ValueError: the last figure")
        m = io.read_json(path / rundir.MANIFEST)
        assert m["state"] == "failed" and m["error"] == "ValueError: the last figure" and m["files"] == ["summary.json"]
        assert io.read_json(path / "summary.json") == {"late": 1} and io.read_json(path / "config.json")["seed"] == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new", "r"]  # no staging folder left
    assert io.read_json(tmp_path / "r" / rundir.MANIFEST)["state"] == "failed"
    run = _open(tmp_path / "r", {**CFG, "seed": 5}, resume=True)  # a failed run resumes
    run.finish()
    assert io.read_json(tmp_path / "r" / rundir.MANIFEST)["files"] == ["summary.json"]


def test_a_stamped_record_must_hold_the_setting_it_is_filed_under(tmp_path):
    run = _open(tmp_path / "r", outputs=OUT + ("runs",))
    (run.path / "runs").mkdir()
    rundir.write_stamped(run, run.path / "runs" / "zeta10", {"setting": {"bn": "mean_only", "zeta": 10.0}, "x": 1})
    os.replace(run.path / "runs" / "zeta10.json", run.path / "runs" / "zeta1.json")  # renamed by hand
    assert rundir.read_stamped(run.path / "runs" / "zeta1.json", run.fingerprint)["x"] == 1  # unchecked: read
    with pytest.raises(RunDirError, match="zeta1.json holds the record of another setting"):
        rundir.read_stamped(run.path / "runs" / "zeta1.json", run.fingerprint, {"bn": "none", "zeta": 1.0})
    assert rundir.read_stamped(run.path / "runs" / "zeta1.json", run.fingerprint,
                               {"bn": "mean_only", "zeta": 10})["x"] == 1  # 10 and 10.0 read back alike
    run.release()
