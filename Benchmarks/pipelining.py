"""What HTTP/1.1 pipelining would save: the requests alone, without breeze.

    python3 Benchmarks/pipelining.py URL FOLDER [--connections 16] [--ahead 1 8 64] [--runs 3]

GETs every file under FOLDER (a bundle folder that the server at URL serves, manifest and pack
left out) over `--connections` connections, with at most N requests sent ahead on each for
every N of `--ahead` (1: one at a time, as curl --parallel and breeze do; more: pipelining).
Bodies are counted and dropped; wall time includes the server's. Prints one line per run. The
figures of docs/BENCHMARKS.md ("What pipelining would save") came from
`Benchmarks/run`'s corpus and nginx: URL http://127.0.0.1:PORT, FOLDER
/tmp/freshair-bench/www/small-10000.freshair.
"""
import argparse, os, selectors, socket, time


def fetch(host, port, paths, connections, ahead):
    selector = selectors.DefaultSelector()
    states = {}
    for i in range(connections):
        s = socket.create_connection((host, port))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
        states[s] = {"paths": paths[i::connections], "sent": 0, "done": 0, "buffer": bytearray(), "need": None}
        selector.register(s, selectors.EVENT_READ)

    def send(s, state):
        count = min(ahead - (state["sent"] - state["done"]), len(state["paths"]) - state["sent"])
        if count > 0:
            batch = state["paths"][state["sent"]:state["sent"] + count]
            s.setblocking(True)
            s.sendall(b"".join(b"GET /%s HTTP/1.1\r\nHost: bench\r\n\r\n" % p.encode() for p in batch))
            s.setblocking(False)
            state["sent"] += count

    for s, state in states.items():
        send(s, state)
    answered = body_bytes = 0
    while states:
        for key, _ in selector.select():
            s, state = key.fileobj, states[key.fileobj]
            data = s.recv(262144)
            if not data:
                raise SystemExit("the server closed a connection before answering every request")
            buffer = state["buffer"]
            buffer += data
            while True:
                if state["need"] is None:
                    end = buffer.find(b"\r\n\r\n")
                    if end < 0:
                        break
                    head = bytes(buffer[:end]).lower()
                    if not head.startswith(b"http/1.1 200"):
                        raise SystemExit(f"not a 200: {head.splitlines()[0].decode(errors='replace')}")
                    start = head.find(b"content-length:")
                    stop = head.find(b"\r\n", start)
                    state["need"] = end + 4 + int(head[start + 15:stop if stop > 0 else None])
                if len(buffer) < state["need"]:
                    break
                body_bytes += state["need"]
                del buffer[:state["need"]]
                state["need"] = None
                state["done"] += 1
                answered += 1
            send(s, state)
            if state["done"] == len(state["paths"]):
                selector.unregister(s)
                s.close()
                del states[s]
    return answered, body_bytes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("folder")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--ahead", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    host, port = args.url.split("//")[1].rstrip("/").split(":")
    root = os.path.dirname(os.path.abspath(args.folder))
    paths = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(args.folder)
                   for f in fs if f != "manifest.json" and not f.endswith(".freshairpack") and not f.startswith("."))
    for _ in range(args.runs):
        for ahead in args.ahead:
            started, before = time.perf_counter(), os.times()
            answered, body_bytes = fetch(host, int(port), paths, args.connections, ahead)
            after = os.times()
            cpu = after.user - before.user + after.system - before.system
            print(f"{args.connections} connections, {ahead:3d} ahead: {answered} files in {time.perf_counter() - started:.3f} s, "
                  f"{cpu:.2f} CPU-seconds, {body_bytes} bytes", flush=True)


if __name__ == "__main__":
    main()
