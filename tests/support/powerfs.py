"""A FUSE file system that forgets every byte not flushed when its process dies: a power cut, on demand.

Modelled on Jepsen's LazyFS (a FUSE file system that keeps unsynced writes in a cache and drops them on a
simulated crash).  A passthrough onto a backing folder, except for file *data*:

* every ``write`` and ``truncate`` lands in this process's memory (a copy of the file, per backing inode, so
  it follows renames and hard links), and reads see it;
* ``fsync``/``fdatasync`` of a file writes its copy to the backing file: only then does it survive;
* metadata (create, mkdir, rename, link, unlink, chmod) goes to the backing folder at once, as a journalling
  file system's metadata would; so a file renamed into place without a flush survives as a name whose data
  is gone (empty, or its old bytes): ext4's delayed-allocation failure, the one ``fsync``-before-rename
  guards against;
* ``SIGKILL`` to this process is the power cut: the memory goes, the backing folder is "the disk after the
  cut" (then ``fusermount3 -u -z`` the dead mount, and mount again).

Looking up the name ``/.powerfs-sync`` flushes everything (a ``sync``), for a clean stop.  Locks (``flock``,
``fcntl``) are the kernel's own local ones.  Run as ``python powerfs.py BACKING MOUNTPOINT`` (foreground;
needs /dev/fuse and ``fusermount3``, Debian's ``fuse3``, and the ``mfusepy`` bindings of the dev extras).
"""

from __future__ import annotations

import errno
import os
import sys
import threading

import mfusepy as fuse

SYNC_NAME = "/.powerfs-sync"


def _shared_memory(path: str | None) -> bool:
    """SQLite's ``-shm`` file: memory shared by its connections through ``mmap``, never data (SQLite rebuilds it
    after a crash whatever it holds), so it passes straight through: an overlay under a shared mapping made
    SQLite report I/O errors that no real disk would."""
    return bool(path) and path.endswith("-shm")


