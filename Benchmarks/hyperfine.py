"""Issue #33's second harness: hyperfine, the output deleted before every run, on the root file system.

    Benchmarks/run --hyperfine            the full corpora (1 GB, 10,000 files, a 515 MB .tgz), 5 runs each
    Benchmarks/run --hyperfine --quick    the small ones, 2 runs each

`Benchmarks/run` primes the page cache, works in a folder whose earlier output it moved aside,
and reports medians. This harness is the other way a user meets the tool: a second install,
where the previous copy was just deleted (`rm -rf`, then `sync`, as hyperfine's `--prepare`),
timed by hyperfine (an untimed warm-up run each, then means, standard deviations and medians). After a deletion of 10,000 files, ext4
scans past the deleted inodes on every create: that cost is the file system's, and every tool
that creates the files pays it. The no-change check deletes nothing: 5 warm-ups, 40 runs.

Each case runs breeze and the peer the issue names in one hyperfine invocation, so they take
turns within the same minutes. Results: a table on stdout and Benchmarks/results/hyperfine[-quick].md.
"""
import argparse, datetime, json, os, platform, shutil, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
sys.path.insert(0, os.path.join(ROOT, "Benchmarks"))
from loopback import Nginx  # noqa: E402
from bench import Bench  # noqa: E402  (the same corpora as Benchmarks/run)
from machine import cpu_model  # noqa: E402


