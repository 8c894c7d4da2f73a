#!/usr/bin/env python3
"""A real fleet behind a real cache: FreshAir devices syncing from Ceph through an nginx CDN edge.

    Benchmarks/run --fleet [--quick]        (builds breeze and FleetDevices, then runs this)
    Benchmarks/fleet.py --breeze BIN --devices-binary BIN [--quick] [--devices 1000] [--naive 50]
        [--interval 60] [--duration 240] [--publish-at 75] [--outage-at 120] [--outage 20]
        [--files 100] [--file-kb 20] [--layouts paths,objects] [--no-model] [--json] [--out DIR]

For each layout: a single-node Ceph cluster (scripts/lib/start-ceph-rgw.sh) is the origin and
nginx with proxy_cache (scripts/lib/start-cdn.sh, scripts/lib/cdn-nginx.conf) the CDN edge.
v1 of a bundle of `files` random files of `file-kb` KB is released signed with `breeze release`
(documents and content at a path cached for `ttl` seconds, objects for a year). `FleetDevices`
runs `devices` FreshAir devices, each with its own store and pinning the key, and `naive`
devices that fetch the whole manifest and every file at every check, all checking every
`interval` seconds ±20% on a compressed clock (60 s stands for an hour, so the 1 s TTL stands for
a minute). At `publish-at` v2 (one file in a hundred changed) is released while the fleet checks;
at `outage-at` radosgw is killed (SIGKILL) for `outage` seconds and started again.

Measured from the logs of radosgw and of the cache, not from the devices' own counters: origin
requests and bytes per second, the cache's verdicts and hit ratio, requests per check (a
no-change check must be one request), origin requests per device-check for FreshAir and naive
devices. From the devices' stores: the adoption curve of v2 and that every device ends on v2
with its store verified intact (`BundleStore.verify()`); from the devices' checks: every
failure and why. Then Benchmarks/fleet-model runs with the same parameters and the measured
and predicted curves go on one chart. Results: Benchmarks/results/fleet.md and fleet.png
(fleet-quick.* with --quick).
"""

import argparse
import datetime
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts" / "lib"))
from loopback import free_port  # noqa: E402  (the ports bench.py and the kill sweep use)

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "otakey", "AWS_SECRET_ACCESS_KEY": "otasecret", "AWS_REGION": "us-east-1"}
EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def log(message):
    print(f"fleet: {message}", file=sys.stderr, flush=True)


