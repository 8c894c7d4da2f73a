"""nginx on 127.0.0.1 for the benchmark and the kill sweep: a free port, its own config and log."""
import os, socket, subprocess, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def throwaway_ca(folder):
    """A CA made for this run and a certificate it signed for 127.0.0.1 (openssl): returns the
    paths of the CA's certificate, the server's certificate and the server's key."""
    os.makedirs(folder, exist_ok=True)
    ca, cert, key = (os.path.join(folder, name) for name in ("ca.pem", "server.pem", "server.key"))
    quiet = {"check": True, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": folder}
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", ca,
                    "-days", "2", "-subj", "/CN=FreshAir benchmark CA", "-addext", "basicConstraints=critical,CA:TRUE",
                    "-addext", "keyUsage=keyCertSign"], **quiet)
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", "server.csr",
                    "-subj", "/CN=127.0.0.1"], **quiet)
    with open(os.path.join(folder, "san.txt"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    subprocess.run(["openssl", "x509", "-req", "-in", "server.csr", "-CA", ca, "-CAkey", "ca.key", "-CAcreateserial",
                    "-out", cert, "-days", "2", "-extfile", "san.txt"], **quiet)
    return ca, cert, key


class Nginx:
    """With `tls` (a certificate and its key), the same root is also served over https on
    `https_url`, HTTP/2 offered beside HTTP/1.1 as a CDN does."""
    def __init__(self, root, home, tls=None):
        self.home = home
        os.makedirs(home, exist_ok=True)
        self.port = free_port()
        self.tls_port = free_port() if tls else None
        tls_server = (f"server {{ listen 127.0.0.1:{self.tls_port} ssl http2; ssl_certificate {tls[0]}; "
                      f"ssl_certificate_key {tls[1]}; root {root}; autoindex on; }}") if tls else ""
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
  {tls_server}
}}"""
        with open(os.path.join(home, "nginx.conf"), "w") as f:
            f.write(conf)
        self.process = subprocess.Popen(["/usr/sbin/nginx", "-p", home, "-c", os.path.join(home, "nginx.conf")],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for port in [self.port] + ([self.tls_port] if tls else []):
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                    break
                except OSError:
                    time.sleep(0.02)
            else:
                raise RuntimeError("nginx did not start")

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def https_url(self):
        return f"https://127.0.0.1:{self.tls_port}"

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
