"""A throwaway HTTP server on 127.0.0.1, for tests that run real network code (huggingface_hub, the OpenAI SDK)
with no network."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass


class LocalServer:
    """Serves `handler` (a QuietHandler subclass) on a free port from a daemon thread; `url` is its address
    followed by `path`."""

    def __init__(self, handler, path=""):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}{path}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()
