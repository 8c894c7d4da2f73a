"""Large files by changed chunks: breeze beside zsync, casync and a whole curl download, one run.

Each case has an old and a new version of one large file. Every tool's device starts with the old
copy; the timed step brings it to the new one from nginx on 127.0.0.1, and the result is checked
against the new file's SHA-256. Bytes on the wire and requests come from nginx's access log (the
index or control files each tool fetches included); seconds and peak RSS from GNU time.

Loopback times move by tens of percent from one run to the next (on this VM a 500 MB write into
the page cache took 0.1 s or 1 s, as the host happened to back the memory), so each timed step
runs `--repeat` times (3 by default), the tools taking turns, every run from the same saved
copy of the tool's device; a row gives the median run, its spread and the largest peak RSS.
Everything happens on a journaled ext4 of the benchmark's own (`JournaledFilesystem`), and each
timed step starts on primed memory (`DeltaBench.prime_memory`): two effects of this VM that fell
on some tools and not others.

- breeze: `breeze hash` (which writes the chunk index) and `breeze publish` into the served
  folder; the device runs `breeze sync`. Single-range requests only.
- zsync: `zsyncmake` beside the file; the device runs `zsync -i OLD` (multi-range requests, which
  S3 and most CDNs answer with the whole file).
- casync: `casync make` into a chunk store served by nginx (a second copy of the data as chunk
  files); the device runs `casync extract --seed=OLD`.
- curl: the whole new file.

The package case puts the file in an uncompressed `.tar` with 300 small files: breeze signs it
(`breeze sign`, which writes the package's chunk index) and the device rebuilds the package it
installed from the installed files (`breeze sync --trusted-key`); the peers sync the `.tar` as a
file and unpack it (seeding from the old `.tar`, which they must keep: a second copy of the
data on the device). breeze's result is checked by the large file as installed, theirs by the
`.tar`'s SHA-256.
"""
import argparse, hashlib, mmap, os, random, re, shutil, sqlite3, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from loopback import Nginx  # noqa: E402
from journaled_fs import JournaledFilesystem  # noqa: E402