class Origin:
    """Ceph's S3 gateway, with radosgw killed and started again on demand."""

    def __init__(self, folder):
        self.folder = folder
        script = ROOT / "scripts/lib/start-ceph-rgw.sh"
        # A port found free can be taken before a daemon binds it, and a start can race another
        # cluster's (the test suite's): try again on other ports, as the tests' CephGateway does.
        for attempt in range(3):
            self.port, self.monitor = free_port(), free_port()
            started = subprocess.run(["bash", str(script), str(folder), str(self.port), str(self.monitor)],
                                     stdin=subprocess.DEVNULL, capture_output=True, text=True)
            if started.returncode == 0:
                break
            self.stop()
            log(f"start-ceph-rgw.sh failed (attempt {attempt + 1} of 3): {(started.stdout + started.stderr)[-600:]}")
        else:
            raise SystemExit("start-ceph-rgw.sh failed three times: see above")
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log = folder / "log/client.rgw.log"

    def create_bucket(self, name):
        subprocess.run(["curl", "-sf", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "otakey:otasecret",
                        "-H", f"x-amz-content-sha256: {EMPTY_SHA256}", "-X", "PUT", f"{self.endpoint}/{name}"],
                       check=True, stdout=subprocess.DEVNULL)

    def gateway_pid(self):
        return int((self.folder / "run/client.rgw.pid").read_text())

    def kill_gateway(self):
        os.kill(self.gateway_pid(), signal.SIGKILL)

    def start_gateway(self):
        # The daemon must not hold this process's output open: whoever reads it would wait for it.
        subprocess.run(["radosgw", "-c", str(self.folder / "ceph.conf"), "-n", "client.rgw"], check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if subprocess.run(["curl", "-sf", "-o", "/dev/null", self.endpoint + "/"]).returncode == 0:
                return
            time.sleep(0.1)
        raise SystemExit("radosgw did not come back")

    def stop(self):
        for pid_file in (self.folder / "run").glob("*.pid"):
            try:
                pid = int(pid_file.read_text())
                if Path(f"/proc/{pid}/comm").read_text().strip() in ("ceph-mon", "ceph-osd", "radosgw"):
                    os.kill(pid, signal.SIGKILL)
            except (OSError, ValueError):
                pass


class Edge:
    """nginx with proxy_cache in front of the origin."""

    def __init__(self, folder, origin):
        self.folder = folder
        self.port = free_port()
        subprocess.run(["bash", str(ROOT / "scripts/lib/start-cdn.sh"), str(folder), str(self.port),
                        f"127.0.0.1:{origin.port}"], check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = folder / "access.log"

    def stop(self):
        try:
            os.kill(int((self.folder / "nginx.pid").read_text()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


EDGE_LINE = re.compile(r'^(\S+) (\d+) (\d+) (\S+) "([^"]*)" "([^"]*)" "(\S+) (\S+) [^"]*" "([^"]*)"$')
ORIGIN_LINE = re.compile(
    r'beast: \S+ \S+ - \S+ \[([^\]]+)\] "(\S+) (\S+) [^"]*" (\d+) (\d+) - "([^"]*)"')
AGENT = re.compile(r"fleet-(device|naive)/(\d+)(?: check/(\d+))?")


def read_edge_log(path, start, end, prefix):
    """The cache's requests for `prefix` between the wall times `start` and `end`."""
    requests = []
    for line in path.read_text().splitlines():
        match = EDGE_LINE.match(line)
        if not match:
            continue
        when, status, sent, verdict, upstream, _, method, uri, agent = match.groups()
        when = float(when)
        if not (start <= when <= end) or not uri.startswith(prefix):
            continue
        who = AGENT.search(agent)
        requests.append({"time": when, "status": int(status), "bytes": int(sent), "verdict": verdict,
                         "upstream": upstream, "uri": uri,
                         "kind": who.group(1) if who else "other", "device": int(who.group(2)) if who else None,
                         "check": int(who.group(3)) if who and who.group(3) else None})
    return requests


def read_origin_log(path, start, end, prefix):
    """radosgw's requests for `prefix` between `start` and `end` (its access lines, debug_rgw 1)."""
    requests = []
    for line in path.read_text(errors="replace").splitlines():
        match = ORIGIN_LINE.search(line)
        if not match:
            continue
        stamp, method, uri, status, sent, agent = match.groups()
        when = datetime.datetime.strptime(stamp, "%d/%b/%Y:%H:%M:%S.%f %z").timestamp()
        if not (start <= when <= end) or not uri.startswith(prefix):
            continue
        who = AGENT.search(agent)
        requests.append({"time": when, "method": method, "status": int(status), "bytes": int(sent),
                         "kind": who.group(1) if who else "publisher"})
    return requests


def release(breeze, bundle, target, origin, key, layout, ttl):
    started = time.time()
    output = subprocess.run([breeze, "release", str(bundle), target, "--endpoint", origin.endpoint, "--acl", "public-read",
                    "--key", str(key), "--layout", layout,
                    "--cache-control-documents", f"public, max-age={ttl}, must-revalidate",
                    "--cache-control-content", f"public, max-age={ttl}", "--json"],
                   check=True, env={**os.environ, **CREDENTIALS}, capture_output=True, text=True).stdout
    return started, time.time(), json.loads(output)["sequence"]


def percentile_time(times, share, count):
    """Seconds until `share` of `count` devices had adopted (None: never)."""
    index = int(-(-share * count // 1)) - 1
    ordered = sorted(times)
    return ordered[index] if index < len(ordered) else None


def run_layout(options, layout, work, origin, key_path, public_key):
    """One scenario in one layout, with edges of its own; the measurements."""
    edge = naive_edge = None
    try:
        edge = Edge(work / f"edge-{layout}", origin)
        # The naive devices' own edge: the origin requests each kind causes stay apart.
        naive_edge = Edge(work / f"naive-edge-{layout}", origin)
        bundle = work / f"{layout}/Content.freshair"
        bundle.mkdir(parents=True)
        for index in range(options.files):
            (bundle / f"f{index:04}.bin").write_bytes(os.urandom(options.file_kb * 1024))
        prefix = f"/fleet/{layout}/Content.freshair/"
        target = f"s3://fleet/{layout}/Content.freshair"
        release(options.breeze, bundle, target, origin, key_path, layout, options.ttl)
        manifest_bytes = (bundle / "manifest.json").stat().st_size
        stores = work / f"stores-{layout}"
        events = work / f"events-{layout}.jsonl"
        devices = subprocess.Popen([
            options.devices_binary, "--url", edge.url + prefix, "--naive-url", naive_edge.url + prefix,
            "--devices", str(options.devices),
            "--naive", str(options.naive), "--interval", str(options.interval), "--jitter", str(options.jitter),
            "--duration", str(options.duration), "--stores", str(stores), "--key", public_key,
            "--events", str(events), "--seed", str(options.seed)])
        launched = time.time()
        log(f"{layout}: {options.devices} devices and {options.naive} naive ones checking every "
            f"{options.interval} s for {options.duration} s")

        def wait_until(offset):
            time.sleep(max(0.0, launched + offset - time.time()))

        wait_until(options.publish_at)
        changed = max(1, round(options.files * options.changed))
        for index in range(changed):
            (bundle / f"f{index:04}.bin").write_bytes(os.urandom(options.file_kb * 1024))
        publish_start, publish_end, v2 = release(options.breeze, bundle, target, origin, key_path, layout, options.ttl)
        log(f"{layout}: v2 released at {publish_start - launched:.1f} s ({publish_end - publish_start:.1f} s)")
        outage = None
        if options.outage > 0:
            wait_until(options.outage_at)
            origin.kill_gateway()
            down = time.time()
            log(f"{layout}: radosgw killed at {down - launched:.1f} s")
            wait_until(options.outage_at + options.outage)
            origin.start_gateway()
            outage = (down - launched, time.time() - launched)
            log(f"{layout}: radosgw answering again at {outage[1]:.1f} s")
        if devices.wait() != 0:
            raise SystemExit(f"FleetDevices exited with {devices.returncode}")
        finished = time.time()
        lines = [json.loads(line) for line in events.read_text().splitlines()]
        summary = lines[-1]
        checks = lines[:-1]
        launched = summary["startedAt"]  # the devices' clock, not this process's guess of it
        edge_requests = read_edge_log(edge.log, launched - 1, finished + 1, prefix)
        edge_requests += read_edge_log(naive_edge.log, launched - 1, finished + 1, prefix)
        origin_requests = read_origin_log(origin.log, launched - 1, finished + 1, prefix)
        result = measure(options, layout, launched, publish_start, publish_end, v2, outage, checks, summary,
                         edge_requests, origin_requests, manifest_bytes)
        shutil.rmtree(stores, ignore_errors=True)
        return result
    finally:
        for running in (edge, naive_edge):
            if running:
                running.stop()


def measure(options, layout, launched, publish_start, publish_end, v2, outage, checks, summary,
            edge_requests, origin_requests, manifest_bytes):
    fleet = [c for c in checks if c["kind"] == "freshair"]
    naive = [c for c in checks if c["kind"] == "naive"]
    published = publish_end - launched
    # Adoption: when each device's check first ended with v2 live, from the publish.
    adopted = {}
    for check in sorted(fleet, key=lambda c: c["end"]):
        if check.get("sequence") == v2 and check["device"] not in adopted:
            adopted[check["device"]] = max(0.0, check["end"] - published)
    # A no-change check is one request in the cache's log: its requests carry the check's number
    # (`check/N` in the User-Agent), so they are counted by check, not by a window of time.
    by_check = Counter((r["device"], r["check"]) for r in edge_requests if r["kind"] == "device")
    no_change = [c for c in fleet if c["outcome"] == "notModified"]
    one_request = sum(1 for c in no_change if by_check[(c["device"], c["number"])] == 1)
    verdicts = Counter(r["verdict"] for r in edge_requests if r["kind"] == "device")
    naive_verdicts = Counter(r["verdict"] for r in edge_requests if r["kind"] == "naive")
    served_by_edge = sum(verdicts[v] for v in ("HIT", "REVALIDATED", "STALE", "UPDATING"))
    device_origin = [r for r in origin_requests if r["kind"] == "device"]
    naive_origin = [r for r in origin_requests if r["kind"] == "naive"]
    after = [r for r in device_origin if r["time"] - launched >= published]
    checks_after = [c for c in fleet if c["start"] >= published]
    seconds = int(options.duration) + 1
    per_second = [0] * seconds
    for request in device_origin:
        second = int(request["time"] - launched)
        if 0 <= second < seconds:
            per_second[second] += 1
    failures = Counter()
    failed_when = defaultdict(list)
    for check in fleet:
        if check["outcome"] == "failed":
            reason = re.sub(r"[0-9a-f]{64}", "…", check.get("error") or "")[:160]
            failures[reason] += 1
            failed_when[reason].append(round(check["start"], 1))
    final = summary["devices"]
    return {
        "layout": layout,
        "devices": options.devices,
        "naive devices": options.naive,
        "v2 released at (s)": round(publish_start - launched, 2),
        "v2 visible at (s)": round(published, 2),
        "outage (s)": [round(x, 1) for x in outage] if outage else None,
        "device checks": len(fleet),
        "naive checks": len(naive),
        "cache requests from devices": sum(1 for r in edge_requests if r["kind"] == "device"),
        "cache verdicts (devices)": dict(verdicts),
        "cache verdicts (naive)": dict(naive_verdicts),
        "cache hit ratio (devices)": served_by_edge / max(1, sum(verdicts.values())),
        "cache HIT only (devices)": verdicts["HIT"] / max(1, sum(verdicts.values())),
        "origin requests (devices)": len(device_origin),
        "origin requests (naive)": len(naive_origin),
        "origin requests (publisher)": sum(1 for r in origin_requests if r["kind"] == "publisher"),
        "origin MB (devices)": sum(r["bytes"] for r in device_origin) / 1e6,
        "origin requests/s, mean": len(device_origin) / options.duration,
        "origin requests/s, peak": max(per_second),
        "origin requests per device-check": len(device_origin) / max(1, len(fleet)),
        "origin requests per device-check after v2": len(after) / max(1, len(checks_after)),
        "origin requests per naive check": len(naive_origin) / max(1, len(naive)),
        "cache KB sent per device check": sum(r["bytes"] for r in edge_requests if r["kind"] == "device")
        / 1e3 / max(1, len(fleet)),
        "cache KB sent per naive check": sum(r["bytes"] for r in edge_requests if r["kind"] == "naive")
        / 1e3 / max(1, len(naive)),
        "requests per device check (cache log)": sum(1 for r in edge_requests if r["kind"] == "device") / max(1, len(fleet)),
        "no-change checks": len(no_change),
        "no-change checks of exactly one request (cache log)": one_request,
        "adopted v2": len(adopted),
        "time to 50% (s)": percentile_time(adopted.values(), 0.50, options.devices),
        "time to 95% (s)": percentile_time(adopted.values(), 0.95, options.devices),
        "time to 99% (s)": percentile_time(adopted.values(), 0.99, options.devices),
        "failed checks": sum(failures.values()),
        "failures": [{"count": n, "error": reason, "at (s)": failed_when[reason][:8]}
                     for reason, n in failures.most_common()],
        "devices on v2 and intact": sum(1 for d in final if d.get("sequence") == v2 and d["intact"]),
        "devices not on v2 or damaged": [d for d in final if d.get("sequence") != v2 or not d["intact"]][:10],
        "peak RSS MB": summary["peakRSSBytes"] / 1e6,
        "peak RSS KB per device": summary["peakRSSBytes"] / 1e3 / max(1, options.devices + options.naive),
        "manifest KB": manifest_bytes / 1e3,
        "adoption (s after v2)": sorted(adopted.values()),
        "origin requests per second": per_second,
    }


def load_model():
    loader = importlib.machinery.SourceFileLoader("fleet_model", str(ROOT / "Benchmarks/fleet-model"))
    spec = importlib.util.spec_from_loader("fleet_model", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def model_options(options, result, layout):
    """fleet-model's parameters for what ran: one edge, the compressed clock, this bundle."""
    return argparse.Namespace(
        devices=options.devices, interval=options.interval, jitter=options.jitter, ttl=options.ttl,
        content_ttl=(10 ** 9 if layout == "objects" else options.ttl), edges=1,
        bundle_mb=options.files * options.file_kb * 1024 / 1e6, changed=options.changed, files=options.files,
        manifest_kb=result["manifest KB"], publish_at=result["v2 visible at (s)"],
        hours=options.duration / 3600, seed=options.seed, cache_clock=1,
        outage_at=result["outage (s)"][0] if result["outage (s)"] else None,
        outage=(result["outage (s)"][1] - result["outage (s)"][0]) if result["outage (s)"] else 0)


def compare_with_model(options, results, chart_path):
    model = load_model()
    comparison = {}
    predictions = {}
    for result in results:
        parameters = model_options(options, result, result["layout"])
        predicted = model.simulate(parameters, naive=False)
        table = model.summary(predicted, parameters)
        fleet_checks = model.check_times(__import__("numpy").random.default_rng(parameters.seed),
                                         parameters.devices, parameters.interval, parameters.jitter,
                                         parameters.hours, False)[0]
        after = fleet_checks >= parameters.publish_at
        origin_after = predicted["origin_requests"][int(parameters.publish_at):].sum()
        rows = {
            "time to 50% (s)": (result["time to 50% (s)"], table["time to 50% (s)"]),
            "time to 95% (s)": (result["time to 95% (s)"], table["time to 95% (s)"]),
            "time to 99% (s)": (result["time to 99% (s)"], table["time to 99% (s)"]),
            "origin requests per device-check after v2": (
                result["origin requests per device-check after v2"], float(origin_after / max(1, after.sum()))),
        }
        comparison[result["layout"]] = {
            name: {"measured": m, "model": p,
                   "gap": None if not m or p is None else (p - m) / m}
            for name, (m, p) in rows.items()}
        predictions[result["layout"]] = predicted
    draw(options, results, predictions, chart_path)
    return comparison


def draw(options, results, predictions, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    figure, axes = plt.subplots(2, 1, figsize=(10, 8))
    colors = {"paths": "tab:blue", "objects": "tab:orange"}
    for result in results:
        layout = result["layout"]
        color = colors.get(layout, "tab:green")
        published = result["v2 visible at (s)"]
        measured = np.array(result["adoption (s after v2)"])
        x = np.linspace(0, options.duration - published, 400)
        axes[0].plot(x, np.searchsorted(np.sort(measured), x, side="right") / options.devices * 100,
                     color=color, label=f"{layout}: measured")
        predicted = predictions[layout]["adopted_at"] - published
        axes[0].plot(x, np.searchsorted(np.sort(predicted), x, side="right") / options.devices * 100,
                     color=color, linestyle="--", label=f"{layout}: model")
        measured_rate = np.array(result["origin requests per second"], dtype=float)
        bins = max(1, int(options.interval // 12))
        trim = len(measured_rate) // bins * bins
        seconds = np.arange(trim // bins) * bins
        axes[1].plot(seconds, measured_rate[:trim].reshape(-1, bins).mean(axis=1), color=color,
                     label=f"{layout}: measured (radosgw log)")
        model_rate = predictions[layout]["origin_requests"][:trim]
        axes[1].plot(seconds[: len(model_rate) // bins], model_rate[: len(model_rate) // bins * bins]
                     .reshape(-1, bins).mean(axis=1), color=color, linestyle="--", label=f"{layout}: model")
        if result["outage (s)"]:
            for axis in axes[1:]:
                axis.axvspan(*result["outage (s)"], color=color, alpha=0.1)
    axes[0].set_xlabel("seconds after v2 was released")
    axes[0].set_ylabel("devices on v2 (%)")
    axes[1].set_xlabel("seconds into the run (shaded: radosgw killed)")
    axes[1].set_ylabel(f"origin requests/s ({bins} s mean)")
    axes[1].set_yscale("symlog")
    for axis in axes:
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    figure.suptitle(f"{options.devices} devices + {options.naive} naive, a check every {options.interval} s "
                    f"±{options.jitter:.0%} (an hour, compressed), TTL {options.ttl} s, one nginx edge, Ceph origin; "
                    f"{options.files} files × {options.file_kb} KB", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def report(options, results, comparison, million):
    lines = [f"# Fleet: {options.devices} devices through an nginx cache in front of Ceph", "",
             f"Run {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} by "
             f"`Benchmarks/run --fleet{' --quick' if options.quick else ''}`: {options.devices} FreshAir devices and "
             f"{options.naive} naive ones in one process, a check every {options.interval} s ±{options.jitter:.0%} "
             f"for {options.duration} s ({options.interval} s stands for an hour, so the {options.ttl} s TTL stands "
             f"for a minute); a bundle of {options.files} files × {options.file_kb} KB "
             f"({options.files * options.file_kb / 1024:.1f} MB; {options.devices * options.files * options.file_kb / 1024 / 1024:.1f} GB "
             f"in all the stores), {options.changed:.0%} changed by v2, released at {options.publish_at} s"
             + (f"; radosgw killed at {options.outage_at} s for {options.outage} s." if options.outage else "."),
             "", "Origin figures are radosgw's access lines; cache figures nginx's; adoption and integrity the "
             "devices' stores (`BundleStore.verify()`).", ""]
    keys = [k for k in results[0] if not isinstance(results[0][k], (list, dict)) or k in ("outage (s)",)]
    lines.append("| | " + " | ".join(r["layout"] for r in results) + " |")
    lines.append("| --- | " + " | ".join("---:" for _ in results) + " |")
    for key in keys:
        cells = []
        for result in results:
            value = result[key]
            cells.append("-" if value is None else f"{value:,.3f}".rstrip("0").rstrip(".") if isinstance(value, float)
                         else str(value))
        lines.append(f"| {key} | " + " | ".join(cells) + " |")
    for result in results:
        lines += ["", f"**{result['layout']}**: the devices' cache verdicts {result['cache verdicts (devices)']}; "
                  f"the naive devices' {result['cache verdicts (naive)']}."]
        if result["failures"]:
            lines.append("Failed checks (every device tried again at its next check):")
            for failure in result["failures"]:
                lines.append(f"- {failure['count']} × `{failure['error']}` (at {failure['at (s)']} s)")
        else:
            lines.append("No check failed.")
    if comparison:
        lines += ["", "## Measured and predicted (Benchmarks/fleet-model with the same parameters)", "",
                  "| layout | figure | measured | model | gap |", "| --- | --- | ---: | ---: | ---: |"]
        for layout, rows in comparison.items():
            for name, row in rows.items():
                gap = "-" if row["gap"] is None else f"{row['gap']:+.0%}"
                fmt = lambda v: "-" if v is None else f"{v:,.3f}"
                lines.append(f"| {layout} | {name} | {fmt(row['measured'])} | {fmt(row['model'])} | {gap} |")
    if million:
        lines += ["", "## A million devices, with the corrected model", "", million]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--breeze", required=True)
    parser.add_argument("--devices-binary", required=True)
    parser.add_argument("--quick", action="store_true", help="100 devices for 20 s, no outage")
    parser.add_argument("--devices", type=int)
    parser.add_argument("--naive", type=int)
    parser.add_argument("--interval", type=float)
    parser.add_argument("--jitter", type=float, default=0.2)
    parser.add_argument("--duration", type=float)
    parser.add_argument("--publish-at", type=float)
    parser.add_argument("--outage-at", type=float)
    parser.add_argument("--outage", type=float)
    parser.add_argument("--ttl", type=int, default=1)
    parser.add_argument("--files", type=int)
    parser.add_argument("--file-kb", type=int)
    parser.add_argument("--changed", type=float, default=0.01)
    parser.add_argument("--layouts", default="paths,objects")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-model", action="store_true")
    parser.add_argument("--model-only", action="store_true",
                        help="run the model again against the last run's saved measurements")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs, events) to look into")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "Benchmarks/results"))
    options = parser.parse_args()
    defaults = (dict(devices=100, naive=10, interval=5, duration=20, publish_at=6.5, outage_at=0, outage=0,
                     files=20, file_kb=4) if options.quick else
                dict(devices=1000, naive=50, interval=60, duration=240, publish_at=75, outage_at=120, outage=20,
                     files=100, file_kb=20))
    for name, value in defaults.items():
        if getattr(options, name) is None:
            setattr(options, name, value)
    name = "fleet-quick" if options.quick else "fleet"
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    if options.model_only:
        # The model again against the last run's measurements (Benchmarks/results/fleet.json).
        saved = json.loads((out / f"{name}.json").read_text())
        for key, value in saved["options"].items():
            if key not in ("model_only", "out", "json", "breeze", "devices_binary"):
                setattr(options, key, value)
        finish(options, saved["results"], out, name)
        return
    work = Path(tempfile.mkdtemp(prefix="freshair-fleet-"))
    try:
        key = work / "release.key"
        generated = subprocess.run([options.breeze, "keygen", str(key)], check=True, capture_output=True, text=True)
        public_key = generated.stdout.strip().splitlines()[-1]
        origin = Origin(work / "ceph")
        try:
            origin.create_bucket("fleet")
            results = [run_layout(options, layout, work, origin, key, public_key)
                       for layout in options.layouts.split(",")]
        finally:
            origin.stop()
    finally:
        if not options.keep:
            shutil.rmtree(work, ignore_errors=True)
    if not options.json:
        (out / f"{name}.json").write_text(json.dumps({"options": vars(options), "results": results}))
    finish(options, results, out, name)


def finish(options, results, out, name):
    comparison = None
    million = None
    if not options.no_model:
        comparison = compare_with_model(options, results, out / f"{name}.png")
        million = ""
        for layout, extra in (("paths", []), ("objects", ["--content-ttl", str(365 * 86400)])):
            table = subprocess.run([sys.executable, str(ROOT / "Benchmarks/fleet-model"), "--chart",
                                    str(out / f"fleet-model-{layout}.png")] + extra,
                                   capture_output=True, text=True, check=True).stdout
            command = " ".join(["Benchmarks/fleet-model"] + extra)
            million += f"The {layout} layout (`{command}`, its defaults: an hourly "\
                       f"check ±20%, 20 edges, a 60 s TTL, a 50 MB bundle, 1% changed):\n\n{table}\n"
    text = report(options, results, comparison, million)
    if not options.json:
        (out / f"{name}.md").write_text(text)
        print(text)
    else:
        print(json.dumps({"results": results, "model": comparison}, indent=1))


if __name__ == "__main__":
    main()
