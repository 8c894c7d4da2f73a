"""The cost curve: how sync time, CPU and peak memory grow with the file count and the file size.

    Benchmarks/run --scale            1,000, 10,000 and 100,000 files of 4 KB; one file of 64 MB, 1 GB and 4 GB
    Benchmarks/run --scale --quick    500, 2,000 and 8,000 files; 16, 64 and 256 MB

Beside each breeze run, in the same run and taking turns: `rclone copy --transfers 16` for the
files, `curl -o` for the large file, both from nginx on 127.0.0.1. Each point is the median of
`--runs` runs (3; 1 with --quick) of a cold sync into an empty folder; peak RSS is the largest of
them. The "update" axis is the everyday case of a large bundle: ten of its files changed, synced
into a folder that has the rest (each run is set back to the old content first, untimed). The
"pack" axis is the same cold sync from the same files with a pack beside the manifest
(`breeze generate --pack`), rclone fetching them one by one as ever. The "resume" axis is a
sync killed after it verified every file, before its switch, run again: each run first syncs
the bundle (untimed) and removes the live link, so that the timed run finds the whole version
among the interrupted work and links every file from there (no peer does this). Every tool
writes to an ext4 of its own, with a journal, made for the run (scripts/lib/journaled_fs.py, as
`Benchmarks/run` and `--delta` do); `--in-place` writes to `--work` as it is, after waiting until
five minutes have passed since a benchmark last deleted its trash (scripts/lib/quiet_disk.py).
Times are the wall clock around each command (GNU time's own is to the hundredth of a second,
coarser than a no-change check); CPU and peak RSS come from GNU time. `--report-only` writes the tables and chart again from the saved scale.json. The growth exponent is the slope of a least-squares line through the points on log-log axes:
1 grows in proportion, 0 does not grow. Results: Benchmarks/results/scale.md, scale.json, scale.png.
"""
import argparse, datetime, json, math, os, shutil, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from loopback import Nginx  # noqa: E402
from corpora import small_files  # noqa: E402
from quiet_disk import deleted, wait_after_deletes  # noqa: E402
from journaled_fs import for_outputs  # noqa: E402
from page_cache import forget, start_empty  # noqa: E402


def sh(command):
    subprocess.run(command, shell=True, check=True)


def timed(command, stats):
    """Runs `command` under GNU time: (wall seconds, user + system CPU seconds, peak RSS in MB).
    The wall clock is this script's: GNU time gives it in hundredths of a second."""
    start = time.perf_counter()
    subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", stats, "/bin/sh", "-c", command], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    user, system, rss = open(stats).read().strip().splitlines()[-1].split()
    return wall, float(user) + float(system), int(rss) / 1024


