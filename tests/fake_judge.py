"""A multimodal judge faked on 127.0.0.1, for the judge's tests: an OpenAI-compatible chat server that accepts a
request only if it holds images (base64 JPEG or PNG data URLs in OpenAI's image_url content parts) and answers
with recorded verdicts, in order."""

import base64
import io
import json
import re

from PIL import Image

from local_server import LocalServer, QuietHandler


def chat_completion(content, model="llava:13b"):
    return {"id": "chatcmpl-judge", "object": "chat.completion", "created": 1700000000, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1500, "completion_tokens": 40, "total_tokens": 1540}}  # fmt: skip


def verdict_answer(verdict, reason):
    """An answer as a chatty model gives it: a sentence, then the JSON object in a code fence."""
    return f'Looking at the floor across the frames.\n```json\n{json.dumps({"verdict": verdict, "reason": reason})}\n```'


class FakeJudgeServer(LocalServer):
    """Answers /v1/chat/completions with the recorded `answers` (texts), one per request. A request without images,
    or with an image that is not a decodable JPEG/PNG data URL, gets 400. `requests` holds, per accepted request,
    the model asked, the text sent and the decoded images (PIL)."""

    def __init__(self, *answers):
        self.answers, self.requests = list(answers), []
        fake = self

        class Handler(QuietHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                try:
                    text, images = fake.read(body["messages"][0]["content"])
                except ValueError as e:
                    return self.answer(400, {"error": {"message": str(e), "type": "invalid_request_error"}})
                fake.requests.append({"path": self.path, "model": body["model"], "text": text, "images": images})
                self.answer(200, chat_completion(fake.answers.pop(0)))

            def answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        super().__init__(Handler, path="/v1")

    @staticmethod
    def read(content):
        if not isinstance(content, list):
            raise ValueError("no images: the content is plain text")
        texts, images = [], []
        for part in content:
            if part["type"] == "text":
                texts.append(part["text"])
            elif part["type"] == "image_url":
                match = re.fullmatch(r"data:image/(jpeg|png);base64,(.+)", part["image_url"]["url"], re.S)
                if not match:
                    raise ValueError("an image_url that is not a base64 JPEG or PNG data URL")
                try:
                    image = Image.open(io.BytesIO(base64.b64decode(match.group(2), validate=True)))
                    image.load()
                except Exception as e:
                    raise ValueError(f"an image that does not decode: {e}") from None
                images.append(image)
        if not images:
            raise ValueError("no images in the request")
        return "".join(texts), images
