#!/usr/bin/env python3
"""Peak memory of `breeze sync` against manifest trees shaped to cost memory (docs/SECURITY.md).

    python3 Benchmarks/hostile-memory.py --breeze PATH [--entries 1000000] [--legit 200000]

Each case is a bundle in a folder of its own, synced from a file:// URL (no server: only the
client's memory is measured). The peak resident set size is the kernel's, as GNU time reports it. The
cases, from issue #32:
  - entries: one root manifest of N tiny entries (`{"filename":"f0000001"}`), over the entries cap;
  - legit: a root of M entries with SHA-256 digests, under the cap: what a real large bundle costs;
  - tree: a root and two child manifests of 1.3 million tiny entries each (62 MB in all, under the
    64 MiB tree cap and each under the 32 MiB document cap);
  - children: a root and eight child manifests of 31 MB each (loaded 8 at a time before the tree
    budget was claimed per load).
Prints one line per case: the peak RSS, the exit status, and the first line breeze printed.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile


def write_manifest(path, entries):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as out:
        out.write("[")
        out.write(",".join(entries))
        out.write("]")
    return os.path.getsize(path)


def tiny(count, prefix="f"):
    return ('{"filename":"%s%07d"}' % (prefix, index) for index in range(count))


def child_entry(name, path):
    digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
    return json.dumps({"filename": name + ".freshair/manifest.json", "sha": digest})


def build(root, case, args):
    bundle = os.path.join(root, case, "B.freshair")
    if case == "entries":
        size = write_manifest(os.path.join(bundle, "manifest.json"), tiny(args.entries))
        return bundle, "%d entries, %.0f MB" % (args.entries, size / 1e6)
    if case == "legit":
        digest = "ab" * 32
        entries = ('{"filename":"assets/file-%07d.png","sha":"%s","size":4096}' % (i, digest) for i in range(args.legit))
        size = write_manifest(os.path.join(bundle, "manifest.json"), entries)
        return bundle, "%d entries with digests, %.0f MB" % (args.legit, size / 1e6)
    if case == "tree":
        children, total = [], 0
        for name, prefix in (("C0", "a"), ("C1", "b")):
            path = os.path.join(bundle, name + ".freshair", "manifest.json")
            total += write_manifest(path, tiny(1_300_000, prefix=prefix))
            children.append(child_entry(name, path))
        total += write_manifest(os.path.join(bundle, "manifest.json"), children)
        return bundle, "root + 2 children, 2.6 million entries, %.0f MB" % (total / 1e6)
    if case == "children":
        children, total = [], 0
        padding = " " * (31 << 20)
        for index in range(8):
            name = "C%d" % index
            path = os.path.join(bundle, name + ".freshair", "manifest.json")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as out:
                out.write("[" + padding + "]")
            total += os.path.getsize(path)
            children.append(child_entry(name, path))
        total += write_manifest(os.path.join(bundle, "manifest.json"), children)
        return bundle, "root + 8 children of 31 MB, %.0f MB" % (total / 1e6)
    raise ValueError(case)


def peak(command):
    """Runs `command` under GNU time: its peak RSS in bytes, exit status and first line.

    Not `os.wait4` on a child of this process: Linux carries a process's peak RSS across
    `fork` and `exec`, so a child of a Python holding a 1,000,000-entry manifest it built reports
    the larger of the Python's peak and its own (every case read 132 or 165 MB, whatever the
    release build did)."""
    with tempfile.NamedTemporaryFile("r") as stats:
        process = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", stats.name] + command,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        rss_kb = int(stats.read().strip().splitlines()[-1])
    output = process.stdout.decode(errors="replace")
    return rss_kb * 1024, process.returncode, output.strip().splitlines()[:1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--breeze", required=True)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--legit", type=int, default=200_000)
    parser.add_argument("--cases", default="entries,legit,tree,children")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="hostile-memory-")
    try:
        print("| case | shape | peak RSS | exit | breeze said |")
        print("| --- | --- | ---: | ---: | --- |")
        for case in args.cases.split(","):
            bundle, shape = build(root, case, args)
            device = os.path.join(root, case, "device")
            rss, status, said = peak([args.breeze, "sync", "file://" + bundle + "/", device, "--attempts", "1"])
            print("| %s | %s | %.0f MB | %d | %s |" % (case, shape, rss / 1e6, status, (said or [""])[0][:160]))
            sys.stdout.flush()
            shutil.rmtree(os.path.join(root, case))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
