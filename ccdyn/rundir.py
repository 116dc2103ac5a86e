"""Run directories that cannot lose data: a manifest, a lock, staged replacement, fingerprinted chunks.

A *ccdyn run* is a directory holding ``ccdyn-run.json`` (the manifest: script, version, config
fingerprint, state ``running`` / ``complete`` / ``failed``, the glob patterns of the files the script
writes), ``config.json`` and the script's outputs. The rules (docs/reproducibility.md, "Run
directories"):

- A new run goes into a missing or empty directory. A non-empty one is refused unless ``resume``
  (continue it: it must be a ccdyn run of the same script whose config differs at most in fields that
  do not change results; those keep their stored values) or ``overwrite`` (replace it: only a ccdyn
  run that is not live, holding no file its script does not write, never the working directory or one
  of its parents). A directory written before manifests existed counts as a ccdyn run when every entry
  in it matches the script's output patterns.
- ``overwrite`` builds the new run in a hidden folder beside the old one and swaps the two only when
  the new run has *started* (its first unit of results is on disk, :meth:`RunDir.started`): a new run
  that fails to start leaves the old one untouched.
- While a process writes a run it holds an OS lock (``flock``) on ``.ccdyn.lock`` in it, released on
  exit or crash; a second process is refused at once. In a multi-process run only process 0 writes
  a run directory (the others send it their results through JAX, see :mod:`ccdyn.parallel`).
- Every chunk file carries the run's fingerprint; a chunk from another run, or an unreadable one, is
  refused with the file's name.

This module touches files; it imports nothing of ccdyn but :mod:`ccdyn.io` and :mod:`ccdyn.signal_safe`
(whose :func:`uninterrupted` sections it re-exports).
"""

from __future__ import annotations

import fcntl
import fnmatch
import hashlib
import json
import os
import secrets
import shutil
import socket
import time
from pathlib import Path

import numpy as np

from ccdyn import io
from ccdyn.signal_safe import defer_if_uninterrupted, uninterrupted

__all__ = ["MANIFEST", "LOCK", "RunDirError", "fingerprint", "differences", "RunDir", "ChunkStore", "read_stamped",
           "write_stamped", "foreign_entries", "written_files", "uninterrupted", "defer_if_uninterrupted"]

MANIFEST = "ccdyn-run.json"
LOCK = ".ccdyn.lock"
CONFIG = "config.json"
_OWN = (MANIFEST, LOCK, CONFIG, ".*.tmp")  # .*.tmp: an atomic write that a kill interrupted
_TMP = ".*.tmp"  # at every level
# What the library itself writes inside a run's subfolders: the chunks of a ChunkStore, the per-setting
# records of ccdyn.grid (and their weights). A script's ``outputs`` may also name nested files ("a/b_*.csv").
NESTED = {"chunks": ("chunk_*.npz",), "runs": ("*.json", "*.weights.npz")}


class RunDirError(ValueError):
    """A run directory that cannot be used as asked; the message names the directory or file."""


