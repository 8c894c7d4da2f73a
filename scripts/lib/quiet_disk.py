"""Keeping a benchmark off a file system still slowed by files deleted just before it.

For up to five minutes after files are deleted, ext4 skips their inodes and scans past them
on every create (`recently_deleted` in fs/ext4/ialloc.c: 60 s, or 300 s while the inode table's
block is dirty). On 2026-11-28, runs started within minutes of a benchmark emptying its trash
had every tool's cold syncs of many files 1.3-5.8x slower, rclone's as much as breeze's. A
benchmark therefore waits until five minutes have passed since the last one deleted its trash.
Deletions by anything else (tests, a hand-run `rm -rf`) are not seen: leave five minutes.
"""
import os, time

MARK = "/tmp/freshair-benchmarks-deleted"
SETTLE_SECONDS = 300


def deleted():
    """Records that a benchmark has just deleted many files."""
    with open(MARK, "w"):
        pass


def wait_after_deletes():
    """Waits until five minutes have passed since a benchmark last deleted many files."""
    try:
        left = os.path.getmtime(MARK) + SETTLE_SECONDS - time.time()
    except FileNotFoundError:
        return
    if left > 0:
        print(f"Waiting {left:.0f} s: files deleted {SETTLE_SECONDS - left:.0f} s ago still slow every create on ext4", flush=True)
        time.sleep(left)
