"""The machine's own limits: the floor under each benchmark case, which no sync can go below.

    Benchmarks/run --limits            1 GB, 10,000 files, the full package's content
    Benchmarks/run --limits --quick    128 MB, 2,000 files, 64 MB

Each figure is the median of --runs runs (5) of a plain tool doing one part of a sync alone:
- moving bytes over loopback HTTP: `curl -o /dev/null` from nginx on 127.0.0.1;
- SHA-256 on one core: `openssl speed -evp sha256` on 16 KB blocks, and `sha256sum`;
- writing: into the page cache (`dd`), and durably (`dd conv=fsync`);
- creating small files: GNU `tar -xf` of N files of 4 KB, then `sync -f` for the durable rate;
- inflating on one core: zlib (`pigz -dc`: pigz inflates with zlib, on one thread) and libdeflate
  (`libdeflate-gunzip`, which needs the whole file and its whole output in memory: no streaming).
A sync of one large file cannot beat the slowest of loopback, hashing and durable writing (they
overlap); one of many small files cannot beat the create rate. Results: Benchmarks/results/limits.md.
"""
import argparse, datetime, os, platform, re, shutil, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from loopback import Nginx  # noqa: E402
from corpora import small_files  # noqa: E402
from machine import cpu_model  # noqa: E402


def sh(command):
    return subprocess.run(command, shell=True, check=True, capture_output=True, text=True).stdout


def seconds(command, runs, before=None):
    """The median wall time of `command` over `runs` runs; `before` runs untimed before each."""
    samples = []
    for _ in range(runs):
        if before:
            sh(before)
        os.sync()
        start = time.perf_counter()
        sh(command)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), min(samples), max(samples)


class Limits:
    def __init__(self, args):
        self.args, self.runs = args, args.runs
        self.work = args.work
        self.www, self.out = os.path.join(self.work, "www"), os.path.join(self.work, "out")
        self.big_mb = 128 if args.quick else 1024
        self.count = 2000 if args.quick else 10000
        self.package_mb = 64 if args.quick else 640
        self.rows = []

    def corpora(self):
        os.makedirs(self.www, exist_ok=True)
        self.big = os.path.join(self.www, f"big-{self.big_mb}.bin")
        if not os.path.exists(self.big) or os.path.getsize(self.big) != self.big_mb << 20:
            sh(f"head -c {self.big_mb << 20} /dev/urandom > {self.big}")
        self.small_tar = os.path.join(self.work, f"small-{self.count}.tar")
        if not os.path.exists(self.small_tar):
            source = os.path.join(self.work, "small-src")
            shutil.rmtree(source, ignore_errors=True)
            small_files(source, self.count, 100, seed=self.count)
            sh(f"tar -cf {self.small_tar} -C {source} .")
            shutil.rmtree(source)
        # Text-like content, as in the benchmark's package: gzip has work to do.
        self.package = os.path.join(self.work, f"package-{self.package_mb}.tgz")
        if not os.path.exists(self.package):
            sh(f"head -c {self.package_mb * 3 << 18} /dev/urandom | base64 -w 100 | gzip -6 > {self.package}")

    def row(self, what, tool, amount, unit, command, before=None):
        median, fastest, slowest = seconds(command, self.runs, before)
        rate = amount / median
        self.rows.append((what, tool, rate, unit, median, fastest, slowest))
        print(f"  {what:<34} {tool:<40} {rate:10.0f} {unit}  ({median:.3f} s)", flush=True)

    def run(self):
        self.corpora()
        mb = self.big_mb
        nginx = Nginx(self.www, os.path.join(self.work, "nginx"))
        try:
            sh(f"cat {self.big} > /dev/null")
            self.row("loopback HTTP", "curl -o /dev/null", mb, "MB/s", f"curl -s -o /dev/null {nginx.url}/{os.path.basename(self.big)}")
        finally:
            nginx.stop()
        speed = sh("openssl speed -evp sha256 -bytes 16384 -seconds 2 2>/dev/null | tail -1")
        rate = float(speed.split()[-1].rstrip("k")) * 1000 / 1e6  # openssl reports 1000s of bytes per second
        self.rows.append(("SHA-256, one core", "openssl speed -evp sha256 (16 KB)", rate, "MB/s", None, None, None))
        print(f"  {'SHA-256, one core':<34} {'openssl speed -evp sha256 (16 KB)':<40} {rate:10.0f} MB/s", flush=True)
        self.row("SHA-256, one core", "sha256sum", mb, "MB/s", f"sha256sum {self.big}")
        os.makedirs(self.out, exist_ok=True)
        target = os.path.join(self.out, "written.bin")
        clear = f"rm -f {target}"
        self.row("write into the page cache", "dd bs=1M", mb, "MB/s", f"dd if={self.big} of={target} bs=1M 2>/dev/null", clear)
        self.row("durable write", "dd bs=1M conv=fsync", mb, "MB/s", f"dd if={self.big} of={target} bs=1M conv=fsync 2>/dev/null", clear)
        sh(clear)
        files, trash = os.path.join(self.out, "files"), os.path.join(self.work, "trash")
        os.makedirs(trash, exist_ok=True)
        # Earlier output is moved aside, not deleted: ext4 scans past inodes deleted in the last
        # minute on every create, which would slow the next run (see BENCHMARKS.md).
        fresh = (f"if [ -e {files} ]; then mv {files} {trash}/$(date +%s%N); fi && mkdir -p {files} "
                 f"&& cat {self.small_tar} > /dev/null")
        self.row(f"create {self.count} × 4 KB", "tar -xf", self.count, "files/s", f"tar -xf {self.small_tar} -C {files}", fresh)
        self.row(f"create {self.count} × 4 KB, durable", "tar -xf; sync -f", self.count, "files/s",
                 f"tar -xf {self.small_tar} -C {files} && sync -f {files}", fresh)
        shutil.rmtree(trash, ignore_errors=True)
        shutil.rmtree(files, ignore_errors=True)
        unpacked = int(sh(f"gzip -dc {self.package} | wc -c")) / 1e6
        self.row("inflate, one core (output)", "zlib: pigz -dc -p 1", unpacked, "MB/s", f"pigz -dc -p 1 {self.package} > /dev/null")
        self.row("inflate, one core (output)", "libdeflate-gunzip (whole file in memory)", unpacked, "MB/s",
                 f"libdeflate-gunzip -c {self.package} > /dev/null")
        self.report()

    def report(self):
        cpu = cpu_model()
        when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        lines = [f"Measured {when} by `Benchmarks/run --limits{' --quick' if self.args.quick else ''}` ({self.runs} runs, median; "
                 f"fastest and slowest beside it), on {platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}).", "",
                 "| what | tool | rate | median s | fastest | slowest |", "| --- | --- | ---: | ---: | ---: | ---: |"]
        for what, tool, rate, unit, median, fastest, slowest in self.rows:
            timing = " | |" if median is None else f"{median:.3f} | {fastest:.3f} | {slowest:.3f} |"
            lines.append(f"| {what} | {tool} | {rate:,.0f} {unit} | {timing}")
        table = "\n".join(lines)
        print("\n" + table)
        results = os.path.join(ROOT, "Benchmarks", "results")
        name = "limits-quick.md" if self.args.quick else "limits.md"
        with open(os.path.join(results, name), "w") as f:
            f.write(table + "\n")
        print(f"\nWritten to Benchmarks/results/{name}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--work", default="/tmp/freshair-limits")
    Limits(parser.parse_args()).run()
