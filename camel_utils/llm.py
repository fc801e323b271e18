"""Asking a language model, for generate_policy.py (which asks for guide code) and camel_utils/judge.py (which shows a
multimodal model frames of a video). One function `ask(prompt, images=()) -> (text, details)` per backend:

- Gemini through google-genai, Google's maintained SDK (key from GEMINI_API_KEY or GOOGLE_API_KEY);
- any OpenAI-compatible chat server (Ollama, vLLM, llama.cpp, OpenAI itself; key, if any, from OPENAI_API_KEY).

`images` are (mime type, bytes) pairs sent after the prompt: Gemini's inline data parts, OpenAI's image_url
content parts holding base64 data URLs. 408, 429 and 5xx answers and dropped connections are retried with
exponential backoff; what still fails is a ModelError with one line.
"""

import base64
import os
import socket
import urllib.parse

from camel_utils.cli import UsageError
from camel_utils.guide_eval import one_line

DEFAULT_GEMINI_MODEL = "gemini-pro-latest"  # an alias that follows Google's current Pro model; the paper's gemini-exp-1206 is retired


class ModelError(Exception):
    """A request that still failed after its retries, or a response without text. The message is one line."""

    def __init__(self, message, details=None):
        super().__init__(message)
        self.details = details or {}


def gemini_backend(model, temperature=None, max_output_tokens=None, timeout=600.0, attempts=5, http_client=None,
                   other_flags="--base-url and --model"):  # fmt: skip
    """Gemini through google-genai. `http_client` (an httpx2.Client) is for tests, which pass a mock transport;
    `other_flags` names the flags that choose an OpenAI-compatible server instead, for the missing-key error."""
    from google import genai  # imported here: slow to import, and not needed to evaluate or print prompts
    from google.genai import errors, types

    api_key = os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY")  # the SDK's order when both are set
    if not api_key:
        raise UsageError(f"no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or use {other_flags} for an OpenAI-compatible server")
    http_options = types.HttpOptions(
        timeout=int(timeout * 1000),  # milliseconds
        retry_options=types.HttpRetryOptions(attempts=attempts, http_status_codes=[408, 429, 500, 502, 503, 504]),
        httpx_client=http_client,
    )
    client = genai.Client(api_key=api_key, http_options=http_options)
    # newer Gemini models reject candidate_count > 1, hence one request per candidate
    config = types.GenerateContentConfig(temperature=temperature, max_output_tokens=max_output_tokens)

    def ask(prompt, images=()):
        contents = prompt
        if images:
            parts = [types.Part.from_text(text=prompt)] + [types.Part.from_bytes(data=data, mime_type=mime) for mime, data in images]
            contents = [types.Content(role="user", parts=parts)]
        try:
            response = client.models.generate_content(model=model, contents=contents, config=config)
        except errors.APIError as e:
            raise ModelError(f"Gemini answered {e.code} {e.status or ''}: {one_line(e.message)}") from None
        except Exception as e:  # connection errors and timeouts, once the retries are spent
            raise ModelError(f"no answer from Gemini: {type(e).__name__}: {one_line(e)}") from None
        first = response.candidates[0] if response.candidates else None
        reason = getattr(first.finish_reason, "value", first.finish_reason) if first else None
        usage = response.usage_metadata.model_dump(mode="json", exclude_none=True) if response.usage_metadata else None
        details = {"model_version": response.model_version, "finish_reason": reason, "usage": usage}
        if not response.text:  # thinking models can spend the whole token budget before writing anything
            blocked = response.prompt_feedback.block_reason if response.prompt_feedback else None
            why = f"prompt blocked: {getattr(blocked, 'value', blocked)}" if blocked else f"finish reason {reason}"
            raise ModelError(f"the response has no text ({why}; if MAX_TOKENS, raise --max-output-tokens)", details)
        return response.text, details

    return ask


def check_server_listens(base_url, flag="--base-url", timeout=5.0):
    """Fail at once, not after every retry, when nothing listens at `base_url` (a local server not started yet)."""
    url = urllib.parse.urlsplit(base_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise UsageError(f"{flag} {base_url}: expected an http:// or https:// address, e.g. http://localhost:11434/v1")
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        socket.create_connection((url.hostname, port), timeout=timeout).close()
    except ConnectionRefusedError:
        raise UsageError(f"{flag} {base_url}: connection refused: is the server at {base_url} running?") from None
    except OSError as e:  # unknown host, unreachable network, timeout
        raise UsageError(f"{flag} {base_url}: cannot connect ({one_line(e.strerror or e)}): is the server at {base_url} running?") from None


def openai_backend(base_url, model, temperature=None, max_output_tokens=None, timeout=600.0, attempts=5):
    """Any OpenAI-compatible chat server: Ollama, vLLM, llama.cpp, or OpenAI itself."""
    import openai

    api_key = os.environ.get("OPENAI_API_KEY") or "unused"  # local servers ignore it, the SDK insists on one
    client = openai.OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=attempts - 1)
    options = {k: v for k, v in [("temperature", temperature), ("max_tokens", max_output_tokens)] if v is not None}

    def ask(prompt, images=()):
        content = prompt
        if images:
            content = [{"type": "text", "text": prompt}] + [
                {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"}}
                for mime, data in images
            ]  # fmt: skip
        try:
            response = client.chat.completions.create(model=model, messages=[{"role": "user", "content": content}], **options)
        except openai.APIStatusError as e:
            raise ModelError(f"{base_url} answered {e.status_code}: {one_line(e.message)}") from None
        except openai.APIError as e:  # connection errors and timeouts, once the retries are spent
            raise ModelError(f"no answer from {base_url}: {type(e).__name__}: {one_line(e)}") from None
        first = response.choices[0] if response.choices else None
        usage = response.usage.model_dump(mode="json", exclude_none=True) if response.usage else None
        details = {"model_version": response.model, "finish_reason": first.finish_reason if first else None, "usage": usage}
        if not first or not first.message.content:
            raise ModelError(f"the response has no text (finish reason {details['finish_reason']})", details)
        return first.message.content, details

    return ask
