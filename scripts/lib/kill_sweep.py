"""The kill sweep behind scripts/kill-sweep: SIGKILL `breeze sync` at random moments and check the store.

Each scenario has content before (v1, already installed in a template store) and after (v2, on
the server). A trial copies the template, starts `breeze sync`, kills it after a delay drawn
uniformly from [0, the scenario's unkilled run time], and checks:
  1. the live folder holds exactly v1's files or exactly v2's (every digest, nothing extra);
  2. a second, unkilled sync exits 0 and leaves exactly v2;
  3. afterwards staging/ and partials/ are empty and versions/ holds nothing but versions and
     their records (the live one and at most one earlier);
  4. the second sync did not wait on a lock (it took less than the lock's 60 s timeout).
"""
import argparse, hashlib, json, os, random, re, shutil, signal, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loopback import Nginx  # noqa: E402


def digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tree(folder):
    """{relative path: sha256} of the regular files below `folder`, not following links."""
    found = {}
    for base, dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(base, name)
            if os.path.islink(path):
                continue
            found[os.path.relpath(path, folder)] = digest(path)
    return found


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def random_bytes(rng, size):
    return rng.randbytes(size)


class Scenario:
    """One delivery mode and kind of update: content v1 and v2, and how to sync and check them."""

    def __init__(self, sweep, mode, kind):
        self.sweep, self.mode, self.kind = sweep, mode, kind
        self.name = f"{mode}/{kind}"
        self.home = os.path.join(sweep.work, mode + "-" + kind)
        self.www = os.path.join(self.home, "www")
        os.makedirs(self.www)

    # -- content -----------------------------------------------------------------------------
    def files(self, version):
        """The content files of a version: small text files, some changed, one added, one
        removed between versions; `large` adds a 64 MB file that changes whole; `chunks` a
        64 MB file of which 40 scattered 10 KB regions change (an update by changed chunks)."""
        rng = random.Random(f"{self.name}-{version}")
        files = {f"docs/page{i}.txt": f"page {i}, version {version if i % 3 == 0 else 1}\n".encode() for i in range(40)}
        files["images/logo.bin"] = random.Random(f"{self.name}-logo").randbytes(300_000)
        files[f"only-in-v{version}.txt"] = f"only in version {version}\n".encode()
        if self.kind == "large":
            files["media/movie.bin"] = random_bytes(rng, 64 << 20)
        if self.kind == "pack":
            # A first sync from a pack (`generate --pack`): killed while it unpacks, mostly.
            files.update({f"many/{i // 100}/f{i}.txt": f"small {i}, version {version}\n".encode() * 40 for i in range(3000)})
        if self.kind == "chunks":
            movie = bytearray(random_bytes(random.Random(f"{self.name}-movie"), 64 << 20))
            if version > 1:
                for region in range(40):
                    offset = region * ((64 << 20) // 40) + 4096
                    movie[offset:offset + 10240] = rng.randbytes(10240)
            files["media/movie.bin"] = bytes(movie)
        return files

    def publish(self, version):
        """Puts version `version` on the server; returns what a device should then have."""
        if self.mode == "bundle":
            return self.publish_bundle(version)
        if self.mode == "package":
            return self.publish_package(version)
        return self.publish_repository(version)

    def publish_bundle(self, version):
        folder = os.path.join(self.www, "App.freshair")
        shutil.rmtree(folder, ignore_errors=True)
        for path, data in self.files(version).items():
            write(os.path.join(folder, path), data)
        if self.kind == "environment":
            # Two children, chosen by appVersion: the update is the device's, not the server's.
            for child in ("Old.freshair", "New.freshair"):
                for i in range(10):
                    write(os.path.join(folder, child, f"part{i}.txt"), f"{child} part {i}\n".encode())
        subprocess.run([self.sweep.breeze, "generate", folder] + (["--pack"] if self.kind == "pack" else []),
                       check=True, stdout=subprocess.DEVNULL)
        if self.kind == "environment":
            manifest_path = os.path.join(folder, "manifest.json")
            with open(manifest_path) as f:
                entries = json.load(f)
            conditions = {"Old.freshair/manifest.json": "appVersion < 2.0", "New.freshair/manifest.json": "appVersion >= 2.0"}
            for entry in entries:
                if entry["filename"] in conditions:
                    entry["condition"] = conditions[entry["filename"]]
            with open(manifest_path, "w") as f:
                json.dump(entries, f, indent=2)
        subprocess.run([self.sweep.breeze, "hash", folder], check=True, stdout=subprocess.DEVNULL)
        self.bump_times(folder, version)
        plan = subprocess.run([self.sweep.breeze, "plan", folder, "--json", "--env", f"appVersion={self.app_version(version)}"],
                              check=True, capture_output=True, text=True)
        return {"": {entry["path"]: self.hash_of(folder, entry["path"]) for entry in json.loads(plan.stdout)}}

    def hash_of(self, folder, path):
        return digest(os.path.join(folder, path))

    def publish_package(self, version):
        """A `.tgz`; for `chunks`, a signed `.tar` (its chunk index named in the `.sig`), which a
        device rebuilds from the files it installed and the chunks it lacks."""
        source = os.path.join(self.home, f"package-v{version}")
        shutil.rmtree(source, ignore_errors=True)
        for path, data in self.files(version).items():
            write(os.path.join(source, path), data)
        archive = os.path.join(self.www, self.package_name)
        subprocess.run(["tar", "-czf" if archive.endswith(".tgz") else "-cf", archive, "-C", source, "."], check=True)
        self.bump_times(self.www, version)
        if self.kind == "chunks":
            subprocess.run([self.sweep.breeze, "sign", archive, "--key", self.signing_key()],
                           check=True, stdout=subprocess.DEVNULL)
        return {"": tree(source)}

    @property
    def package_name(self):
        return "content.tar" if self.kind == "chunks" else "content.tgz"

    def signing_key(self):
        """The publisher's key (made on first use); `public_key` is what devices pin."""
        path = os.path.join(self.home, "publisher.key")
        if not os.path.exists(path):
            printed = subprocess.run([self.sweep.breeze, "keygen", path], check=True, capture_output=True, text=True)
            self.public_key = re.search(r"[A-Za-z0-9+/]{43}=", printed.stdout).group(0)
        return path

    def publish_repository(self, version):
        repository = os.path.join(self.www, "zoo")
        expected = {}
        names = ["cats", "dogs", "birds"] if version == 1 else ["cats", "dogs", "fish"]
        for name in names:
            source = os.path.join(self.home, f"repo-v{version}", name)
            shutil.rmtree(source, ignore_errors=True)
            files = self.files(version) if name == "cats" else {f"{name}.txt": f"{name}\n".encode()}
            for path, data in files.items():
                write(os.path.join(source, path), data)
            subprocess.run([self.sweep.breeze, "repo", "add", source, repository, "--name", name],
                           check=True, stdout=subprocess.DEVNULL)
            expected[name] = tree(source)
        if version == 2:
            # birds left the index: `repo add` only adds, so drop it by hand as a publisher would.
            index_path = os.path.join(repository, "index.json")
            with open(index_path) as f:
                index = json.load(f)
            index["bundles"].pop("birds", None)
            with open(index_path, "w") as f:
                json.dump(index, f)
        self.bump_times(repository, version)
        return expected

    def bump_times(self, folder, version):
        """nginx's validators come from the second of the mtime: each version gets its own."""
        stamp = time.time() + version * 100
        for base, _, files in os.walk(folder):
            for name in files:
                os.utime(os.path.join(base, name), (stamp, stamp))

    @property
    def is_first_sync(self):
        """Killed during a device's first sync, with nothing installed before."""
        return self.kind in ("cold", "pack")

    def app_version(self, version):
        return "1.0" if self.kind != "environment" or version == 1 else "2.5"

    # -- syncing and checking ---------------------------------------------------------------
    def command(self, directory, version):
        url = self.sweep.nginx.url
        if self.mode == "bundle":
            base = f"{url}/{os.path.relpath(self.www, self.sweep.work)}/App.freshair/"
            return [self.sweep.breeze, "sync", base, directory, "--env", f"appVersion={self.app_version(version)}"]
        if self.mode == "package":
            command = [self.sweep.breeze, "sync", f"{url}/{os.path.relpath(self.www, self.sweep.work)}/{self.package_name}",
                       directory]
            return command + (["--trusted-key", self.public_key] if self.kind == "chunks" else [])
        command = [self.sweep.breeze, "sync", f"{url}/{os.path.relpath(self.www, self.sweep.work)}/", directory, "--repo", "zoo"]
        return command + (["--atomic"] if self.kind == "atomic" else [])

    def live(self, directory):
        """{bundle name: {path: sha256}} as the live folder(s) stand now."""
        if self.mode == "repository":
            names = [n for n in os.listdir(directory) if not n.startswith(".")] if os.path.isdir(directory) else []
            return {name: tree(os.path.join(directory, name)) for name in names}
        return {"": tree(directory)} if os.path.exists(directory) else {}

    def state_folder(self, directory):
        """Where a repository keeps its state: inside DIR, or beside it when it switches whole."""
        parent, name = os.path.split(directory)
        return os.path.join(parent, f".{name}.freshair-repository") if self.kind == "atomic" else os.path.join(directory, ".freshair-repository")

    def stores(self, directory):
        if self.mode == "repository":
            bundles = os.path.join(self.state_folder(directory), "bundles")
            return [os.path.join(bundles, n) for n in os.listdir(bundles)] if os.path.isdir(bundles) else []
        parent, name = os.path.split(directory)
        return [os.path.join(parent, f".{name}.freshair-store")]

    def leftovers(self, directory):
        """Anything a finished sync should not have left: staging, partials, stray files."""
        found = []
        for store in self.stores(directory):
            for folder in ("staging", "partials", "interrupted"):
                path = os.path.join(store, folder)
                if os.path.isdir(path) and os.listdir(path):
                    found += [f"{folder}/{n}" for n in os.listdir(path)]
            versions = os.path.join(store, "versions")
            names = os.listdir(versions) if os.path.isdir(versions) else []
            folders = [n for n in names if n.isdigit()]
            records = [n for n in names if n.endswith(".json") and n[:-5].isdigit()]
            # A version installed from a .tar keeps the package's layout (and index) beside its record.
            layouts = [n for n in names if n.split(".")[0] in folders and n.endswith((".tar-layout", ".tar-chunks"))]
            found += [f"versions/{n}" for n in names if n not in folders and n not in records and n not in layouts]
            if len(folders) > 2:
                found.append(f"versions/: {len(folders)} versions kept")
        if self.kind == "atomic":
            snapshots = os.path.join(self.state_folder(directory), "snapshots")
            if len(os.listdir(snapshots)) != 1:
                found.append(f"snapshots/: {sorted(os.listdir(snapshots))}")
        return found


class Sweep:
    def __init__(self, options):
        self.work = tempfile.mkdtemp(prefix="freshair-kill-sweep-")
        os.chmod(self.work, 0o755)  # nginx's workers (nobody, when run as root) read it
        # A copy of its own: a rebuild during the sweep must not change the binary under test.
        self.breeze = os.path.join(self.work, "breeze")
        shutil.copy2(options.breeze, self.breeze)
        self.nginx = Nginx(self.work, os.path.join(self.work, ".nginx"))
        self.rng = random.Random(options.seed)
        self.trials = options.trials
        self.only = options.only

    def run(self):
        kinds = {"bundle": ["cold", "pack", "incremental", "environment", "large", "chunks"],
                 "package": ["cold", "incremental", "large", "chunks"],
                 "repository": ["cold", "incremental", "large", "atomic"]}
        scenarios = [Scenario(self, mode, kind) for mode, list_ in kinds.items() for kind in list_]
        if self.only:
            scenarios = [scenario for scenario in scenarios if self.only in scenario.name]
        passed = failed = 0
        try:
            for index, scenario in enumerate(scenarios):
                count = self.trials // len(scenarios) + (1 if index < self.trials % len(scenarios) else 0)
                ok, failures, killed_during = self.sweep(scenario, count)
                passed += ok
                failed += len(failures)
                print(f"{scenario.name:24} {ok}/{count} passed; killed while running {killed_during} times"
                      + "".join(f"\n    {failure}" for failure in failures[:5]), flush=True)
        finally:
            self.nginx.stop()
            shutil.rmtree(self.work, ignore_errors=True)
        print(f"kill sweep: {passed} passed, {failed} failed")
        return failed == 0

    def sweep(self, scenario, count):
        old = scenario.publish(1)
        template = os.path.join(scenario.home, "template")
        os.makedirs(template)
        directory = os.path.join(template, "Content")
        if not scenario.is_first_sync:
            subprocess.run(scenario.command(directory, 1), check=True, stdout=subprocess.DEVNULL)
            if scenario.live(directory) != old:
                return 0, [f"setup: version 1 did not install as published"], 0
        new = scenario.publish(2)
        # How long an unkilled sync takes, so the kill moments spread over the whole run.
        durations = []
        for _ in range(3):
            trial = self.copy(template, scenario.home)
            started = time.monotonic()
            subprocess.run(scenario.command(os.path.join(trial, "Content"), 2), check=True, stdout=subprocess.DEVNULL)
            durations.append(time.monotonic() - started)
            shutil.rmtree(trial)
        duration = sorted(durations)[1]
        ok, failures, killed_during = 0, [], 0
        for number in range(count):
            trial = self.copy(template, scenario.home)
            directory = os.path.join(trial, "Content")
            delay = self.rng.uniform(0, duration)
            process = subprocess.Popen(scenario.command(directory, 2), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(delay)
            if process.poll() is None:
                killed_during += 1
            process.send_signal(signal.SIGKILL)
            process.wait()
            problem = self.check(scenario, directory, {} if scenario.is_first_sync else old, new)
            if problem:
                failures.append(f"trial {number + 1}, killed at {delay:.3f} s of {duration:.3f} s: {problem}")
            else:
                ok += 1
            shutil.rmtree(trial)
        return ok, failures, killed_during

    def copy(self, template, home):
        trial = tempfile.mkdtemp(prefix="trial-", dir=home)
        shutil.rmtree(trial)
        shutil.copytree(template, trial, symlinks=True)
        return trial

    def check(self, scenario, directory, old, new):
        live = scenario.live(directory)
        if scenario.kind == "atomic":
            # The whole set switches at once: all old or all new.
            if live not in (old, new) and not (not old and not live):
                return f"the repository is neither all version 1 nor all version 2: {sorted(live)}"
        elif scenario.mode == "repository":
            # Each bundle switches on its own: every bundle is its old or its new version.
            for name, files in live.items():
                if files != new.get(name) and files != old.get(name):
                    return f"bundle {name} is neither version 1 nor version 2 ({len(files)} files)"
        elif live not in (old, new) and not (not old and live in ({}, {"": {}})):
            return f"the live folder is neither version 1 nor version 2 ({sum(len(v) for v in live.values())} files)"
        started = time.monotonic()
        rerun = subprocess.run(scenario.command(directory, 2), capture_output=True, text=True)
        elapsed = time.monotonic() - started
        if rerun.returncode != 0:
            return f"the next sync failed ({rerun.returncode}): {rerun.stderr.strip()[:300]}"
        if elapsed > 60:
            return f"the next sync took {elapsed:.0f} s: a lock was left held"
        if scenario.live(directory) != new:
            return "after the next sync the live folder is not version 2"
        leftovers = scenario.leftovers(directory)
        if leftovers:
            return "left behind: " + ", ".join(leftovers[:5])
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--breeze", required=True)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", help="run the scenarios whose name contains this (bundle/chunks)")
    parser.add_argument("--release", action="store_true", help="(handled by scripts/kill-sweep)")
    options = parser.parse_args()
    sys.exit(0 if Sweep(options).run() else 1)


if __name__ == "__main__":
    main()
