"""The publisher's kill sweep behind `scripts/kill-sweep --publisher`: SIGKILL `breeze release`,
`publish` and `revert` at random moments, into a folder served by nginx and into Ceph's S3
gateway, in both layouts, and check what devices find.

A scenario is a destination (folder or ceph), a layout (objects or paths) and a command. A trial
starts the command, which takes the destination from release `old` to release `new`, kills it
after a delay drawn uniformly from [0, the command's unkilled run time], then:
  1. a device that had `old` installed syncs, and a fresh device syncs: each must end with exactly
     `old`'s files or exactly `new`'s. A refusal (a nonzero exit) or a mix is a violation in the
     object layout; in the path layout it is counted and reported (its files keep their names, so
     a killed release leaves some overwritten until the next release);
  2. the same command runs again, unkilled: it must succeed, and both devices then hold exactly
     `new` (the rerun converges);
  3. no scratch copy of the source is left behind by the killed run once the rerun has finished.

Commands: `release SOURCE DEST --key K` (new content), `publish SIGNED DEST` (a bundle signed by
`breeze sign --sequence N+1`), `revert DEST --to S --key K` (a release in the history; object layout
only, as revert is). Prints one line per scenario and a closing "N trials, M violations".
"""
import argparse, hashlib, json, os, random, shutil, signal, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from loopback import Nginx, free_port  # noqa: E402

ACCESS, SECRET = "otakey", "otasecret"