def journal(path):
    """Whether `path`'s ext4 keeps a journal: without one, ext4 skips inodes deleted in the last
    60 s on every create (`recently_deleted`), scanning past each. Measured 2026-12-05: three
    syncs of 10,000 files, each after `rm -rf` of the last, took 1.00, 2.25 and 4.34 s."""
    device = os.stat(path).st_dev
    name = os.path.basename(os.path.realpath(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}"))
    if not os.path.isdir(f"/proc/fs/ext4/{name}"):
        return "not ext4"
    journaled = any(entry.startswith(name + "-") for entry in os.listdir("/proc/fs/jbd2")) \
        if os.path.isdir("/proc/fs/jbd2") else False
    return f"ext4 on {name}, {'journaled' if journaled else 'no journal'}"


class Harness:
    def __init__(self, args):
        self.args, self.breeze = args, args.breeze
        self.work = args.work
        # On the root file system, as the runs were: no loop image of its own.
        self.out = os.path.join(self.work, "out-hyperfine")
        self.runs = 2 if args.quick else args.runs
        self.rows = []

    def hyperfine(self, name, commands, prepare=None, warmup=1, runs=None, goal=""):
        """Runs `commands` (label -> command) under one hyperfine; records mean, σ and ratio to breeze."""
        export = os.path.join(self.work, "hyperfine.json")
        # Without a shell where nothing needs one (its start would be most of a no-change check).
        argv = ["hyperfine"] + (["-N"] if prepare is None else []) + [
            "--style", "none", "--warmup", str(warmup), "--runs", str(runs or self.runs), "--export-json", export]
        if prepare:
            argv += ["--prepare", prepare]
        for label, command in commands.items():
            argv += ["--command-name", label, command]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        results = {r["command"]: r for r in json.load(open(export))["results"]}
        breeze = results["breeze"]["mean"]
        for label in commands:
            r = results[label]
            ratio = "" if label == "breeze" else f"{r['mean'] / breeze:.2f}"
            self.rows.append((name, label, r["mean"], r["stddev"] or 0, r["median"], r["user"], r["system"], ratio,
                              goal if label != "breeze" else ""))
            print(f"  {name:<32} {label:<26} {r['mean']:8.4f} s ± {r['stddev'] or 0:.4f}  {ratio}", flush=True)

    def run(self):
        bench = Bench(argparse.Namespace(quick=self.args.quick, work=self.work, breeze=self.breeze, runs=None))
        print("Corpora (generated once, shared with Benchmarks/run)...", flush=True)
        bench.corpora()
        nginx = Nginx(bench.www, os.path.join(self.work, "nginx-hyperfine"))
        b, u, o = self.breeze, nginx.url, self.out
        os.makedirs(o, exist_ok=True)
        clean = lambda *names: "rm -rf " + " ".join(f"{o}/{n} {o}/.{n}.freshair-store" for n in names) + f"; sync"
        try:
            print(f"1. One file of {bench.big_mb} MB", flush=True)
            self.hyperfine(f"cold sync, 1 × {bench.big_mb} MB", {
                "breeze": f"{b} sync {u}/{bench.big_name}/ {o}/big-breeze",
                "curl -o": f"curl -s -o {o}/big-curl.bin {u}/{bench.big_name}/big.bin",
            }, prepare=clean("big-breeze", "big-curl.bin"), goal="≥ 0.8")
            print(f"2. {bench.small_count} files of 4 KB", flush=True)
            self.hyperfine(f"cold sync, {bench.small_count} × 4 KB", {
                "breeze": f"{b} sync {u}/{bench.small_name}/ {o}/small-breeze --concurrency 16",
                "rclone copy --transfers 16": f"rclone copy :http: {o}/small-rclone --http-url {u}/{bench.small_name}/ "
                                              "--transfers 16 -q",
                # The file system's own cost: the same files from a local tar, no network, no hash.
                # On an ext4 without a journal it is most of the case (see `journal` above).
                "floor: tar -xf; sync -f": f"mkdir -p {o}/small-floor && tar -xf {bench.www}/{bench.packed_name}/"
                                           f"{bench.pack_file} -C {o}/small-floor && sync -f {o}/small-floor",
            }, prepare=clean("small-breeze", "small-rclone", "small-floor"), goal="≥ 2.5")
            print("3. No-change check", flush=True)
            subprocess.run([b, "sync", f"{u}/{bench.small_name}/", f"{o}/current"], check=True, stdout=subprocess.DEVNULL)
            etag = os.path.join(self.work, "hyperfine-etag.txt")
            subprocess.run(["curl", "-s", "--etag-save", etag, "-o", f"{o}/manifest.json",
                            f"{u}/{bench.small_name}/manifest.json"], check=True)
            self.hyperfine("no-change check", {
                "breeze": f"{b} sync {u}/{bench.small_name}/ {o}/current",
                "curl --etag-compare": f"curl -s --etag-compare {etag} -o {o}/manifest.json "
                                       f"{u}/{bench.small_name}/manifest.json",
            }, warmup=5, runs=40, goal="≥ 0.5")
            megabytes = round(bench.package_bytes / 1e6)  # as Benchmarks/run names it
            print(f"4. A {megabytes} MB .tgz package", flush=True)
            self.hyperfine(f"package, {megabytes} MB .tgz", {
                "breeze": f"{b} sync {u}/{bench.package_name} {o}/package-breeze",
                "curl + tar -xzf": f"mkdir -p {o}/package-tar && curl -s {u}/{bench.package_name} | tar -xzf - -C {o}/package-tar",
            }, prepare=clean("package-breeze", "package-tar"), goal="≥ 1.5")
        finally:
            nginx.stop()
            shutil.rmtree(o, ignore_errors=True)
        self.write()

    def write(self):
        machine = (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu_model()}), root file system"
                   f" ({journal(self.work)})")
        lines = [
            "# Issue #33's second harness (hyperfine, output deleted before each run)", "",
            f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by `Benchmarks/run --hyperfine"
            f"{' --quick' if self.args.quick else ''}` (an untimed warm-up and {self.runs} runs a case, means; the no-change"
            f" check 5 warm-ups and 40 runs), on {machine}. Ratio is the peer's mean over breeze's: above 1, breeze was faster. The goal is"
            " issue #33's, as that ratio.", "",
            "| case | tool | mean s | σ s | median s | user s | system s | ratio | goal |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for name, label, mean, sd, median, user, system, ratio, goal in self.rows:
            # Milliseconds count in the no-change check.
            t = lambda seconds: f"{seconds:.4f}" if mean < 0.1 else f"{seconds:.3f}"
            lines.append(f"| {name} | {label} | {t(mean)} | {t(sd)} | {t(median)} | {t(user)} | {t(system)} | {ratio} "
                         f"| {goal} |")
        path = os.path.join(ROOT, "Benchmarks", "results", f"hyperfine{'-quick' if self.args.quick else ''}.md")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        print(f"\nWritten to {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--breeze", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per tool (5; 2 with --quick)")
    parser.add_argument("--work", default=os.environ.get("BENCH_WORK", "/tmp/freshair-bench"))
    Harness(parser.parse_args()).run()
