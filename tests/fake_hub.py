"""A Hugging Face Hub that takes uploads and serves them back, on 127.0.0.1, for tests that run huggingface_hub's real
code with no network: the four calls HfApi.create_repo and HfApi.create_commit make for files committed in the commit
itself, and the two a download of an uploaded file makes (listing a repo's files, fetching one)."""

import base64
import hashlib
import json

from local_server import LocalServer, QuietHandler


class FakeHub(LocalServer):
    """Answers POST /api/repos/create, /api/validate-yaml, /api/models/{repo_id}/preupload/{revision} (every file
    "regular": sent inside the commit, base64) and /api/models/{repo_id}/commit/{revision} as the Hub does, and keeps
    what it received: `repos` (the create payloads), `files` ({repo_id: {path: bytes}}), `commits` ({repo_id: [summary]})
    and `authorization` (the Authorization headers seen). Serves the files back: GET /api/models/{repo_id}/tree/main
    (the listing) and HEAD and GET /{repo_id}/resolve/main/{path}; `downloads` records the paths fetched. With `status`
    set, it answers every request with that status instead."""

    def __init__(self, status=None):
        self.status, self.repos, self.files, self.commits, self.authorization, self.downloads = status, [], {}, {}, [], []
        hub = self

        class Handler(QuietHandler):
            def do_HEAD(self):
                self.serve(body=False)

            def do_GET(self):
                self.serve(body=True)

            def serve(self, body):
                parts = self.path.split("?")[0].split("/")
                if hub.status is not None:
                    return self.reply({"error": "the fake Hub is down"}, hub.status)
                if parts[:3] == ["", "api", "models"] and parts[5:7] == ["tree", "main"]:  # the repo's files
                    files = hub.files.get(f"{parts[3]}/{parts[4]}", {})
                    return self.reply([{"type": "file", "path": path, "size": len(data), "oid": hashlib.sha1(data).hexdigest()}
                                       for path, data in files.items()])  # fmt: skip
                data = hub.files.get(f"{parts[1]}/{parts[2]}", {}).get("/".join(parts[5:])) if parts[3:5] == ["resolve", "main"] else None
                if data is None:
                    return self.reply({"error": "no such file"}, 404)
                hub.downloads.append((self.command, "/".join(parts[5:])))
                self.send_response(200)
                self.send_header("X-Repo-Commit", "1" * 40)
                self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                hub.authorization.append(self.headers.get("Authorization"))
                if hub.status is not None:
                    return self.reply({"error": "the fake Hub is down"}, hub.status)
                path = self.path.split("?")[0]
                if path == "/api/repos/create":
                    payload = json.loads(body)
                    hub.repos.append(payload)
                    return self.reply({"url": f"{hub.url}/{payload['organization']}/{payload['name']}"})
                if path == "/api/validate-yaml":
                    return self.reply({})
                parts = path.split("/")  # '', api, models, owner, name, preupload|commit, revision
                if len(parts) == 7 and parts[:3] == ["", "api", "models"]:
                    repo_id = f"{parts[3]}/{parts[4]}"
                    if parts[5] == "preupload":
                        files = json.loads(body)["files"]
                        return self.reply({"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]})
                    if parts[5] == "commit":
                        lines = [json.loads(line) for line in body.splitlines() if line.strip()]
                        received = hub.files.setdefault(repo_id, {})
                        for line in lines:
                            if line["key"] == "file":
                                received[line["value"]["path"]] = base64.b64decode(line["value"]["content"])
                        hub.commits.setdefault(repo_id, []).append(lines[0]["value"]["summary"])
                        return self.reply({"commitUrl": f"{hub.url}/{repo_id}/commit/{'1' * 40}", "commitOid": "1" * 40})
                self.reply({"error": f"not served here: {path}"}, 404)

            def reply(self, payload, status=200):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        super().__init__(Handler)


def hub_env(environ, tmp_path, endpoint, token="hf_fake_token"):
    """The environment for a child process that talks to the Hub at `endpoint` only: no HF_ settings of ours, a fresh
    HF_HOME, the token (None: no token)."""
    env = {k: v for k, v in environ.items() if not k.startswith("HF_")}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(tmp_path / "hf_home"), HF_HUB_DISABLE_TELEMETRY="1")
    if token is not None:
        env["HF_TOKEN"] = token
    return env