def sh(command):
    subprocess.run(command, shell=True, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def timed(command, work):
    """Runs `command`; returns (seconds, peak RSS in MB)."""
    stats = os.path.join(work, "time.txt")
    start = time.perf_counter()
    run = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", stats, "/bin/sh", "-c", command],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise RuntimeError(f"{command} failed: {run.stderr.decode()[-2000:]}")
    with open(stats) as f:
        return seconds, int(f.read().strip().splitlines()[-1]) / 1024


class DeltaBench:
    def __init__(self, args, filesystem):
        self.args = args
        self.filesystem = filesystem  # where the work folder is, for the report
        self.work = args.work
        self.www = os.path.join(self.work, "www")
        self.breeze = args.breeze
        self.rows = []
        self.steps = []
        os.makedirs(self.www)
        self.nginx = Nginx(self.www, os.path.join(self.work, "nginx"))

    # ---- versions ---------------------------------------------------------------------------
    def random_file(self, path, megabytes):
        sh(f"head -c {megabytes << 20} /dev/urandom > {path}")

    def scattered(self, old, new, edits, seed):
        """`new`: `old` with `edits` 10 KB regions overwritten, spread evenly with jitter."""
        shutil.copyfile(old, new)
        size = os.path.getsize(old)
        rng = random.Random(seed)
        with open(new, "r+b") as f:
            for i in range(edits):
                offset = min(size - 10240, i * (size // edits) + rng.randrange(0, max(1, size // edits - 10240)))
                f.seek(offset)
                f.write(rng.randbytes(10240))

    def shifted(self, old, new, megabytes, extra=0, past_middle=0):
        """`new`: `old` with `megabytes` (and `extra` bytes) of new bytes inserted in the middle
        (`past_middle` bytes after it)."""
        size = os.path.getsize(old)
        with open(old, "rb") as source, open(new, "wb") as target:
            target.write(source.read(size // 2 + past_middle))
            target.write(os.urandom((megabytes << 20) + extra))
            shutil.copyfileobj(source, target, 1 << 20)

    def database(self, old, new, megabytes, updates):
        """A SQLite database of ~`megabytes` (1 KB rows), and a copy after `updates` row updates."""
        rows = megabytes * 800  # ~1.25 KB a row with its overhead
        connection = sqlite3.connect(old)
        connection.execute("PRAGMA journal_mode=DELETE")
        connection.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, body BLOB)")
        connection.execute(
            f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows}) "
            "INSERT INTO items SELECT i, 'item ' || i, randomblob(1000) FROM n")
        connection.commit()
        connection.close()
        shutil.copyfile(old, new)
        connection = sqlite3.connect(new)
        rng = random.Random(11)
        for row in rng.sample(range(1, rows + 1), updates):
            connection.execute("UPDATE items SET body = randomblob(1000), name = ? WHERE id = ?", (f"updated {row}", row))
        connection.commit()
        connection.close()

    def packages(self, old, new, folder):
        """`.tar` packages (GNU tar) of the old and new file, each with the same 300 small files."""
        os.makedirs(os.path.join(folder, "text"))
        for number in range(300):
            with open(os.path.join(folder, "text", f"{number}.md"), "w") as f:
                f.write(f"# Note {number}\n" + "Some words of text.\n" * (number % 40))
        tars = []
        for name, version in (("old", old), ("new", new)):
            shutil.copyfile(version, os.path.join(folder, "big.bin"))
            tars.append(os.path.join(self.work, "files", f"{name}.tar"))
            sh(f"tar -cf {tars[-1]} -C {folder} .")
        shutil.rmtree(folder)
        return tars

    # ---- tools ------------------------------------------------------------------------------
    def breeze_bundle(self, case, slug, base, url, old, new, unchanged, expected, size):
        """Publishes the old version, syncs it (untimed), publishes the new one, syncs (timed). A
        second device syncs the new one whole (`--no-chunk-deltas`): what breeze does without an
        index, verified and flushed like the delta, beside curl's unverified, unflushed copy."""
        author = os.path.join(self.work, slug, "author", "Big.freshair")
        os.makedirs(author)
        with open(os.path.join(author, "manifest.json"), "w") as f:
            f.write('[{"filename": "big.bin"}]\n')
        devices = {"breeze": ""} if unchanged else {"breeze": "", "breeze, whole": " --no-chunk-deltas"}
        sync = {tool: f"{self.breeze} sync {url}/breeze/Big.freshair/ {self.work}/{slug}/{re.sub('[^a-z]+', '-', tool)}"
                      f"/live --store {self.work}/{slug}/{re.sub('[^a-z]+', '-', tool)}/store{flags}"
                for tool, flags in devices.items()}
        for version in ([new] if unchanged else [old, new]):
            shutil.copyfile(version, os.path.join(author, "big.bin"))
            sh(f"{self.breeze} hash --sha256 {author}")
            sh(f"{self.breeze} publish {author} {base}/breeze/Big.freshair")
            if version is old or unchanged:
                for command in sync.values():
                    sh(command)
        for tool, command in sync.items():
            device = os.path.join(self.work, slug, re.sub("[^a-z]+", "-", tool))
            self.measure(case, tool, command, os.path.join(device, "live", "big.bin"), expected, size, device)

    def breeze_package(self, case, slug, base, url, old, new, payload, size):
        """Signs and serves the old package and syncs it (untimed); then the new one, timed as the
        first update (the installed package is chunked from its files); then the old one again
        (untimed) and the new one, timed as every later update (the index kept from the one before).
        A second device syncs with `--no-chunk-deltas`, timed at the last step: the package whole,
        verified, unpacked and flushed as the delta's is."""
        key = os.path.join(self.work, slug, "app.key")
        os.makedirs(os.path.dirname(key), exist_ok=True)
        printed = subprocess.run([self.breeze, "keygen", key], capture_output=True, text=True, check=True).stdout
        public = re.search(r"[A-Za-z0-9+/]{43}=", printed).group(0)
        os.makedirs(f"{base}/breeze")
        device = os.path.join(self.work, slug, "breeze-device")
        whole = os.path.join(self.work, slug, "breeze-whole-device")
        sync, sync_whole = (f"{self.breeze} sync {url}/breeze/content.tar {folder}/live --store {folder}/store "
                            f"--trusted-key {public}{flags}"
                            for folder, flags in ((device, ""), (whole, " --no-chunk-deltas")))
        for step, (version, tool) in enumerate([(old, None), (new, "breeze, first update"), (old, None), (new, "breeze")]):
            served = f"{base}/breeze/content.tar"
            shutil.copyfile(version, served)
            later = time.time() + 2 * (step + 1)  # servers date files by the second
            os.utime(served, (later, later))
            sh(f"{self.breeze} sign {served} --key {key}")
            if tool:
                self.measure(case, tool, sync, os.path.join(device, "live", "big.bin"), sha256(payload), size, device)
            if tool == "breeze":
                self.measure(case, "breeze, whole", sync_whole, os.path.join(whole, "live", "big.bin"), sha256(payload),
                             size, whole)
            sh(sync)  # the devices move on, as they would after a timed run
            sh(sync_whole)

    def measure(self, case, tool, command, result, expected, file_size, device):
        """Saves `device` as it is now; `run_steps` times `command` from that state."""
        saved = f"{device}.saved-{len(self.steps)}"
        sh(f"cp -a {device} {saved}")
        self.steps.append({"case": case, "tool": tool, "command": command, "result": result, "expected": expected,
                           "size": file_size, "device": device, "saved": saved})

    def run_steps(self):
        """Every measured step `--repeat` times, the tools taking turns, each run from its saved device."""
        runs = {id(step): [] for step in self.steps}
        for _ in range(self.args.repeat):
            for step in self.steps:
                shutil.rmtree(step["device"])
                sh(f"cp -a {step['saved']} {step['device']}")
                runs[id(step)].append(self.timed_run(step))
        for step in self.steps:
            done = sorted(runs[id(step)], key=lambda run: run["seconds"])
            median = done[len(done) // 2]
            self.rows.append({"case": step["case"], "tool": step["tool"], "bytes": median["bytes"],
                              "share": median["bytes"] / step["size"], "requests": median["requests"],
                              "seconds": median["seconds"], "fastest": done[0]["seconds"],
                              "slowest": done[-1]["seconds"], "rss": max(run["rss"] for run in done),
                              "correct": all(run["correct"] for run in done)})
            shutil.rmtree(step["saved"])
        self.steps = []

    def timed_run(self, step):
        # Every tool starts with the disk idle: the set-up just wrote gigabytes (the versions,
        # the served copies, the device's old copy), and their write-back would otherwise fall
        # on whichever tool runs first, and on a tool that flushes what it installs (breeze)
        # more than on one that leaves its file in the page cache (curl).
        os.sync()
        # And every tool finds its old copy and the served files in the page cache: the set-up
        # writes more than memory keeps, and a seed read back from disk (or not) swung one
        # tool's time between 1.3 and 3.8 s from run to run.
        for folder in (step["device"], self.www):
            self.warm(folder)
        self.prime_memory(max(2 << 30, step["size"] * 3 // 2))
        mark = self.nginx.mark()
        seconds, rss = timed(step["command"], self.work)
        lines = self.nginx.lines_since(mark)
        body = sum(int(fields[1]) for fields in lines if len(fields) > 1)
        correct = sha256(step["result"]) == step["expected"]
        print(f"{step['case']:<34} {step['tool']:<7} {body / 1e6:10.2f} MB {len(lines):6d} req {seconds:7.2f} s "
              f"{rss:7.0f} MB {'ok' if correct else 'WRONG'}", flush=True)
        return {"bytes": body, "requests": len(lines), "seconds": seconds, "rss": rss, "correct": correct}

    @staticmethod
    def prime_memory(size):
        """Touches `size` bytes of memory and frees them, so that the next step's new page cache
        lands on pages the host backs. This VM's host takes back memory the guest leaves unused
        (DAMON pages out cold pages, the balloon reports free ones), and the first write to such
        a page costs several times a normal one: one breeze run spent 38% of its samples copying
        into new page-cache pages, and which tool met such pages depended on what the one before
        it freed (a 256 MB package step took 0.32 s or 0.80 s; curl's spread was 0.44-1.62 s)."""
        memory = mmap.mmap(-1, size)
        for offset in range(0, size, mmap.PAGESIZE):
            memory[offset] = 1
        memory.close()

    @staticmethod
    def warm(folder):
        """Reads every file below `folder` (links not followed) into the page cache."""
        for parent, _, names in os.walk(folder):
            for name in names:
                path = os.path.join(parent, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    with open(path, "rb") as f:
                        while f.read(1 << 22):
                            pass

    def run_case(self, case, old, new, unchanged=False, package=None):
        """Every tool from `old` to `new` (with `unchanged`, from `new` to `new`). With `package`
        (the large file's new version), `old` and `new` are `.tar` packages holding it."""
        expected = sha256(new)
        size = os.path.getsize(new)
        slug = re.sub(r"[^a-z0-9]+", "-", case.lower()).strip("-")
        base = os.path.join(self.www, slug)
        url = f"{self.nginx.url}/{slug}"
        os.makedirs(base)

        if package:
            self.breeze_package(case, slug, base, url, old, new, package, size)
        else:
            self.breeze_bundle(case, slug, base, url, old, new, unchanged, expected, size)

        def unpacking(archive):
            """A package is installed, not just downloaded: the peers unpack theirs too."""
            return f" && mkdir -p out && tar -xf {archive} -C out" if package else ""

        # zsync: the control file beside the new file; the device seeds from its copy.
        os.makedirs(f"{base}/zsync")
        shutil.copyfile(new, f"{base}/zsync/big.bin")
        sh(f"cd {base}/zsync && zsyncmake -u big.bin -o big.bin.zsync big.bin")
        zdevice = os.path.join(self.work, slug, "zsync-device")
        os.makedirs(zdevice)
        shutil.copyfile(new if unchanged else old, f"{zdevice}/old.bin")
        self.measure(case, "zsync", f"cd {zdevice} && zsync -q -i old.bin -o new.bin {url}/zsync/big.bin.zsync"
                     + unpacking("new.bin"),
                     f"{zdevice}/new.bin", expected, size, zdevice)

        # casync: a chunk store and a blob index served by nginx.
        os.makedirs(f"{base}/casync")
        sh(f"casync make --store={base}/casync/store.castr {base}/casync/big.caibx {new}")
        cdevice = os.path.join(self.work, slug, "casync-device")
        os.makedirs(cdevice)
        shutil.copyfile(new if unchanged else old, f"{cdevice}/old.bin")
        self.measure(case, "casync",
                     f"cd {cdevice} && casync extract --store={url}/casync/store.castr --seed=old.bin "
                     f"{url}/casync/big.caibx new.bin" + unpacking("new.bin"), f"{cdevice}/new.bin", expected, size,
                     cdevice)

        # curl: the whole file (unchanged: a conditional GET on the copy's date).
        os.makedirs(f"{base}/curl")
        shutil.copyfile(new, f"{base}/curl/big.bin")
        udevice = os.path.join(self.work, slug, "curl-device")
        os.makedirs(udevice)
        if unchanged:
            shutil.copyfile(new, f"{udevice}/big.bin")
            served = os.stat(f"{base}/curl/big.bin").st_mtime
            os.utime(f"{udevice}/big.bin", (served, served))
            command = f"cd {udevice} && curl -sf -z big.bin -o big.bin {url}/curl/big.bin"
        else:
            command = f"cd {udevice} && curl -sf -o big.bin {url}/curl/big.bin" + unpacking("big.bin")
        self.measure(case, "curl", command, f"{udevice}/big.bin", expected, size, udevice)
        self.run_steps()
        shutil.rmtree(os.path.join(self.work, slug))
        shutil.rmtree(base)

    def run(self):
        q = self.args.quick
        files = os.path.join(self.work, "files")
        os.makedirs(files)
        a, b = os.path.join(files, "a.bin"), os.path.join(files, "b.bin")
        small, large = (64, 256) if q else (256, 1024)
        small_edits, large_edits = (25, 250) if q else (100, 1000)
        shift = 16 if q else 64
        database = 64 if q else 500

        wants = lambda name: not self.args.only or self.args.only in name
        scattered = f"{small} MB, {small_edits} scattered 10 KB edits"
        if any(wants(name) for name in (scattered, "unchanged", ".tar package")):
            self.random_file(a, small)
            self.scattered(a, b, small_edits, 1)
            if wants(scattered):
                self.run_case(scattered, a, b)
            if wants(f"{small} MB, unchanged re-sync"):
                self.run_case(f"{small} MB, unchanged re-sync", b, b, unchanged=True)
            if wants(f"{small} MB .tar package, {small_edits} edits"):
                old_tar, new_tar = self.packages(a, b, os.path.join(files, "package"))
                self.run_case(f"{small} MB .tar package, {small_edits} edits", old_tar, new_tar, package=b)
                os.remove(old_tar)
                os.remove(new_tar)
        # Nothing to reuse: the delta must notice early and cost about a whole download (#79).
        rewritten = f"{small} MB, rewritten completely"
        if wants(rewritten):
            self.random_file(a, small)
            self.random_file(b, small)
            self.run_case(rewritten, a, b)
        large_cases = (f"{large} MB, {large_edits} scattered 10 KB edits", f"{large} MB, {shift} MB inserted in the middle",
                       f"{large} MB, {shift} MB and 1,001 bytes inserted 12,345 bytes past the middle")
        if any(wants(name) for name in large_cases):
            self.random_file(a, large)
            if wants(large_cases[0]):
                self.scattered(a, b, large_edits, 2)
                self.run_case(large_cases[0], a, b)
            if wants(large_cases[1]):
                self.shifted(a, b, shift)
                self.run_case(large_cases[1], a, b)
            # Not a multiple of the block size: what follows is found by the rolling search alone.
            if wants(large_cases[2]):
                self.shifted(a, b, shift, extra=1001, past_middle=12345)
                self.run_case(large_cases[2], a, b)
            os.remove(a)
            os.remove(b)
        if wants("SQLite"):
            self.database(a, b, database, 3000)
            self.run_case(f"SQLite {os.path.getsize(a) >> 20} MB, 3,000 rows updated", a, b)
        self.report()

    def report(self):
        lines = [f"Each timed step run {self.args.repeat} times, the tools taking turns; seconds are the median run's.",
                 f"Work folder, devices and served files on {self.filesystem}.",
                 "Before each timed step: the disk flushed, the tool's files and the served ones read into the page cache, "
                 "memory primed (see `prime_memory`).", "",
                 "| case | tool | on the wire | share of file | requests | seconds | fastest–slowest | peak RSS | result |",
                 "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
        for row in self.rows:
            lines.append(f"| {row['case']} | {row['tool']} | {row['bytes'] / 1e6:.2f} MB | {100 * row['share']:.2f}% | "
                         f"{row['requests']} | {row['seconds']:.2f} | {row['fastest']:.2f}–{row['slowest']:.2f} | {row['rss']:.0f} MB | "
                         f"{'correct' if row['correct'] else 'WRONG'} |")
        ratios = ["", "| case | breeze bytes ÷ zsync | ÷ casync | breeze time ÷ zsync | ÷ curl | ÷ breeze, whole |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for case in dict.fromkeys(row["case"] for row in self.rows):
            by = {row["tool"]: row for row in self.rows if row["case"] == case}
            def ratio(key, tool):
                return f"{by['breeze'][key] / by[tool][key]:.2f}" if tool in by and by[tool][key] else "—"
            ratios.append(f"| {case} | {ratio('bytes', 'zsync')} | {ratio('bytes', 'casync')} | "
                          f"{ratio('seconds', 'zsync')} | {ratio('seconds', 'curl')} | {ratio('seconds', 'breeze, whole')} |")
        text = "\n".join(lines + ratios) + "\n"
        name = "delta-quick.md" if self.args.quick else "delta.md"
        if self.args.only:
            name = "delta-only.md"
        with open(os.path.join(ROOT, "Benchmarks", "results", name), "w") as f:
            f.write(text)
        print(text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--breeze", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--work", default="/tmp/freshair-delta-bench")
    parser.add_argument("--only", help="run only the cases whose name contains this")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each timed step; rows give the median")
    parser.add_argument("--in-place", action="store_true",
                        help="run in --work as it is, not on a journaled ext4 of its own (see JournaledFilesystem)")
    args = parser.parse_args()
    if args.in_place:
        shutil.rmtree(args.work, ignore_errors=True)
        filesystem = None
    else:
        filesystem = JournaledFilesystem(args.work, 12 if args.quick else 48)
    try:
        bench = DeltaBench(args, filesystem.description if filesystem else f"{args.work} as it is (--in-place)")
        try:
            bench.run()
        finally:
            bench.nginx.stop()
    finally:
        if filesystem:
            filesystem.unmount()


if __name__ == "__main__":
    main()
