"""Runs the benchmark cases side by side and reports medians, ratios, peak RSS and wire traffic.

Each case alternates the tools run by run, so drift on the machine affects them alike. Times are
wall-clock seconds of the whole command; peak RSS comes from GNU time; requests and body bytes
come from nginx's access log. Nothing here passes or fails: it measures.
"""
import argparse, datetime, json, os, platform, random, shutil, socket, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from loopback import Nginx, free_port, throwaway_ca  # noqa: E402  (the same nginx the kill sweep uses)
from corpora import small_files  # noqa: E402
from quiet_disk import deleted, wait_after_deletes  # noqa: E402
from journaled_fs import for_outputs  # noqa: E402
from page_cache import forget, start_empty  # noqa: E402
from machine import cpu_model  # noqa: E402


def sh(command, **kwargs):
    return subprocess.run(command, shell=True, check=True, **kwargs)




class Bench:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.work = args.work
        self.www = os.path.join(self.work, "www")
        self.out = os.path.join(self.work, "out")
        self.breeze = args.breeze
        # Another breeze binary (an older commit's), run in turn with this one in every case.
        self.baseline = getattr(args, "baseline", None)
        self.runs = args.runs or (1 if self.quick else 3)
        self.rows = []
        self.notes = []
        self.trash = os.path.join(self.work, "trash")
        self.trashed = 0

    # ---- corpora ----------------------------------------------------------------------------
    def corpora(self):
        q = self.quick
        self.big_mb = 128 if q else 1024
        self.small_count, self.small_dirs = (2000, 20) if q else (10000, 100)
        self.package_mb = 64 if q else 640  # 40 parts of 16 MB text: a .tgz above 500 MB
        os.makedirs(self.www, exist_ok=True)
        self.big_name, self.small_name = f"big-{self.big_mb}.freshair", f"small-{self.small_count}.freshair"
        big = os.path.join(self.www, self.big_name)
        if not os.path.exists(os.path.join(big, f".ready-{self.big_mb}")):
            shutil.rmtree(big, ignore_errors=True)
            os.makedirs(big)
            sh(f"head -c {self.big_mb << 20} /dev/urandom > {big}/big.bin")
            sh(f"{self.breeze} generate {big} >/dev/null")
            open(os.path.join(big, f".ready-{self.big_mb}"), "w").close()
        # Large files at once: what waits between the network and the disk must stay bounded
        # by the concurrency (issue #33: 40 MB in every case).
        self.many_mb = 8 if q else 64
        self.many_name = f"large-16x{self.many_mb}.freshair"
        many = os.path.join(self.www, self.many_name)
        if not os.path.exists(os.path.join(many, f".ready-{self.many_mb}")):
            shutil.rmtree(many, ignore_errors=True)
            os.makedirs(many)
            for i in range(16):
                sh(f"head -c {self.many_mb << 20} /dev/urandom > {many}/f{i:02d}.bin")
            sh(f"{self.breeze} generate {many} >/dev/null")
            open(os.path.join(many, f".ready-{self.many_mb}"), "w").close()
        small = os.path.join(self.www, self.small_name)
        if not os.path.exists(os.path.join(small, f".ready-{self.small_count}")):
            shutil.rmtree(small, ignore_errors=True)
            small_files(small, self.small_count, self.small_dirs, seed=7)
            sh(f"{self.breeze} generate {small} >/dev/null")
            open(os.path.join(small, f".ready-{self.small_count}"), "w").close()
        # The same files with a pack beside their manifest (`breeze generate --pack`).
        self.packed_name = f"small-{self.small_count}-pack.freshair"
        packed = os.path.join(self.www, self.packed_name)
        if not os.path.exists(os.path.join(packed, f".ready-{self.small_count}")):
            shutil.rmtree(packed, ignore_errors=True)
            shutil.copytree(small, packed, ignore=shutil.ignore_patterns(".ready-*"))
            sh(f"{self.breeze} generate {packed} --pack >/dev/null")
            open(os.path.join(packed, f".ready-{self.small_count}"), "w").close()
        self.pack_file = next(f for f in os.listdir(packed) if f.endswith(".freshairpack"))
        package = os.path.join(self.www, f"package-{self.package_mb}.tgz")
        self.package_name = os.path.basename(package)
        marker = os.path.join(self.work, f"package-ready-{self.package_mb}")
        if not os.path.exists(marker) or not os.path.exists(package):
            source = os.path.join(self.work, "package-src")
            shutil.rmtree(source, ignore_errors=True)
            os.makedirs(source)
            # Text-like content (base64 of random bytes) so gzip has work to do, as with real content.
            for i in range(max(1, self.package_mb // 16)):
                sh(f"head -c {12 << 20} /dev/urandom | base64 -w 100 > {source}/part{i:03d}.txt")
            sh(f"tar -czf {package} -C {source} .")
            shutil.rmtree(source)
            open(marker, "w").close()
        self.package_bytes = os.path.getsize(package)
        # A repository of 4 bundles, each a quarter of the package's content as its own .tar.gz.
        self.repo_id = f"com.example.bench{self.package_mb}"
        repo = os.path.join(self.www, "repo", self.repo_id)
        if not os.path.exists(os.path.join(repo, ".ready")):
            shutil.rmtree(repo, ignore_errors=True)
            os.makedirs(repo)
            for bundle in range(4):
                source = os.path.join(self.work, "repo-src", f"b{bundle}")
                shutil.rmtree(source, ignore_errors=True)
                os.makedirs(source)
                for i in range(max(1, self.package_mb // 64)):
                    sh(f"head -c {12 << 20} /dev/urandom | base64 -w 100 > {source}/part{i:03d}.txt")
                sh(f"{self.breeze} repo add {source} {repo} >/dev/null")
            shutil.rmtree(os.path.join(self.work, "repo-src"))
            open(os.path.join(repo, ".ready"), "w").close()
        self.repo_archives = sorted(name for name in os.listdir(repo) if name.endswith(".tar.gz"))
        self.repo_bytes = sum(os.path.getsize(os.path.join(repo, name)) for name in self.repo_archives)
        self.small_bytes = self.small_count * 4096

    # ---- measuring --------------------------------------------------------------------------
    def timed(self, command):
        """Runs `command`; returns (seconds, peak RSS in MB of the measured process)."""
        stats = os.path.join(self.work, "time.txt")
        start = time.perf_counter()
        finished = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", stats, "/bin/sh", "-c", command],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        seconds = time.perf_counter() - start
        if finished.returncode != 0:
            raise SystemExit(f"`{command}` failed (exit {finished.returncode}):\n{finished.stderr.strip()}")
        with open(stats) as f:
            rss_kb = int(f.read().strip().splitlines()[-1])
        return seconds, rss_kb / 1024

    def case(self, name, tools, prepare=None, unit=None, short=False, warmup=False, corpus=(), with_baseline=True):
        """Runs each tool `runs` times, alternating; records medians. `tools` maps a label to a command.

        The `corpus` paths are read once first, so the first tool does not pay for bringing them
        back into the page cache (this VM's kernel reclaims pages left unread for a while).
        `warmup` gives every tool one untimed run first (first-run effects: caches, and the
        file system's state after earlier deletions). `short` cases (a tenth of a second or
        so) are warmed up and get at least seven timed runs: a single slow start would
        otherwise move their median. `with_baseline=False`: a case the baseline binary may not
        have the options for."""
        for path in corpus:
            sh(f"find {path} -type f -exec cat {{}} + > /dev/null")
        if self.baseline and with_baseline and "breeze" in tools:
            # Right after breeze, so the two take turns; the same output folder, cleaned alike.
            tools = {label: command for name, full in tools.items()
                     for label, command in ([(name, full), ("breeze (baseline)", full.replace(self.breeze, self.baseline))]
                                            if name == "breeze" else [(name, full)])}
        results = {label: [] for label in tools}
        if short or warmup:
            for label, command in tools.items():
                if prepare:
                    prepare(label)
                subprocess.run(["/bin/sh", "-c", command], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(max(self.runs, 7) if short else self.runs):
            for label, command in tools.items():
                if prepare:
                    prepare(label)
                self.drop_caches_hint()
                mark = self.nginx.mark()
                seconds, rss = self.timed(command)
                requests, body = self.nginx.since(mark)
                results[label].append((seconds, rss, requests, body))
        breeze_time = statistics.median(r[0] for r in results["breeze"])
        for label, samples in results.items():
            seconds = statistics.median(s[0] for s in samples)
            row = {
                "case": name, "tool": label, "seconds": seconds, "rss": max(s[1] for s in samples),
                "requests": samples[-1][2], "bytes": samples[-1][3],
                "ratio": "" if label == "breeze" else f"{seconds / breeze_time:.2f}",
                "unit": unit(seconds) if unit else "",
            }
            self.rows.append(row)
            print(f"  {name:<34} {label:<22} {seconds:8.3f} s  {row['rss']:7.1f} MB  {row['requests']:6d} req  {row['unit']}", flush=True)

    def drop_caches_hint(self):
        # The corpora stay in the page cache for every tool alike. What the previous tool
        # wrote is flushed first, so no tool pays for another's dirty pages (breeze's
        # syncfs before activation would otherwise write them).
        os.sync()

    def clean(self, *names):
        """Moves earlier output aside instead of deleting it: ext4 will not reuse an inode
        deleted within the last minute and scans past such inodes on every create, so deleting
        10,000 files right before a run would slow whichever tool comes next. The trash is
        deleted after the last case; its files leave the page cache at once (scripts/lib/page_cache.py)."""
        os.makedirs(self.trash, exist_ok=True)
        for name in names:
            for path in [os.path.join(self.out, name), os.path.join(self.out, f".{name}.freshair-store")]:
                if os.path.lexists(path):
                    self.trashed += 1
                    os.rename(path, os.path.join(self.trash, str(self.trashed)))
                    forget(os.path.join(self.trash, str(self.trashed)))  # its pages would slow the next tool's writes
        os.makedirs(self.out, exist_ok=True)

    def empty_trash(self):
        shutil.rmtree(self.trash, ignore_errors=True)
        deleted()

    # ---- cases ------------------------------------------------------------------------------
    def run(self):
        os.makedirs(self.work, exist_ok=True)
        # Each tool's output is kept until the last case (see `clean`): about 30 GB in a full
        # run, whose 1 GB cases alone leave 20. A disk that fills mid-run fails a tool with
        # ENOSPC instead: say so before the corpora are made.
        need, free = (4 if self.quick else 40) << 30, shutil.disk_usage(self.work).free
        if free < need:
            raise SystemExit(f"{self.work} has {free >> 30} GB free; this run keeps every tool's output until it ends "
                             f"and needs about {need >> 30} GB: free some space, or pass --work on a larger disk.")
        print(f"Generating corpora in {self.www} ...", flush=True)
        self.corpora()
        # Every tool writes to an ext4 of its own, with a journal, made for this run (unless
        # --in-place): on a root file system without one, each create scans the inodes deleted
        # in the last minutes (see JournaledFilesystem), and the 10,000-file case measured the
        # last run's deletions as much as the tools. Unmounting deletes it all at once.
        filesystem, self.where = for_outputs(self.work, self.out, self.args.in_place)
        journaled = filesystem is not None
        leftovers = [self.out] + [os.path.join(self.work, n) for n in os.listdir(self.work) if n.startswith("trash-")]
        if journaled:
            # What runs before this one left on the root file system: deleting it slows only
            # creates there, and no tool writes there now.
            for leftover in leftovers + [self.trash]:
                shutil.rmtree(leftover, ignore_errors=True)
            self.out, self.trash = os.path.join(filesystem.work, "out"), os.path.join(filesystem.work, "trash")
        else:
            # Whatever an earlier run left goes to the trash too, deleted only after the last case.
            os.makedirs(self.trash, exist_ok=True)
            for leftover in leftovers:
                if os.path.lexists(leftover):
                    self.trashed += 1
                    os.rename(leftover, os.path.join(self.trash, f"old-{self.trashed}"))
            wait_after_deletes()
        start_empty()  # every run starts with free memory, whatever ran before it
        # https from a CA made for this run, trusted by each tool's own option, never by the system.
        self.ca, certificate, key = throwaway_ca(os.path.join(self.work, "tls"))
        self.nginx = Nginx(self.www, os.path.join(self.work, "nginx"), tls=(certificate, key))
        try:
            self.cases()
        finally:
            self.nginx.stop()
            if journaled:
                filesystem.unmount()
            else:
                self.empty_trash()
        self.report()

    def cases(self):
        b, u, o = self.breeze, self.nginx.url, self.out
        mb = lambda s: f"{self.big_mb / s:.0f} MB/s"
        # 1. One large file.
        print(f"1. Cold sync of one {self.big_mb} MB file", flush=True)
        self.case(f"cold sync, 1 × {self.big_mb} MB", {
            "breeze": f"{b} sync {u}/{self.big_name}/ {o}/big-breeze",
            "curl -o": f"curl -s -o {o}/big-curl.bin {u}/{self.big_name}/big.bin",
            # breeze makes the file durable before it goes live; this is curl paying the same.
            "curl -o; sync -f": f"curl -s -o {o}/big-curl.bin {u}/{self.big_name}/big.bin && sync -f {o}/big-curl.bin",
            "aria2c": f"aria2c -q --allow-overwrite=true -d {o} -o big-aria.bin {u}/{self.big_name}/big.bin",
        }, corpus=[f"{self.www}/{self.big_name}"], prepare=lambda label: self.clean("big-breeze") or [os.remove(p) for p in [f"{o}/big-curl.bin", f"{o}/big-aria.bin"] if os.path.exists(p)], unit=mb)

        # 1b. Sixteen large files at once.
        print(f"1b. Cold sync of 16 files of {self.many_mb} MB at once", flush=True)
        many_list = os.path.join(self.work, "many.txt")
        with open(many_list, "w") as listing:
            for i in range(16):
                listing.write(f'url = "{u}/{self.many_name}/f{i:02d}.bin"\noutput = "{o}/many-curl/f{i:02d}.bin"\n')
        self.case(f"cold sync, 16 × {self.many_mb} MB at once", {
            "breeze": f"{b} sync {u}/{self.many_name}/ {o}/many-breeze --concurrency 16",
            "curl --parallel": f"curl -s --parallel --parallel-max 16 --create-dirs -K {many_list}",
            "rclone copy": f"rclone copy :http: {o}/many-rclone --http-url {u}/{self.many_name}/ --transfers 16 -q",
            # breeze makes the files durable before they go live; this is rclone paying the same.
            "rclone copy; sync -f": f"rclone copy :http: {o}/many-rclone --http-url {u}/{self.many_name}/ --transfers 16 -q && sync -f {o}/many-rclone",
        }, corpus=[f"{self.www}/{self.many_name}"], prepare=lambda label: self.clean("many-breeze", "many-curl", "many-rclone"),
            unit=lambda s: f"{16 * self.many_mb / s:.0f} MB/s")

        # 2. Many small files.
        files = sorted(os.path.relpath(os.path.join(d, f), os.path.join(self.www, self.small_name))
                       for d, _, fs in os.walk(os.path.join(self.www, self.small_name)) for f in fs if f.endswith(".bin"))
        aria_list, wget_list = os.path.join(self.work, "aria.txt"), os.path.join(self.work, "wget.txt")
        with open(aria_list, "w") as a, open(wget_list, "w") as w:
            for path in files:
                a.write(f"{u}/{self.small_name}/{path}\n  out={path}\n")
                w.write(f"{u}/{self.small_name}/{path}\n")
        per_second = lambda s: f"{self.small_count / s:.0f} files/s"
        print(f"2. Cold sync of {self.small_count} files of 4 KB in {self.small_dirs} folders", flush=True)
        self.case(f"cold sync, {self.small_count} × 4 KB", {
            "breeze": f"{b} sync {u}/{self.small_name}/ {o}/small-breeze --concurrency 16",
            "aria2c -j16": f"aria2c -q -i {aria_list} -j 16 -d {o}/small-aria",
            "wget -i": f"wget -q -x -nH --cut-dirs=1 -i {wget_list} -P {o}/small-wget",
            "rclone copy": f"rclone copy :http: {o}/small-rclone --http-url {u}/{self.small_name}/ --transfers 16 -q",
        }, corpus=[f"{self.www}/{self.small_name}"], warmup=True, prepare=lambda label: self.clean("small-breeze", "small-aria", "small-wget", "small-rclone"), unit=per_second)

        # 2b. The same files from a pack: one request instead of one each. rclone has no
        # such way; `curl | tar -xf -` of the same pack is what unpacking one archive costs.
        print(f"2b. Cold sync of the same {self.small_count} files from a pack (breeze generate --pack)", flush=True)
        self.case(f"cold sync, {self.small_count} × 4 KB, pack", {
            "breeze": f"{b} sync {u}/{self.packed_name}/ {o}/pack-breeze",
            "rclone copy": f"rclone copy :http: {o}/pack-rclone --http-url {u}/{self.small_name}/ --transfers 16 -q",
            "curl piped to tar -xf": f"mkdir -p {o}/pack-tar && curl -s {u}/{self.packed_name}/{self.pack_file} | tar -xf - -C {o}/pack-tar",
        }, corpus=[f"{self.www}/{self.packed_name}"], warmup=True, prepare=lambda label: self.clean("pack-breeze", "pack-rclone", "pack-tar"), unit=per_second)

        # 2c. Over https, where a CDN offers HTTP/2: each tool takes what it negotiates (ALPN);
        # breeze keeps to HTTP/1.1 (through AsyncHTTPClient, h2 cost it twice the time for 1 GB).
        t, ca = self.nginx.https_url, self.ca
        print(f"2c. Over https (HTTP/2 offered): {self.small_count} files of 4 KB, and one of {self.big_mb} MB", flush=True)
        self.case(f"https, cold sync, {self.small_count} × 4 KB", {
            "breeze": f"{b} sync {t}/{self.small_name}/ {o}/tls-small-breeze --concurrency 16 --ca-file {ca}",
            "rclone copy": f"rclone copy :http: {o}/tls-small-rclone --http-url {t}/{self.small_name}/ --transfers 16 -q --ca-cert {ca}",
        }, corpus=[f"{self.www}/{self.small_name}"], warmup=True, prepare=lambda label: self.clean("tls-small-breeze", "tls-small-rclone"),
            unit=per_second, with_baseline=False)
        self.case(f"https, cold sync, 1 × {self.big_mb} MB", {
            "breeze": f"{b} sync {t}/{self.big_name}/ {o}/tls-big-breeze --ca-file {ca}",
            "curl -o": f"curl -s --cacert {ca} -o {o}/tls-big-curl.bin {t}/{self.big_name}/big.bin",
        }, corpus=[f"{self.www}/{self.big_name}"], prepare=lambda label: self.clean("tls-big-breeze") or [os.remove(p) for p in [f"{o}/tls-big-curl.bin"] if os.path.exists(p)],
            unit=mb, with_baseline=False)

        # 3. Nothing changed (everything from case 2 is in place).
        sh(f"{b} sync {u}/{self.small_name}/ {o}/small-breeze >/dev/null")
        sh(f"rclone copy :http: {o}/small-rclone --http-url {u}/{self.small_name}/ --transfers 16 -q")
        etag = os.path.join(self.work, "etag.txt")
        sh(f"curl -s --etag-save {etag} -o {o}/manifest-curl.json {u}/{self.small_name}/manifest.json")
        print("3. No-change check on that tree", flush=True)
        self.case("no-change check", {
            "breeze": f"{b} sync {u}/{self.small_name}/ {o}/small-breeze",
            "curl --etag-compare": f"curl -s --etag-compare {etag} -o {o}/manifest-curl.json {u}/{self.small_name}/manifest.json",
            "rclone sync": f"rclone sync :http: {o}/small-rclone --http-url {u}/{self.small_name}/ --transfers 16 -q",
        }, short=True)

        # 4. Ten files change; the publisher re-hashes.
        rng = random.Random(time.time())
        changed = rng.sample(files, 10)
        for path in changed:
            with open(os.path.join(self.www, self.small_name, path), "wb") as f:
                f.write(rng.randbytes(4096))
        sh(f"{b} hash {self.www}/{self.small_name} >/dev/null")
        manifest_bytes = os.path.getsize(os.path.join(self.www, self.small_name, "manifest.json"))
        mark = self.nginx.mark()
        seconds, rss = self.timed(f"{b} sync {u}/{self.small_name}/ {o}/small-breeze")
        requests, body = self.nginx.since(mark)
        useful = 10 * 4096 + manifest_bytes
        self.rows.append({"case": "incremental, 10 changed", "tool": "breeze", "seconds": seconds, "rss": rss, "requests": requests,
                          "bytes": body, "ratio": "", "unit": f"wire/(changed+manifest) = {body / useful:.3f}"})
        print(f"4. Incremental: {requests} requests, {body} body bytes for {10 * 4096} changed + {manifest_bytes} manifest bytes "
              f"(ratio {body / useful:.3f}), {seconds:.3f} s", flush=True)

        # 5. A package.
        print(f"5. Package of {self.package_bytes / 1e6:.0f} MB (.tgz)", flush=True)
        self.case(f"package, {self.package_bytes / 1e6:.0f} MB .tgz", {
            "breeze": f"{b} sync {u}/{self.package_name} {o}/pkg-breeze",
            "curl + tar -xzf": f"curl -s -o {o}/pkg.tgz {u}/{self.package_name} && mkdir -p {o}/pkg-tar && tar -xzf {o}/pkg.tgz -C {o}/pkg-tar",
        }, corpus=[f"{self.www}/{self.package_name}"], prepare=lambda label: self.clean("pkg-breeze", "pkg-tar") or (os.path.exists(f"{o}/pkg.tgz") and os.remove(f"{o}/pkg.tgz")))

        # 5b. A repository of 4 bundles.
        r = f"{u}/repo/{self.repo_id}"
        fetch_and_unpack = " ".join(f"{r}/{name}" for name in self.repo_archives)
        print(f"5b. Repository of {len(self.repo_archives)} bundles, {self.repo_bytes / 1e6:.0f} MB of .tar.gz", flush=True)
        self.case(f"repository, {len(self.repo_archives)} × .tar.gz, {self.repo_bytes / 1e6:.0f} MB", {
            "breeze": f"{b} sync {u}/repo {o}/repo-breeze --repo {self.repo_id} --concurrency 4",
            "curl + tar -xzf, 4 at once": f"mkdir -p {o}/repo-tar && printf '%s\\n' {fetch_and_unpack} | xargs -P 4 -I URL sh -c "
                                          f"'mkdir -p {o}/repo-tar/$(basename URL) && curl -s URL | tar -xzf - -C {o}/repo-tar/$(basename URL)'",
        }, corpus=[f"{self.www}/repo"], prepare=lambda label: self.clean("repo-breeze", "repo-tar"))

        # 6. Hashing.
        print("6. Hashing", flush=True)
        small = os.path.join(self.www, self.small_name)
        self.case(f"hash, 1 × {self.big_mb} MB", {
            "breeze": f"{b} hash {self.www}/{self.big_name}",
            "sha256sum": f"sha256sum {self.www}/{self.big_name}/big.bin",
        }, corpus=[f"{self.www}/{self.big_name}"], unit=mb)
        self.case(f"hash, {self.small_count} × 4 KB", {
            "breeze": f"{b} hash {small}",
            "sha256sum": f"find {small} -name '*.bin' -print0 | xargs -0 sha256sum > /dev/null",
            "xargs -P2 sha256sum": f"find {small} -name '*.bin' -print0 | xargs -0 -P2 -n 500 sha256sum > /dev/null",
        }, unit=per_second, short=True)

    # ---- report -----------------------------------------------------------------------------
    def report(self):
        machine = f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu_model()}), {round(os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30)} GiB"
        when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        lines = [f"Measured {when} by `Benchmarks/run{' --quick' if self.quick else ''}` ({self.runs} run{'s' if self.runs > 1 else ''} per tool, median; "
                 f"7 for the sub-second no-change and small-file hash cases; an untimed warm-up run first for those and the 10,000-file sync), on {machine}.",
                 "Ratio is the peer's time over breeze's: above 1, breeze was faster. nginx on 127.0.0.1 served everything; "
                 f"every tool wrote to {getattr(self, 'where', self.out)}.", "",
                 "| case | tool | median s | ratio | peak RSS MB | requests | body bytes | rate |",
                 "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
        for r in self.rows:
            lines.append(f"| {r['case']} | {r['tool']} | {r['seconds']:.3f} | {r['ratio']} | {r['rss']:.1f} | {r['requests']} | {r['bytes']} | {r['unit']} |")
        table = "\n".join(lines)
        print("\n" + table)
        results = os.path.join(ROOT, "Benchmarks", "results")
        os.makedirs(results, exist_ok=True)
        name = "latest-quick.md" if self.quick else "latest.md"
        if self.baseline:
            # A comparison of two binaries is not the product's figure: kept apart.
            table = f"`breeze (baseline)` is {self.baseline}; its ratio above 1: this breeze was faster.\n\n" + table
            name = "baseline-quick.md" if self.quick else "baseline.md"
        with open(os.path.join(results, name), "w") as f:
            f.write(table + "\n")
        if not self.quick and not self.baseline:
            readme = os.path.join(ROOT, "docs", "BENCHMARKS.md")
            text = open(readme).read()
            start, end = "<!-- benchmark:start -->", "<!-- benchmark:end -->"
            if start in text and end in text:
                text = text[:text.index(start) + len(start)] + "\n" + table + "\n" + text[text.index(end):]
                open(readme, "w").write(text)
        print(f"\nWritten to Benchmarks/results/{name}" + ("" if self.quick or self.baseline else " and docs/BENCHMARKS.md"))


class Chaos(Bench):
    """The chaos figure: the many-file and the large-file sync through scripts/fault-proxy, with
    10% of answers reset at a random offset (and the large file's first three) and 50 ms added
    before each, beside the same sync straight from nginx. Each must complete and verify (`breeze verify`); bytes are what reached
    the client (the proxy's log), compared with the clean run's (nginx's log)."""

    def run(self):
        os.makedirs(self.work, exist_ok=True)
        print(f"Generating corpora in {self.www} ...", flush=True)
        self.corpora()
        # Timing is not the point here: what earlier runs left is simply deleted.
        for leftover in (self.out, self.trash):
            shutil.rmtree(leftover, ignore_errors=True)
        os.makedirs(self.trash, exist_ok=True)
        self.nginx = Nginx(self.www, os.path.join(self.work, "nginx"))
        log, rules = os.path.join(self.work, "chaos-proxy.jsonl"), os.path.join(self.work, "chaos-rules.json")
        open(log, "w").close()
        proxy = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts", "fault-proxy"), "--upstream", self.nginx.url[len("http://"):],
                                  "--reset-probability", "0.1", "--latency-ms", "50", "--seed", "7", "--log", log, "--rules", rules],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        proxy_url = f"http://127.0.0.1:{proxy.stdout.readline().strip()}"
        try:
            # One large file is one answer or two: left to the 10% it might never be cut, so its
            # first three answers are reset at random offsets.
            big_rules = [{"path": f"/{self.big_name}/big.bin", "fault": "reset", "offset": "random", "times": 3}]
            for name, corpus, forced in ((f"{self.small_count} × 4 KB", self.small_name, []), (f"1 × {self.big_mb} MB", self.big_name, big_rules)):
                with open(rules, "w") as f:
                    json.dump({"rules": forced}, f)
                self.clean("chaos-clean", "chaos")
                mark = self.nginx.mark()
                clean_seconds, _ = self.timed(f"{self.breeze} sync {self.nginx.url}/{corpus}/ {self.out}/chaos-clean --concurrency 8")
                _, clean_bytes = self.nginx.since(mark)
                before = sum(1 for _ in open(log))
                started = time.perf_counter()
                run = subprocess.run([self.breeze, "sync", f"{proxy_url}/{corpus}/", f"{self.out}/chaos", "--concurrency", "8", "--attempts", "10"],
                                     capture_output=True, text=True)
                seconds = time.perf_counter() - started
                answers = [json.loads(line) for line in list(open(log))[before:]]
                sent = sum(a["sent"] for a in answers)
                resets = sum(1 for a in answers if a.get("fault") == "reset")
                verified = subprocess.run([self.breeze, "verify", f"{self.out}/chaos"], capture_output=True, text=True).returncode == 0
                same = subprocess.run(["diff", "-r", "-q", f"{self.out}/chaos/", f"{self.out}/chaos-clean/"], capture_output=True).returncode == 0
                self.rows.append({"case": name, "ok": run.returncode == 0 and verified and same, "requests": len(answers), "resets": resets,
                                  "seconds": seconds, "clean_seconds": clean_seconds, "sent": sent, "clean_bytes": clean_bytes,
                                  "summary": run.stdout.strip() or run.stderr.strip()})
                print(f"  {name}: exit {run.returncode}, verified {verified}, same as clean {same}, {len(answers)} answers ({resets} reset), "
                      f"{sent} bytes vs {clean_bytes} clean ({100 * (sent - clean_bytes) / max(1, clean_bytes):+.2f}%), {seconds:.1f} s", flush=True)
        finally:
            proxy.kill()
            self.nginx.stop()
            self.empty_trash()
        when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        lines = [f"Measured {when} by `Benchmarks/run --chaos{' --quick' if self.quick else ''}`: through `scripts/fault-proxy` "
                 "(10% of answers reset at a random offset, the large file's first three too; 50 ms before each answer), "
                 "beside the same sync straight from nginx. Bytes received are what the proxy sent, resets included.", "",
                 "| case | completed and verified | answers | resets | seconds (clean) | bytes received | clean bytes | extra |",
                 "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: |"]
        for r in self.rows:
            lines.append(f"| {r['case']} | {'yes' if r['ok'] else 'NO'} | {r['requests']} | {r['resets']} | {r['seconds']:.1f} ({r['clean_seconds']:.1f}) "
                         f"| {r['sent']} | {r['clean_bytes']} | {100 * (r['sent'] - r['clean_bytes']) / max(1, r['clean_bytes']):+.2f}% |")
        table = "\n".join(lines)
        print("\n" + table)
        results = os.path.join(ROOT, "Benchmarks", "results")
        os.makedirs(results, exist_ok=True)
        with open(os.path.join(results, "chaos-quick.md" if self.quick else "chaos.md"), "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--breeze", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--chaos", action="store_true", help="only the chaos figure: syncs through scripts/fault-proxy")
    parser.add_argument("--runs", type=int, help="timed runs per tool (3; 1 with --quick)")
    parser.add_argument("--baseline", help="another breeze binary, run in turn with this one in every case "
                        "(results in Benchmarks/results/baseline[-quick].md)")
    parser.add_argument("--work", default=os.environ.get("BENCH_WORK", "/tmp/freshair-bench"))
    parser.add_argument("--in-place", action="store_true",
                        help="write the outputs in --work as it is, not on a journaled ext4 of its own (scripts/lib/journaled_fs.py)")
    arguments = parser.parse_args()
    (Chaos if arguments.chaos else Bench)(arguments).run()
