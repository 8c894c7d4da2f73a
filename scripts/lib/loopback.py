"""nginx on 127.0.0.1 for the benchmark and the kill sweep: a free port, its own config and log."""
import os, socket, subprocess, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nginx:
    def __init__(self, root, home):
        self.home = home
        os.makedirs(home, exist_ok=True)
        self.port = free_port()
        self.log = os.path.join(home, "access.log")
        open(self.log, "w").close()
        conf = f"""
daemon off; master_process on; worker_processes 2; pid {home}/nginx.pid; error_log {home}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  log_format bench '$status $body_bytes_sent $request_method $uri';
  access_log {home}/access.log bench;
  client_body_temp_path {home}/cb; proxy_temp_path {home}/px; fastcgi_temp_path {home}/fc; uwsgi_temp_path {home}/uw; scgi_temp_path {home}/sc;
  sendfile on; tcp_nopush on; keepalive_requests 100000;
  default_type application/octet-stream;
  server {{ listen 127.0.0.1:{self.port}; root {root}; autoindex on; }}
}}"""
        with open(os.path.join(home, "nginx.conf"), "w") as f:
            f.write(conf)
        self.process = subprocess.Popen(["/usr/sbin/nginx", "-p", home, "-c", os.path.join(home, "nginx.conf")],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("nginx did not start")

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def mark(self):
        with open(self.log) as f:
            return len(f.readlines())

    def lines_since(self, mark):
        """The log's lines after `mark`, each split into its fields: status, body bytes, method, path."""
        time.sleep(0.05)  # nginx writes the line as the response completes
        with open(self.log) as f:
            return [line.split() for line in f.readlines()[mark:] if line.strip()]

    def since(self, mark):
        """(requests, body bytes) logged after `mark`."""
        lines = self.lines_since(mark)
        return len(lines), sum(int(fields[1]) for fields in lines if len(fields) > 1)

    def statuses_since(self, mark):
        """The status of every request logged after `mark`."""
        return [int(fields[0]) for fields in self.lines_since(mark)]

    def stop(self):
        self.process.terminate()
        self.process.wait()
