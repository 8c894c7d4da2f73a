#!/usr/bin/env python3
"""Runs a command as a child subreaper and fails when it leaves processes running.

    python3 scripts/lib/subreaper.py COMMAND [ARG ...]
    python3 scripts/lib/subreaper.py --self-test

Linux's PR_SET_CHILD_SUBREAPER makes this process the parent of every orphan the command leaves
(a server a test started and never stopped, a daemon that forked away), instead of init. So only
the command's own descendants are judged: a `breeze serve` started in another terminal during
the run is not this run's business. Once the command ends, orphans that exited are reaped and
any still running are listed on stderr, killed, and make the exit status 1; otherwise the
command's own status is returned.
"""
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f"subreaper: prctl(PR_SET_CHILD_SUBREAPER) failed: {os.strerror(ctypes.get_errno())}")


def reap_exited():
    """Collects every child that has exited (orphans handed to us end as our zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def running_children():
    """(pid, command line) of every live process whose parent is this one."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                # The command name is in parentheses and may hold spaces: split after it.
                fields = stat.read().rsplit(")", 1)[1].split()
            if int(fields[1]) != me or fields[0] == "Z":
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                args = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        found.append((int(entry), args))
    return found


def run(command):
    become_subreaper()
    child = subprocess.Popen(command)
    # Forward an interrupt or termination to the command rather than dying before it.
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda received, _: child.send_signal(received))
    status = child.wait()
    # A server stopped by the last test may take a moment to go.
    deadline = time.monotonic() + 2
    while True:
        reap_exited()
        left = running_children()
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if left:
        print("scripts/test: the tests left these processes running (now killed):", file=sys.stderr)
        for pid, args in left:
            print(f"  {pid} {args}", file=sys.stderr)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        reap_exited()
        return 1
    return status if status >= 0 else 128 - status


def self_test():
    """An orphan of the command is caught; a process started beside it is not."""
    here = os.path.abspath(__file__)
    beside = subprocess.Popen(["sleep", "30"])
    try:
        clean = subprocess.run([sys.executable, here, "sh", "-c", "exit 3"], capture_output=True)
        assert clean.returncode == 3, f"the command's status was not kept: {clean.returncode}"
        orphaning = subprocess.run(
            [sys.executable, here, "sh", "-c", "sleep 30 & echo $! > /dev/null; exit 0"],
            capture_output=True,
            text=True,
        )
        assert orphaning.returncode == 1, f"an orphan went unnoticed: {orphaning.returncode}"
        assert "sleep 30" in orphaning.stderr, orphaning.stderr
        assert beside.poll() is None, "a process started beside the command was killed"
    finally:
        beside.kill()
        beside.wait()
    print("subreaper: self-test passed (an orphan caught, a process beside it left alone)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(run(sys.argv[1:]))