def tree(folder):
    """{relative path: sha256} of the regular files below `folder`."""
    found = {}
    for base, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(base, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return found


class Target:
    """Where releases go: the destination breeze writes, and the URL devices read it from."""

    def __init__(self, name, destination, url, extra, environment):
        self.name, self.destination, self.url = name, destination, url
        self.extra, self.environment = extra, environment


class Sweep:
    def __init__(self, options):
        self.breeze, self.options = options.breeze, options
        self.rng = random.Random(options.seed)
        self.work = tempfile.mkdtemp(prefix="freshair-publisher-sweep-")
        os.chmod(self.work, 0o755)  # nginx's workers read the served folder as another user
        self.scratch = os.path.join(self.work, "tmp")
        os.makedirs(self.scratch)
        self.key = os.path.join(self.work, "release.key")
        subprocess.run([self.breeze, "keygen", self.key], check=True, capture_output=True)
        with open(self.key) as f:
            self.public = next(line.split(":", 1)[1].strip() for line in f if line.startswith("# public:"))
        self.version = 0
        self.ceph = None

    # -- running breeze ----------------------------------------------------------------------
    def environment(self, target):
        # Scratch copies go to this sweep's own TMPDIR, so leftovers can be counted.
        return dict(os.environ, TMPDIR=self.scratch, **target.environment)

    def command(self, target, kind, source=None, to=None):
        if kind == "release":
            words = ["release", source, target.destination, "--key", self.key]
        elif kind == "publish":
            words = ["publish", source, target.destination]
        else:
            words = ["revert", target.destination, "--to", str(to), "--key", self.key]
        return [self.breeze] + words + target.extra

    def run(self, target, words):
        return subprocess.run(words, capture_output=True, text=True, env=self.environment(target))

    def live_sequence(self, target):
        status = self.run(target, [self.breeze, "status", target.destination, "--json"] + target.extra[:2])
        return json.loads(status.stdout)["live"]["sequence"]

    # -- content -----------------------------------------------------------------------------
    def content(self, folder):
        """A new version's files in `folder`/App: 30 small files, a third of them changed each
        time, and a 1 MB file that changes whole, so a release takes long enough to kill inside."""
        self.version += 1
        version = self.version
        source = os.path.join(folder, f"v{version}", "App")
        os.makedirs(os.path.join(source, "docs"))
        for i in range(30):
            with open(os.path.join(source, "docs", f"page{i}.txt"), "w") as f:
                f.write(f"page {i}, version {version if i % 3 == 0 else 1}\n")
        with open(os.path.join(source, "media.bin"), "wb") as f:
            f.write(random.Random(version).randbytes(1 << 20))
        return source

    def signed_copy(self, target, source, layout):
        """`source` generated, hashed and signed at the sequence above the live one, for the
        name devices read it by: what `publish` takes."""
        sequence = self.live_sequence(target) + 1
        identity = target.destination.rstrip("/").rsplit("/", 1)[-1]
        for words in (["generate", source], ["hash", source],
                      ["sign", source, "--key", self.key, "--sequence", str(sequence), "--layout", layout,
                       "--identity", identity]):
            subprocess.run([self.breeze] + words, check=True, capture_output=True)
        return source

    # -- devices -----------------------------------------------------------------------------
    def sync(self, target, directory):
        words = [self.breeze, "sync", target.url, directory, "--trusted-key", self.public, "--attempts", "2"]
        result = subprocess.run(words, capture_output=True, text=True)
        return result.returncode, result.stderr.strip()

    def files(self, directory):
        """The content a device holds: its live folder without the root manifest (whose
        sequence differs between a release and its revert to the same content)."""
        found = tree(directory) if os.path.isdir(directory) else {}
        found.pop("manifest.json", None)
        return found

    # -- scenarios ---------------------------------------------------------------------------
    def scenario(self, target, layout, kind, trials):
        home = tempfile.mkdtemp(prefix=f"{target.name}-{layout}-{kind}-", dir=self.work)
        os.chmod(home, 0o755)
        destination = target.destination
        target = Target(target.name, f"{destination}/{os.path.basename(home)}", f"{target.url}{os.path.basename(home)}/",
                        target.extra, target.environment)
        first = self.content(home)
        done = self.run(target, self.command(target, "release", first) + ["--layout", layout])
        if done.returncode != 0:
            return 0, [f"setup: the first release failed: {done.stderr.strip()[:300]}"], 0, 0
        installed = os.path.join(home, "device")
        code, error = self.sync(target, installed)
        if code != 0:
            return 0, [f"setup: the first sync failed: {error[:300]}"], 0, 0
        history = [(self.live_sequence(target), self.files(installed))]
        duration, violations, refusals, killed_during = 0.0, [], 0, 0
        for number in range(trials + 1):
            old = self.files(installed)
            if kind == "revert":
                # Back to a release with other content than the live one.
                choices = [entry for entry in history if entry[1] != old]
                if not choices:
                    source = self.content(home)
                    self.run(target, self.command(target, "release", source))
                    self.sync(target, installed)
                    history.append((self.live_sequence(target), self.files(installed)))
                    continue
                to, new = self.rng.choice(choices)
                words = self.command(target, kind, to=to)
            else:
                source = self.content(home)
                new = tree(source)
                if kind == "publish":
                    source = self.signed_copy(target, source, layout)
                words = self.command(target, kind, source)
            if number == 0 or duration == 0:
                # Unkilled, to time it: the kill moments spread over a whole run.
                started = time.monotonic()
                result = self.run(target, words)
                duration = time.monotonic() - started
                if result.returncode != 0:
                    return 0, [f"setup: an unkilled {kind} failed: {result.stderr.strip()[:300]}"], 0, 0
                self.sync(target, installed)
                if kind != "revert":
                    history.append((self.live_sequence(target), self.files(installed)))
                continue
            delay = self.rng.uniform(0, duration)
            process = subprocess.Popen(words, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                       env=self.environment(target))
            time.sleep(delay)
            if process.poll() is None:
                killed_during += 1
            process.send_signal(signal.SIGKILL)
            process.wait()
            fresh = tempfile.mkdtemp(prefix="fresh-", dir=home)
            shutil.rmtree(fresh)
            problems = []
            for name, directory in (("the installed device", installed), ("a fresh device", fresh)):
                code, error = self.sync(target, directory)
                have = self.files(directory)
                if code != 0:
                    if layout == "paths":
                        refusals += 1
                    else:
                        problems.append(f"{name} refused what it found ({code}): {error[:200]}")
                elif have != old and have != new:
                    problems.append(f"{name} holds neither the old release nor the new one exactly")
            # The rerun converges.
            rerun = self.run(target, words)
            if rerun.returncode != 0:
                problems.append(f"the rerun failed ({rerun.returncode}): {rerun.stderr.strip()[:300]}")
            for name, directory in (("the installed device", installed), ("a fresh device", fresh)):
                code, error = self.sync(target, directory)
                if code != 0:
                    problems.append(f"after the rerun {name} refused ({code}): {error[:200]}")
            settled = self.files(installed)
            if self.files(fresh) != settled:
                problems.append("after the rerun the two devices differ")
            if settled != new:
                problems.append("after the rerun the devices do not hold the new release")
            if kind != "revert":
                history.append((self.live_sequence(target), settled))
            shutil.rmtree(fresh, ignore_errors=True)
            shutil.rmtree(os.path.join(home, f".{os.path.basename(fresh)}.freshair-store"), ignore_errors=True)
            leftovers = [name for name in os.listdir(self.scratch) if name.startswith("breeze-release-")]
            if leftovers and kind != "publish":
                # A killed run's scratch copy, which the rerun (a later release) clears.
                problems.append(f"left in TMPDIR after the rerun: {', '.join(leftovers[:3])}")
            for problem in problems:
                violations.append(f"trial {number}, killed at {delay:.3f} s of {duration:.3f} s: {problem}")
        return trials, violations, refusals, killed_during

    # -- targets -----------------------------------------------------------------------------
    def targets(self):
        www = os.path.join(self.work, "www")
        os.makedirs(www)
        nginx = Nginx(www, os.path.join(self.work, "nginx"))
        found = [(Target("folder", www, f"http://127.0.0.1:{nginx.port}/", [], {}), nginx)]
        if "ceph" in self.options.targets:
            endpoint = os.environ.get("FRESHAIR_TEST_CEPH_ENDPOINT") or self.start_ceph()
            bucket = f"sweep-{os.getpid()}"
            environment = {"AWS_ACCESS_KEY_ID": ACCESS, "AWS_SECRET_ACCESS_KEY": SECRET}
            extra = ["--endpoint", endpoint, "--acl", "public-read"]
            found.append((Target("ceph", f"s3://{bucket}", f"{endpoint}/{bucket}/", extra, environment), None))
            self.bucket = (bucket, endpoint, environment)
        return [(target, server) for target, server in found if target.name in self.options.targets]

    def start_ceph(self):
        folder = os.path.join(self.work, "ceph")
        port, monitor = free_port(), free_port()
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "start-ceph-rgw.sh")
        subprocess.run(["bash", script, folder, str(port), str(monitor)], check=True, stdout=subprocess.DEVNULL)
        self.ceph = folder
        return f"http://127.0.0.1:{port}"

    def stop_ceph(self):
        if not self.ceph:
            return
        for daemon in ("client.rgw", "osd.0", "mon.a"):
            try:
                with open(os.path.join(self.ceph, "run", f"{daemon}.pid")) as f:
                    os.kill(int(f.read().strip()), signal.SIGKILL)
            except (OSError, ValueError):
                pass

    def make_bucket(self):
        if not hasattr(self, "bucket"):
            return
        bucket, endpoint, environment = self.bucket
        seed = self.content(os.path.join(self.work, "bucket"))
        subprocess.run([self.breeze, "release", seed, f"s3://{bucket}/seed", "--key", self.key, "--create-bucket",
                        "--endpoint", endpoint], check=True, capture_output=True, env=dict(os.environ, **environment))

    def sweep(self):
        kinds = [kind for kind in ("release", "publish", "revert") if kind in self.options.commands]
        total, failed, lines = 0, 0, []
        servers = []
        try:
            targets = self.targets()
            servers = [server for _, server in targets if server]
            self.make_bucket()
            for target, _ in targets:
                for layout in ("objects", "paths"):
                    for kind in kinds:
                        if kind == "revert" and layout == "paths":
                            continue  # revert needs the object layout; it says so and changes nothing
                        started = time.monotonic()
                        trials, violations, refusals, killed = self.scenario(target, layout, kind, self.options.trials)
                        total += trials
                        failed += len(violations)
                        line = (f"{target.name}/{layout}/{kind}: {trials} trials ({killed} killed mid-run), "
                                f"{len(violations)} violations")
                        if layout == "paths":
                            line += f", {refusals} device syncs refused after a kill (of {2 * trials})"
                        line += f", {time.monotonic() - started:.0f} s"
                        print(line, flush=True)
                        for violation in violations[:5]:
                            print("  " + violation, flush=True)
        finally:
            for server in servers:
                server.stop()
            self.stop_ceph()
        print(f"{total} trials, {failed} violations")
        if not self.options.keep:
            shutil.rmtree(self.work, ignore_errors=True)
        return failed == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--breeze", required=True)
    parser.add_argument("--trials", type=int, default=25, help="trials per scenario (8 scenarios by default)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--targets", default="folder,ceph")
    parser.add_argument("--commands", default="release,publish,revert")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument("--publisher", action="store_true", help="(handled by scripts/kill-sweep)")
    parser.add_argument("--release", action="store_true", help="(handled by scripts/kill-sweep)")
    options = parser.parse_args()
    # Stopped from outside: still stop nginx and Ceph (the `finally` runs on SystemExit).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(0 if Sweep(options).sweep() else 1)


if __name__ == "__main__":
    main()
