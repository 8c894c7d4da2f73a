"""An ext4 file system of its own, with a journal, for a benchmark's outputs
(Benchmarks/delta.py, Benchmarks/bench.py): the same file system for every tool, made fresh
for each run, whatever the machine's root file system is."""
import os, shutil, subprocess, sys


class JournaledFilesystem:
    """The work folder on an ext4 file system of its own, with a journal, as Linux makes one by
    default: a sparse image on a loop device (direct I/O, so its writes reach the disk once).

    This VM's root file system is ext4 *without* a journal, and there the kernel passes over, on
    every file it creates, each inode of the group deleted in the last 60 s (300 s while its inode
    table block is dirty): ext4's `recently_deleted()`, which only runs without a journal. A step
    that creates 301 files right after the set-up deleted the previous run's device (and the
    previous update's garbage) paid for it by how many inodes had just been deleted: 22% of one
    breeze package update's samples were in `recently_deleted()`. With a journal that check is
    off, for every tool alike, and unmounting deletes everything at once (one image, no inodes
    left behind on the root file system to slow the next run).
    """

    def __init__(self, work, gigabytes):
        self.work = work
        self.image = work.rstrip("/") + ".img"
        self.device = None
        self.unmount()  # what a killed run left
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        try:
            if os.geteuid() != 0:
                raise RuntimeError("mounting needs root")
            subprocess.run(["truncate", "-s", f"{gigabytes}G", self.image], check=True)
            subprocess.run(["mkfs.ext4", "-q", "-F", self.image], check=True, capture_output=True)
            self.device = subprocess.run(["losetup", "--direct-io=on", "-f", "--show", self.image], check=True,
                                         capture_output=True, text=True).stdout.strip()
            subprocess.run(["mount", "-o", "discard", self.device, work], check=True, capture_output=True)
            self.description = f"a journaled ext4 of its own ({gigabytes} GB image on {self.device}, direct I/O)"
        except (OSError, RuntimeError, subprocess.CalledProcessError) as error:
            detail = error.stderr if getattr(error, "stderr", None) else error
            print(f"{os.path.basename(sys.argv[0])}: no journaled file system ({str(detail).strip()}); running in {work} as it is",
                  file=sys.stderr)
            self.unmount()
            os.makedirs(work, exist_ok=True)
            self.description = f"{work} as it is (the journaled file system could not be made)"

    def unmount(self):
        if os.path.ismount(self.work):
            subprocess.run(["umount", self.work], check=True)
        if os.path.exists(self.image):
            attached = subprocess.run(["losetup", "-j", self.image], capture_output=True, text=True).stdout
            for line in attached.splitlines():
                subprocess.run(["losetup", "-d", line.split(":")[0]])
            os.remove(self.image)


def for_outputs(work, out, in_place, gigabytes=48):
    """The journaled file system a benchmark's tools write their outputs to, made in
    `work`/disk, and the words its results use for where they wrote: `(filesystem, where)`, the
    file system `None` with `--in-place` or when it cannot be made (the outputs then go to `out`
    as it is). The caller unmounts it at the end."""
    filesystem = None if in_place else JournaledFilesystem(os.path.join(work, "disk"), gigabytes)
    if filesystem and filesystem.device:
        return filesystem, filesystem.description
    return None, f"{out} as it is" + ("" if in_place else " (no journaled file system could be made)")