def fingerprint(config: dict) -> str:
    """A short hash of a config as it reads back from JSON (key order does not matter)."""
    text = json.dumps(io.as_json(config), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def differences(old, new, prefix: str = "") -> list:
    """``["name: old -> new", ...]`` for every leaf where two JSON-like configs differ (dotted names)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in list(old) + [k for k in new if k not in old]:
            name = f"{prefix}{k}"
            if k not in old or k not in new:
                out.append(f"{name}: {old.get(k, '(absent)')!r} -> {new.get(k, '(absent)')!r}")
            else:
                out += differences(old[k], new[k], name + ".")
        return out
    return [] if old == new else [f"{prefix.rstrip('.')}: {old!r} -> {new!r}"]


def _without(config: dict, ignore) -> dict:
    return {k: v for k, v in config.items() if k not in ignore}


def _read_json(path: Path, what: str):
    try:
        return io.read_json(path)
    except (OSError, ValueError) as e:
        raise RunDirError(f"{path} is not readable {what} ({e.__class__.__name__}: {e}); "
                          "delete the run or use a new --output_dir") from None


def _lock(path: Path):
    """An exclusive non-blocking flock on ``path/.ccdyn.lock``: the open fd, or None if another holds it."""
    fd = os.open(path / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def _parts_match(parts, pattern: str) -> bool:
    pat = pattern.split("/")
    return len(pat) == len(parts) and all(fnmatch.fnmatchcase(a, b) for a, b in zip(parts, pat))


def _own(parts, patterns, is_dir: bool) -> bool:
    """Whether the entry at ``parts`` (its path inside the run, split) is one the run writes: it matches a
    pattern (component by component), it is an interrupted atomic write, a file of a library subfolder
    (:data:`NESTED`) whose folder matches a pattern, or a folder on the way to a nested pattern."""
    if any(_parts_match(parts, p) for p in patterns) or fnmatch.fnmatchcase(parts[-1], _TMP):
        return not is_dir or len(parts) == 1 or any(_parts_match(parts, p) for p in patterns)
    if len(parts) == 2 and not is_dir and parts[0] in NESTED and any(_parts_match(parts[:1], p) for p in patterns):
        return any(fnmatch.fnmatchcase(parts[1], n) for n in NESTED[parts[0]])
    return is_dir and any(_parts_match(parts, "/".join(p.split("/")[:len(parts)])) for p in patterns
                          if p.count("/") >= len(parts))


def foreign_entries(path, patterns) -> list:
    """The entries under ``path`` (relative paths, at every level) that a run with output ``patterns``
    does not write; a foreign folder is named once, without its contents. Symbolic links are entries
    (never followed)."""
    path, out = Path(path), []

    def walk(d: Path, parts: tuple):
        for e in sorted(d.iterdir(), key=lambda p: p.name):
            sub, is_dir = parts + (e.name,), e.is_dir() and not e.is_symlink()
            if not _own(sub, patterns, is_dir):
                out.append("/".join(sub) + ("/" if is_dir else ""))
            elif is_dir:
                walk(e, sub)

    walk(path, ())
    return out


def written_files(path) -> list:
    """The files of a run folder other than its manifest, config, lock and interrupted writes (relative paths)."""
    path = Path(path)
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")
                  if (p.is_file() or p.is_symlink()) and p.name not in (MANIFEST, CONFIG, LOCK)
                  and not fnmatch.fnmatchcase(p.name, _TMP))


def _unreplaceable(path: Path) -> str:
    """Why a staged replacement could not swap ``path`` out and delete it (its folder or one of its folders
    read-only, immutable or on a read-only file system; ``path`` a mount point), or ""."""
    if os.path.ismount(path):
        return "it is a mount point (it cannot be moved aside)"
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return f"its folder {str(path.parent)!r} is not writable"
    for d in [path, *(p for p in path.rglob("*") if p.is_dir() and not p.is_symlink())]:
        if not os.access(d, os.W_OK | os.X_OK):
            return f"{str(d)!r} is not writable (read-only, immutable or on a read-only file system)"
    return ""


def _is_protected(path: Path) -> bool:
    """The working directory, one of its parents, the home directory or the root."""
    p, cwd = path.resolve(), Path.cwd().resolve()
    return p == cwd or p in cwd.parents or p == Path.home().resolve() or p == Path(p.anchor)


class RunDir:
    """An open run directory. ``path`` is where it lives now (it moves once, when a staged replacement
    :meth:`started`); ``config`` the config in force (stored values of ignored fields on resume);
    ``notes`` lines worth telling the user (e.g. an ignored field that kept its stored value)."""

    def __init__(self, path: Path, *, fp: str, config: dict, manifest: dict, lock_fd=None, final: Path | None = None,
                 old_lock_fd=None, created: bool = False, started: bool = False, notes=()):
        self._path, self._final = Path(path), final
        self.fingerprint, self.config, self.manifest = fp, config, manifest
        self._lock_fd, self._old_lock_fd = lock_fd, old_lock_fd
        self.created, self.is_started, self.notes = created, started, list(notes)

    @property
    def path(self) -> Path:
        return self._path

    @property
    def holds_lock(self) -> bool:
        """Whether this process holds the run's lock (it opened the run and has not finished it)."""
        return self._lock_fd is not None

    # -- opening ---------------------------------------------------------------------------------
    @classmethod
    def open(cls, path, config: dict, *, script: str, version: str, outputs=(), overwrite: bool = False,
             resume: bool = False, can_resume: bool = True, ignore=()) -> RunDir:
        """Creates, resumes or (staged) replaces the run directory ``path`` for ``config``.

        Args:
          outputs: glob patterns of the entries the script writes, matched per path component
            (``"table_*.md"``, ``"curves/*.csv"``; ``config.json``, the manifest, the lock and interrupted
            writes are always its own; the files of ``chunks`` and ``runs`` are :data:`NESTED`). Every
            level of an existing run is checked: ``overwrite`` refuses a run holding anything else.
          ignore: config keys that do not change results (e.g. ``chunk_size``): left out of the
            fingerprint; on resume they keep the stored values (said in ``notes``).
          can_resume: whether the script has ``--resume`` (the refusal suggests it only then).
        Raises:
          RunDirError naming the directory, the file or the differing field.
        """
        if resume and overwrite:
            raise RunDirError("--resume and --overwrite exclude each other")
        path, patterns = Path(path), tuple(outputs) + _OWN
        fp = fingerprint(_without(config, ignore))
        manifest = {"tool": "ccdyn", "script": script, "version": version, "fingerprint": fp, "state": "running",
                    "outputs": list(outputs), "host": socket.gethostname(), "pid": os.getpid(),
                    "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "error": None}
        try:
            with uninterrupted():
                return cls._open(path, config, fp, manifest, script, patterns, resume, overwrite, can_resume, ignore)
        except OSError as e:
            raise RunDirError(f"cannot use output_dir {str(path)!r}: {e.strerror or e} (--output_dir)") from None

    @classmethod
    def _open(cls, path, config, fp, manifest, script, patterns, resume, overwrite, can_resume, ignore):
        if path.exists() and not path.is_dir():
            raise RunDirError(f"output_dir {str(path)!r} exists and is not a directory (--output_dir)")
        if not path.exists() or not any(path.iterdir()):
            return cls._fresh(path, config, fp, manifest)
        old = cls._inspect(path, script, patterns)
        if resume:
            return cls._resume(path, config, fp, manifest, old, ignore)
        if not overwrite:
            hint = " or --resume to continue the run in it" if can_resume else ""
            raise RunDirError(f"output_dir {str(path)!r} exists and is not empty; pass --overwrite to "
                              f"replace it{hint} (--output_dir)")
        return cls._staged(path, config, fp, manifest)

    @classmethod
    def _fresh(cls, path, config, fp, manifest):
        existed = path.exists()
        path.mkdir(parents=True, exist_ok=True)
        fd = _lock(path)
        if fd is None:
            raise RunDirError(f"output_dir {str(path)!r}: another ccdyn process is writing it (--output_dir)")
        if any(p.name != LOCK for p in path.iterdir()):  # another process got in first
            os.close(fd)
            raise RunDirError(f"output_dir {str(path)!r} was filled by another process while starting (--output_dir)")
        run = cls(path, fp=fp, config=config, manifest=manifest, lock_fd=fd, created=not existed)
        run._write_start(config)
        return run

    @staticmethod
    def _inspect(path: Path, script: str, patterns) -> dict | None:
        """The manifest of an existing ccdyn run of ``script`` (None for a run from before manifests);
        RunDirError for anything else."""
        entries = sorted(p.name for p in path.iterdir())
        if MANIFEST in entries:
            old = _read_json(path / MANIFEST, "ccdyn run manifest")
            if not isinstance(old, dict) or old.get("tool") != "ccdyn":
                raise RunDirError(f"{path / MANIFEST} is not a ccdyn manifest; not touching {str(path)!r}")
            if old.get("script") != script:
                raise RunDirError(f"output_dir {str(path)!r} holds a run of {old.get('script')}, not {script} "
                                  "(--output_dir)")
            patterns = tuple(old.get("outputs", ())) + tuple(patterns)  # the old run's and the script's own
        else:
            old = None
        foreign = foreign_entries(path, patterns)
        if foreign:
            what = "holds files that ccdyn did not write" if old else "is not a ccdyn run"
            raise RunDirError(f"output_dir {str(path)!r} {what} ({', '.join(foreign[:3])}"
                              f"{', ...' if len(foreign) > 3 else ''}); not touching it (--output_dir)")
        return old

    @classmethod
    def _resume(cls, path, config, fp, manifest, old, ignore):
        fd = _lock(path)
        if fd is None:
            raise RunDirError(f"output_dir {str(path)!r}: a ccdyn run is in progress there (its lock is held); "
                              "wait for it or use another --output_dir")
        try:
            if not (path / CONFIG).exists():
                raise RunDirError(f"--resume: {path / CONFIG} is missing; not a run that can be resumed")
            stored = _read_json(path / CONFIG, "run config")
            new = io.as_json(config)
            diff = differences(_without(stored, ignore), _without(new, ignore))
            if diff:
                more = f" (and {len(diff) - 1} more)" if len(diff) > 1 else ""
                raise RunDirError(f"--resume: {path / CONFIG} was written with another configuration: {diff[0]}{more}; "
                                  "use the same flags or a new --output_dir")
        except BaseException:
            os.close(fd)
            raise
        notes = [f"{k} = {stored[k]!r} kept from the run (it does not change results)"
                 for k in ignore if k in stored and stored[k] != new.get(k)]
        merged = {**new, **{k: stored[k] for k in ignore if k in stored}}
        run = cls(path, fp=fp, config=merged, manifest={**(old or {}), **manifest}, lock_fd=fd, started=True,
                  notes=notes)
        run._write_manifest()
        return run

    @classmethod
    def _staged(cls, path, config, fp, manifest):
        if _is_protected(path):
            raise RunDirError(f"--overwrite refuses {str(path)!r}: it is the working directory, one of its "
                              "parents, the home directory or the root (--output_dir)")
        why = _unreplaceable(path)
        if why:  # found now, before the new run computes anything (it could not take the old one's place)
            raise RunDirError(f"--overwrite cannot replace {str(path)!r}: {why}; make it writable or use another "
                              "--output_dir (--output_dir)")
        old_fd = _lock(path)
        if old_fd is None:
            raise RunDirError(f"output_dir {str(path)!r}: a ccdyn run is in progress there (its lock is held); "
                              "wait for it or use another --output_dir")
        try:
            stage = path.parent / f".{path.name}.ccdyn-new-{os.getpid()}-{secrets.token_hex(3)}"
            stage.mkdir()
            fd = _lock(stage)
        except BaseException:
            os.close(old_fd)
            raise
        run = cls(stage, fp=fp, config=config, manifest=manifest, lock_fd=fd, final=path, old_lock_fd=old_fd,
                  created=True)
        run._write_start(config)
        return run

    # -- life cycle ------------------------------------------------------------------------------
    def _write_manifest(self) -> None:
        io.write_json(self._path / MANIFEST, self.manifest)

    def _write_start(self, config) -> None:
        self._write_manifest()
        io.write_json(self._path / CONFIG, config)

    def started(self) -> None:
        """The run has started cleanly: a staged replacement takes the old run's place (the old run is
        deleted only now) and the directory is no longer removed if the run fails."""
        with uninterrupted():
            self._started()

    def _started(self) -> None:
        if self.is_started:
            return
        if self._final is None:
            self.is_started = True
            return
        final, trash = self._final, self._final.parent / f".{self._final.name}.ccdyn-old-{secrets.token_hex(3)}"
        try:
            os.rename(final, trash)
        except OSError as e:  # (checked when opened; changed since): the old run stays, the new one goes
            self.release()
            shutil.rmtree(self._path, ignore_errors=True)
            self._final = None
            raise RunDirError(f"output_dir {str(final)!r} could not be replaced ({e.strerror or e}); it is kept as "
                              "it was and the new run's outputs were removed (--output_dir)") from None
        try:
            os.rename(self._path, final)
        except OSError:
            os.rename(trash, final)
            raise RunDirError(f"output_dir {str(final)!r} changed while the new run replaced it; the new run is in "
                              f"{self._path}") from None
        self.is_started = True
        self._path, self._final = final, None
        shutil.rmtree(trash, ignore_errors=True)
        os.close(self._old_lock_fd)
        self._old_lock_fd = None

    def finish(self) -> None:
        """Marks the run complete (call after its last output is written), lists its files in the
        manifest and releases the lock."""
        with uninterrupted():
            self.started()
            self.manifest.update(state="complete", finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                 files=written_files(self._path))
            self._write_manifest()
            self.release()

    def fail(self, error: str) -> None:
        """Records a failure. A run that has written an output (any file besides its manifest and
        config) has started (:meth:`started`: a staged replacement takes the old run's place): it stays,
        ``failed`` with ``error`` and its files listed in the manifest, and can be resumed or replaced.
        One that wrote nothing is removed (a replaced run stays as it was). Best effort (the disk may be
        full)."""
        with uninterrupted():
            self._fail(error)

    def _fail(self, error: str) -> None:
        try:
            if not self.is_started and written_files(self._path):
                self.started()  # a late failure keeps what was written
            if not self.is_started and self.created:
                shutil.rmtree(self._path, ignore_errors=True)
            elif not self.is_started:  # a fresh run in a directory that was there, empty: empty it again
                for name in (MANIFEST, CONFIG, "chunks", "runs", LOCK):
                    p = self._path / name
                    shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
            else:
                self.manifest.update(state="failed", error=str(error), files=written_files(self._path))
                try:
                    self._write_manifest()
                except OSError:  # a full disk: no room for a new file; the old manifest's own blocks do
                    self._overwrite_manifest()
        except (OSError, RunDirError):
            pass
        self.release()

    def _overwrite_manifest(self) -> None:
        """Writes the manifest over the old one in place (not atomic), compact and without the file list:
        truncating frees the old manifest's blocks, so this fits where a new file does not (a full disk)."""
        text = json.dumps(io.as_json({k: v for k, v in self.manifest.items() if k != "files"}), separators=(",", ":"))
        with open(self._path / MANIFEST, "r+b") as f:
            f.truncate(0)
            f.write(text.encode())
            f.flush()
            os.fsync(f.fileno())

    def release(self) -> None:
        for name in ("_lock_fd", "_old_lock_fd"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)

    def chunk_store(self) -> ChunkStore:
        """The run's :class:`ChunkStore`; its chunks are checked against this run's fingerprint."""
        return ChunkStore(self, self.fingerprint)


def write_stamped(run: RunDir, path, record: dict, arrays: dict | None = None) -> dict:
    """Writes a per-setting record of a grid script as ``<path>.json`` with the run's fingerprint (read
    back by :func:`read_stamped`), and ``arrays`` (if any) as ``<path>.weights.npz`` first; marks the run
    started. Returns the stamped record."""
    path, record = Path(path), {**record, "fingerprint": run.fingerprint}
    if arrays is not None:
        io.write_npz(path.with_name(path.name + ".weights.npz"), **arrays)
    io.write_json(path.with_name(path.name + ".json"), record)
    run.started()
    return record


def read_stamped(path, fp: str, setting=None) -> dict:
    """A per-setting record (``runs/<tag>.json`` of a grid script) written with ``"fingerprint": fp``
    and, when ``setting`` is given, filed under that setting (its ``"setting"`` field equals ``setting``
    as JSON); RunDirError naming the file if it is unreadable, belongs to a run of another configuration
    or holds another setting (e.g. a record renamed from another tag)."""
    path = Path(path)
    try:
        rec = io.read_json(path)
    except (OSError, ValueError) as e:
        raise RunDirError(f"{path} is not readable ({e.__class__.__name__}); delete it to recompute it") from None
    got = rec.get("fingerprint") if isinstance(rec, dict) else None
    if got != fp:
        raise RunDirError(f"{path} belongs to another run (fingerprint {got}, this run {fp}); "
                          "delete it to recompute it")
    if setting is not None and rec.get("setting") != io.as_json(setting):
        raise RunDirError(f"{path} holds the record of another setting ({rec.get('setting')!r}, expected "
                          f"{io.as_json(setting)!r}); delete it to recompute it")
    return rec


class ChunkStore:
    """Per-chunk results of a run under ``<run>/chunks``: written atomically (a chunk file is complete
    or absent), each stamped with the run's fingerprint, so an interrupted run resumes by skipping the
    chunks present and a chunk from another run is refused. ``run``: a :class:`RunDir` (the first
    saved chunk marks it started) or a plain directory."""

    def __init__(self, run, fp: str = ""):
        self.run, self.fingerprint = run, fp
        self.dir.mkdir(parents=True, exist_ok=True)

    @property
    def dir(self) -> Path:
        return Path(getattr(self.run, "path", self.run)) / "chunks"

    def path(self, c: int) -> Path:
        return self.dir / f"chunk_{c:06d}.npz"

    def has(self, c: int) -> bool:
        return self.path(c).exists()

    def save(self, c: int, arrays: dict) -> None:
        io.write_npz(self.path(c), **arrays, fingerprint=np.asarray(self.fingerprint))
        if isinstance(self.run, RunDir):
            self.run.started()

    def load(self, c: int) -> dict:
        path = self.path(c)
        try:
            arrays = io.read_npz(path)
        except ValueError as e:
            raise RunDirError(f"{e}; delete it to recompute that chunk") from None
        got = str(arrays.pop("fingerprint", "(none)"))
        if got != self.fingerprint:
            raise RunDirError(f"{path} belongs to another run (fingerprint {got}, this run {self.fingerprint}); "
                              "delete it to recompute that chunk")
        return arrays

    def verify(self) -> int:
        """Checks every chunk file present (readable, this run's fingerprint); returns how many."""
        files = sorted(self.dir.glob("chunk_*.npz"))
        for p in files:
            self.load(int(p.stem.split("_")[1]))
        return len(files)