class PowerLossFS(fuse.Operations):
    use_ns = True

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self._mutex = threading.RLock()
        self.dirty: dict[tuple[int, int], bytearray] = {}  # backing (dev, ino) -> the file's unflushed bytes
        self.open_count: dict[tuple[int, int], int] = {}

    # ------------------------------------------------------------ helpers
    def _full(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    @staticmethod
    def _key(st: os.stat_result) -> tuple[int, int]:
        return (st.st_dev, st.st_ino)

    def _copy(self, fd: int) -> tuple[tuple[int, int], bytearray]:
        """The file's bytes as this process sees them (made dirty: the caller changes them)."""
        key = self._key(os.fstat(fd))
        data = self.dirty.get(key)
        if data is None:
            size = os.fstat(fd).st_size
            data = self.dirty[key] = bytearray(os.pread(fd, size, 0) if size else b"")
        return key, data

    def _flush_fd(self, fd: int) -> None:
        key = self._key(os.fstat(fd))
        data = self.dirty.pop(key, None)
        if data is not None:
            os.ftruncate(fd, len(data))
            os.pwrite(fd, bytes(data), 0)

    def flush_all(self) -> None:
        """``sync``: every dirty file to the backing folder (found by inode under the root)."""
        with self._mutex:
            if not self.dirty:
                return
            for folder, _dirs, files in os.walk(self.root):
                for name in files:
                    path = os.path.join(folder, name)
                    try:
                        st = os.lstat(path)
                    except FileNotFoundError:
                        continue
                    if self._key(st) in self.dirty:
                        fd = os.open(path, os.O_WRONLY)
                        try:
                            self._flush_fd(fd)
                        finally:
                            os.close(fd)
            self.dirty.clear()  # what is left belongs to unlinked files

    def _forget(self, path: str) -> None:
        """A name is going away: drop its unflushed bytes if it was the inode's last name and none has it open."""
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return
        key = self._key(st)
        if st.st_nlink <= 1 and not self.open_count.get(key):
            self.dirty.pop(key, None)

    # ------------------------------------------------------------ metadata: straight to the backing folder
    def access(self, path, amode):
        if not os.access(self._full(path), amode):
            raise fuse.FuseOSError(errno.EACCES)
        return 0

    def chmod(self, path, mode):
        os.chmod(self._full(path), mode)
        return 0

    def chown(self, path, uid, gid):
        os.chown(self._full(path), uid, gid)
        return 0

    def getattr(self, path, fh=None):
        if path == SYNC_NAME:
            self.flush_all()
            raise fuse.FuseOSError(errno.ENOENT)
        with self._mutex:
            st = os.fstat(fh) if fh is not None else os.lstat(self._full(path))
            attrs = {
                key: getattr(st, key)
                for key in ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_ino", "st_blocks")
            }
            for key in ("st_atime", "st_mtime", "st_ctime"):
                attrs[key] = getattr(st, f"{key}_ns")
            data = self.dirty.get(self._key(st))
            if data is not None:
                attrs["st_size"] = len(data)
                attrs["st_blocks"] = (len(data) + 511) // 512
            return attrs

    def readdir(self, path, fh):
        return [".", "..", *os.listdir(self._full(path))]

    def readlink(self, path):
        return os.readlink(self._full(path))

    def mkdir(self, path, mode):
        os.mkdir(self._full(path), mode)
        return 0

    def rmdir(self, path):
        os.rmdir(self._full(path))
        return 0

    def symlink(self, target, source):
        os.symlink(source, self._full(target))
        return 0

    def link(self, target, source):
        os.link(self._full(source), self._full(target))
        return 0

    def unlink(self, path):
        with self._mutex:
            self._forget(self._full(path))
            os.unlink(self._full(path))
        return 0

    def rename(self, old, new):
        with self._mutex:
            self._forget(self._full(new))
            os.rename(self._full(old), self._full(new))
        return 0

    def utimens(self, path, times=None):
        if times is None:
            os.utime(self._full(path))
        else:
            os.utime(self._full(path), ns=times)
        return 0

    def statfs(self, path):
        sv = os.statvfs(self._full(path))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files", "f_flag")
        return {key: getattr(sv, key) for key in (*keys, "f_frsize", "f_namemax")}

    # ------------------------------------------------------------ files: data kept here until flushed
    def open(self, path, flags):
        with self._mutex:
            fd = os.open(self._full(path), os.O_RDWR)  # always: a write's first copy reads the file (root may)
            return self._opened(fd, flags)

    def create(self, path, mode, fi=None):
        with self._mutex:
            flags = os.O_RDWR | os.O_CREAT | os.O_EXCL
            try:
                fd = os.open(self._full(path), flags, mode)
            except FileExistsError:  # another thread made it a moment ago: open it as it is
                fd = os.open(self._full(path), os.O_RDWR)
            return self._opened(fd, 0)

    def _opened(self, fd: int, flags: int) -> int:
        key = self._key(os.fstat(fd))
        self.open_count[key] = self.open_count.get(key, 0) + 1
        if flags & os.O_TRUNC:
            _, data = self._copy(fd)
            del data[:]
        return fd

    def read(self, path, size, offset, fh):
        with self._mutex:
            data = self.dirty.get(self._key(os.fstat(fh)))
            if data is not None:
                return bytes(data[offset : offset + size])
            return os.pread(fh, size, offset)

    def write(self, path, data, offset, fh):
        if _shared_memory(path):
            return os.pwrite(fh, data, offset)
        with self._mutex:
            _, copy = self._copy(fh)
            end = offset + len(data)
            if len(copy) < offset:
                copy.extend(b"\0" * (offset - len(copy)))
            copy[offset:end] = data
            return len(data)

    def truncate(self, path, length, fh=None):
        if _shared_memory(path):
            os.truncate(self._full(path), length)
            return 0
        with self._mutex:
            fd = fh if fh is not None else os.open(self._full(path), os.O_RDWR)
            try:
                _, copy = self._copy(fd)
                if length < len(copy):
                    del copy[length:]
                else:
                    copy.extend(b"\0" * (length - len(copy)))
            finally:
                if fh is None:
                    os.close(fd)
        return 0

    def fsync(self, path, datasync, fh):
        with self._mutex:
            self._flush_fd(fh)
        return 0

    def fsyncdir(self, path, datasync, fh):
        return 0  # names reach the backing folder at once

    def flush(self, path, fh):
        return 0  # close() flushes nothing to the disk

    def release(self, path, fh):
        with self._mutex:
            st = os.fstat(fh)
            key = self._key(st)
            left = self.open_count.get(key, 1) - 1
            if left:
                self.open_count[key] = left
            else:
                self.open_count.pop(key, None)
                if st.st_nlink == 0:
                    self.dirty.pop(key, None)
            os.close(fh)
        return 0


def main(argv: list[str]) -> int:
    backing, mountpoint = argv
    fs = PowerLossFS(backing)
    # kernel_cache: the page cache is not dropped at each open (SQLite maps its -shm file; all access is through
    # this one mount, so the cache stays coherent).
    fuse.FUSE(fs, mountpoint, foreground=True, nothreads=False, fsname="powerfs", kernel_cache=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