def exponent(xs, ys):
    """The slope of log y on log x: how y grows with x."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = statistics.mean(lx), statistics.mean(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


class Scale:
    def __init__(self, args):
        self.args, self.breeze, self.work = args, args.breeze, args.work
        self.www, self.out = os.path.join(self.work, "www"), os.path.join(self.work, "out")
        self.stats = os.path.join(self.work, "time.txt")
        self.counts = [500, 2000, 8000] if args.quick else [1000, 10000, 100000]
        self.sizes = [16, 64, 256] if args.quick else [64, 1024, 4096]
        self.runs = 1 if args.quick else args.runs
        self.points = []

    def corpora(self):
        for count in self.counts:
            folder = os.path.join(self.www, f"files-{count}")
            if not os.path.exists(os.path.join(folder, ".ready")):
                shutil.rmtree(folder, ignore_errors=True)
                small_files(folder, count, max(1, count // 100), seed=count, name_digits=6, folder_digits=4)
                sh(f"{self.breeze} generate {folder} > /dev/null")
                open(os.path.join(folder, ".ready"), "w").close()
            self.ten_changed(folder, f"{folder}-ten")
            # The same files with a pack beside their manifest (`breeze generate --pack`).
            packed = f"{folder}-pack"
            if not os.path.exists(os.path.join(packed, ".ready")):
                shutil.rmtree(packed, ignore_errors=True)
                shutil.copytree(folder, packed, ignore=shutil.ignore_patterns(".ready"))
                sh(f"{self.breeze} generate {packed} --pack > /dev/null")
                open(os.path.join(packed, ".ready"), "w").close()
        for mb in self.sizes:
            folder = os.path.join(self.www, f"size-{mb}")
            if not os.path.exists(os.path.join(folder, ".ready")):
                shutil.rmtree(folder, ignore_errors=True)
                os.makedirs(folder)
                sh(f"head -c {mb << 20} /dev/urandom > {folder}/big.bin && {self.breeze} generate {folder} > /dev/null")
                open(os.path.join(folder, ".ready"), "w").close()

    def ten_changed(self, folder, changed):
        """`folder` with ten of its files (spread over it) rewritten and its manifest generated
        again; the other files are hard links to the originals."""
        if os.path.exists(os.path.join(changed, ".ready")):
            return
        shutil.rmtree(changed, ignore_errors=True)
        sh(f"cp -al {folder} {changed}")
        for name in ("manifest.json", ".ready"):
            os.unlink(os.path.join(changed, name))
        files = sorted(os.path.join(d, f) for d, _, names in os.walk(changed) for f in names)
        for path in files[:: max(1, len(files) // 10)][:10]:
            size = os.path.getsize(path)
            os.unlink(path)  # a hard link: the original keeps its bytes
            with open(path, "wb") as out:
                out.write(os.urandom(size))
        sh(f"{self.breeze} generate {changed} > /dev/null")
        open(os.path.join(changed, ".ready"), "w").close()

    def measure(self, axis, x, tools, corpus):
        """Runs every tool `runs` times, taking turns, each into an empty folder (or, for a tool
        given a third command, after that command, untimed); records medians."""
        sh(f"find {corpus} -type f -exec cat {{}} + > /dev/null")  # every tool finds it in the page cache
        samples = {label: [] for label in tools}
        for _ in range(self.runs):
            for label, (command, target, *prepare) in tools.items():
                if prepare:
                    sh(prepare[0])
                else:
                    self.clean(target)
                os.sync()  # no tool pays for another's dirty pages
                samples[label].append(timed(command, self.stats))
        for label, runs in samples.items():
            point = {"axis": axis, "x": x, "tool": label, "seconds": statistics.median(r[0] for r in runs),
                     "spread": [min(r[0] for r in runs), max(r[0] for r in runs)],
                     "cpu": statistics.median(r[1] for r in runs), "rss": max(r[2] for r in runs), "where": self.where}
            self.points.append(point)
            print(f"  {axis} {x:>7}  {label:<24} {point['seconds']:7.3f} s  cpu {point['cpu']:6.2f} s  {point['rss']:7.1f} MB", flush=True)

    def clean(self, target):
        """Moves a tool's earlier output (and breeze's store beside it) to the trash, emptied
        after the run: ext4 scans past inodes deleted within the last minute on every create, so
        deleting 100,000 files right before a run would slow whichever tool comes next. A large
        file is deleted at once instead: one inode costs nothing to delete, and the trash would
        hold every run's 4 GB until the end (a full disk failed the 4 GB point twice, curl's
        exit 23)."""
        folder, name = os.path.split(target)
        for path in (target, os.path.join(folder, f".{name}.freshair-store")):
            if os.path.lexists(path):
                if self.deletes_outputs:
                    shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
                    continue
                self.trashed += 1
                os.rename(path, os.path.join(self.trash, str(self.trashed)))
                forget(os.path.join(self.trash, str(self.trashed)))  # its pages would slow the next tool's writes

    def check_space(self, mb):
        """Stops with what to do when the disk cannot hold a point of `mb` MB: breeze's version
        and curl's copy side by side, and a margin."""
        # The journaled file system is a sparse image on the disk under --work: both must have room.
        free = min(shutil.disk_usage(self.work).free, shutil.disk_usage(self.out).free) >> 20
        needed = 2 * mb + 1024
        if free < needed:
            sys.exit(f"Benchmarks/run --scale: the {mb} MB point needs {needed} MB free in {self.work}, "
                     f"and {free} MB are; free some space (or pass --work on a larger disk) and run it again.")

    def run(self):
        self.trashed, self.deletes_outputs = 0, False
        print(f"Corpora in {self.www} ...", flush=True)
        self.corpora()
        # Every tool writes to an ext4 of its own, with a journal, made for this run (unless
        # --in-place): on a root file system without one, each create scans the inodes deleted in
        # the last minutes, and a point measured the deletions before it as much as the tools
        # (see JournaledFilesystem). Unmounting deletes it all at once.
        filesystem, self.where = for_outputs(self.work, self.out, self.args.in_place)
        self.journaled = filesystem is not None
        for leftover in (os.path.join(self.work, "trash"), self.out):  # a killed run's
            if os.path.exists(leftover):
                shutil.rmtree(leftover)
                deleted()
        if self.journaled:
            self.out = os.path.join(filesystem.work, "out")
        else:
            wait_after_deletes()
        self.trash = os.path.join(os.path.dirname(self.out), "trash")
        os.makedirs(self.trash)
        os.makedirs(self.out)
        start_empty()  # every run starts with free memory, whatever ran before it
        self.nginx = Nginx(self.www, os.path.join(self.work, "nginx"))
        b, u, o = self.breeze, self.nginx.url, self.out
        try:
            for count in self.counts:
                self.measure("files", count, {
                    "breeze": (f"{b} sync {u}/files-{count}/ {o}/breeze --concurrency 16", f"{o}/breeze"),
                    "rclone copy --transfers 16": (f"rclone copy :http: {o}/rclone --http-url {u}/files-{count}/ --transfers 16 -q", f"{o}/rclone"),
                }, os.path.join(self.www, f"files-{count}"))
                self.measure("pack", count, {
                    "breeze": (f"{b} sync {u}/files-{count}-pack/ {o}/breeze", f"{o}/breeze"),
                    "rclone copy --transfers 16": (f"rclone copy :http: {o}/rclone --http-url {u}/files-{count}/ --transfers 16 -q", f"{o}/rclone"),
                }, os.path.join(self.www, f"files-{count}-pack"))
                sh(f"{b} sync {u}/files-{count}/ {o}/breeze-current --concurrency 16 > /dev/null")
                self.measure("no-change", count, {
                    "breeze": (f"{b} sync {u}/files-{count}/ {o}/breeze-current", f"{o}/unused"),
                }, os.path.join(self.www, f"files-{count}", "manifest.json"))
                rclone = f"rclone copy :http: {o}/rclone-current --transfers 16 -q --http-url {u}"
                sh(f"{rclone}/files-{count}/")
                self.measure("update", count, {
                    "breeze": (f"{b} sync {u}/files-{count}-ten/ {o}/breeze-current --concurrency 16", None,
                               f"{b} sync {u}/files-{count}/ {o}/breeze-current --concurrency 16 > /dev/null"),
                    "rclone copy --transfers 16": (f"{rclone}/files-{count}-ten/", None, f"{rclone}/files-{count}/"),
                }, os.path.join(self.www, f"files-{count}-ten"))
                self.measure("resume", count, {
                    "breeze": (f"{b} sync {u}/files-{count}/ {o}/breeze-current --concurrency 16", None,
                               f"{b} sync {u}/files-{count}/ {o}/breeze-current --concurrency 16 > /dev/null && "
                               f"rm {o}/breeze-current"),
                }, os.path.join(self.www, f"files-{count}"))
                self.clean(f"{o}/breeze-current")
                self.clean(f"{o}/rclone-current")
            # One large file per tool from here: deleted between runs, not kept in the trash.
            self.deletes_outputs = True
            shutil.rmtree(self.trash, ignore_errors=True)
            if not self.journaled:
                deleted()
            os.makedirs(self.trash)
            for mb in self.sizes:
                self.check_space(mb)
                self.measure("size", mb, {
                    "breeze": (f"{b} sync {u}/size-{mb}/ {o}/breeze", f"{o}/breeze"),
                    "curl -o": (f"curl -s -o {o}/curl.bin {u}/size-{mb}/big.bin", f"{o}/curl.bin"),
                }, os.path.join(self.www, f"size-{mb}"))
        finally:
            self.nginx.stop()
            if self.journaled:
                filesystem.unmount()
            else:
                shutil.rmtree(self.out, ignore_errors=True)
                shutil.rmtree(self.trash, ignore_errors=True)
                deleted()
        self.report()

    def report(self):
        def series(axis, tool, key):
            rows = [p for p in self.points if p["axis"] == axis and p["tool"] == tool]
            return [p["x"] for p in rows], [p[key] for p in rows]
        when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        lines = [f"Measured {when} by `Benchmarks/run --scale{' --quick' if self.args.quick else ''}`: cold syncs into an empty folder "
                 f"from nginx on 127.0.0.1, {self.runs} run{'s' if self.runs > 1 else ''} per point taking turns (median, fastest–slowest); "
                 "peak RSS is the largest run's. Exponent: the slope on log-log axes (1 grows in proportion, 0 not at all)."
                 + (f" Every tool wrote to {self.points[0]['where']}." if self.points and "where" in self.points[0] else ""), "",
                 "| axis | size | tool | seconds | fastest–slowest | CPU s | peak RSS MB | peer's time ÷ breeze's (above 1: breeze faster) |",
                 "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
        for p in self.points:
            peer = next((q for q in self.points if q["axis"] == p["axis"] and q["x"] == p["x"] and q["tool"] != "breeze"), None)
            ratio = f"{peer['seconds'] / p['seconds']:.2f}" if p["tool"] == "breeze" and peer else ""
            size = f"{p['x']:,} files" if p["axis"] != "size" else f"{p['x']:,} MB"
            lines.append(f"| {p['axis']} | {size} | {p['tool']} | {p['seconds']:.3f} | {p['spread'][0]:.3f}–{p['spread'][1]:.3f} | "
                         f"{p['cpu']:.2f} | {p['rss']:.1f} | {ratio} |")
        lines += ["", "| axis | tool | time exponent | peak RSS exponent | peak RSS per unit above the smallest |", "| --- | --- | ---: | ---: | ---: |"]
        for axis, unit in (("files", "file"), ("pack", "file"), ("no-change", "file"), ("update", "file"),
                           ("resume", "file"), ("size", "MB")):
            for tool in dict.fromkeys(p["tool"] for p in self.points if p["axis"] == axis):
                xs, seconds = series(axis, tool, "seconds")
                _, rss = series(axis, tool, "rss")
                per = (rss[-1] - rss[0]) * 1024 / (xs[-1] - xs[0])
                lines.append(f"| {axis} | {tool} | {exponent(xs, seconds):.2f} | {exponent(xs, rss):.2f} | {per:.2f} KB per {unit} |")
        lines += ["", "| file size | tool | CPU s per GB (user + system) |", "| ---: | --- | ---: |"]
        for p in (p for p in self.points if p["axis"] == "size"):
            lines.append(f"| {p['x']:,} MB | {p['tool']} | {p['cpu'] / (p['x'] / 1024):.2f} |")
        table = "\n".join(lines)
        print("\n" + table)
        results = os.path.join(ROOT, "Benchmarks", "results")
        suffix = "-quick" if self.args.quick else ""
        open(os.path.join(results, f"scale{suffix}.md"), "w").write(table + "\n")
        json.dump(self.points, open(os.path.join(results, f"scale{suffix}.json"), "w"), indent=1)
        self.chart(os.path.join(results, f"scale{suffix}.png"), series)
        print(f"\nWritten to Benchmarks/results/scale{suffix}.md, .json and .png")

    def chart(self, path, series):
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        figure, axes = plt.subplots(2, 2, figsize=(11, 8))
        for column, (axis, label) in enumerate((("files", "files of 4 KB"), ("size", "MB in one file"))):
            for row, (key, title) in enumerate((("seconds", "seconds (median)"), ("rss", "peak RSS, MB"))):
                plot = axes[row][column]
                for tool in dict.fromkeys(p["tool"] for p in self.points if p["axis"] == axis):
                    xs, ys = series(axis, tool, key)
                    plot.loglog(xs, ys, marker="o", label=f"{tool} (exponent {exponent(xs, ys):.2f})")
                plot.set_xlabel(label)
                plot.set_ylabel(title)
                plot.grid(True, which="both", alpha=0.3)
                plot.legend(fontsize=8)
        figure.suptitle("The cost curve: cold sync from nginx on 127.0.0.1")
        figure.tight_layout()
        figure.savefig(path, dpi=110)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--breeze", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", default="/tmp/freshair-scale")
    parser.add_argument("--report-only", action="store_true", help="report again from the saved scale.json")
    parser.add_argument("--in-place", action="store_true",
                        help="write the outputs in --work as it is, not on a journaled ext4 of its own (scripts/lib/journaled_fs.py)")
    scale = Scale(parser.parse_args())
    if scale.args.report_only:
        suffix = "-quick" if scale.args.quick else ""
        scale.points = json.load(open(os.path.join(ROOT, "Benchmarks", "results", f"scale{suffix}.json")))
        scale.report()
    else:
        scale.run()
