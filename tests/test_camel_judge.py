"""Specification of the multimodal judge (camel_utils/judge.py, --judge-model): frames taken from a real recorded video, sent
as images to an OpenAI-compatible server (a fake one on 127.0.0.1 that refuses requests without images) or to Gemini
(google-genai with an httpx2 MockTransport); the verdict and its reason shown beside the numbers, never deciding
the ranking; every failure a verdict "unjudged" with its reason, and a server that is not running one error line."""

import base64
import io
import json
import os
import socket
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")

import httpx2
import pytest
from PIL import Image

from camel_utils import guide_eval as ev
from camel_utils import judge as cj
from camel_utils.llm import ModelError, gemini_backend, openai_backend
from fake_judge import FakeJudgeServer, verdict_answer
from script_process import run_script

ROOT = Path(__file__).resolve().parents[1]  # the repository

STILL = """import numpy as np

def policy(obs):
    return np.clip(np.array([-2.0 * obs[1] - 0.2 * obs[7], 0.0, 0.0]), -1.0, 1.0)
"""
FORWARD = """import numpy as np

def policy(obs):
    torso_angle, torso_velocity = obs[1], obs[7]
    thigh = -0.6 * (torso_angle - 0.1) - 0.1 * torso_velocity
    return np.clip(np.array([thigh, -0.2, 0.3]), -1.0, 1.0)
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A candidate that ran: the STILL guide, one 40-step Hopper episode, filmed (10 frames at 31.25 per second)."""
    tmp = tmp_path_factory.mktemp("recorded")
    (tmp / "still.py").write_text(STILL)
    outcome = ev.run_episodes(str(tmp / "still.py"), "Hopper-v4", [1], max_episode_steps=40, video_path=str(tmp / "still.mp4"))
    assert outcome["error"] is None and outcome["video_error"] is None
    return tmp / "still.mp4", outcome


def evaluated_candidate(recorded, tmp_path):
    """A fresh PolicyResult for the recorded candidate, its video copied into tmp_path (the judge writes beside it)."""
    video, outcome = recorded
    copy = tmp_path / "still.mp4"
    copy.write_bytes(video.read_bytes())
    result = ev.PolicyResult(name="still", path="still.py", episodes=outcome["episodes"], video=str(copy))
    ev.summarize(result, 40)
    return result


def closed_port_url():
    with socket.socket() as s:  # a port on 127.0.0.1 that nothing listens on once this socket is closed
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


# ---------------------------------------------------------------------------------------------------------
# Frames, prompt, verdict
# ---------------------------------------------------------------------------------------------------------
def test_frames_are_evenly_spaced_from_the_first_to_the_last_of_a_recorded_video(recorded):
    video, _ = recorded
    frames = cj.video_frames(video, 6)
    times = [t for t, _ in frames]
    assert len(frames) == 6 and times[0] == 0.0 and times[-1] == pytest.approx(9 / 31.25)  # 10 frames: the last is index 9
    assert max(b - a for a, b in zip(times, times[1:])) - min(b - a for a, b in zip(times, times[1:])) <= 1 / 31.25 + 1e-9
    assert all(frame.shape == (480, 480, 3) for _, frame in frames)
    assert len(cj.video_frames(video, 50)) == 10  # never more frames than the video has
    image = Image.open(io.BytesIO(cj.jpeg(frames[0][1])))
    assert image.format == "JPEG" and image.size == (480, 480)


def test_prompt_names_the_env_the_frame_times_and_the_fixed_verdicts():
    prompt = cj.judge_prompt("Walker2d-v4", [0.0, 0.5, 1.25], max_seconds=8.0)
    assert "`Walker2d-v4`" in prompt and "3 frames" in prompt and "0.0 s, 0.5 s, 1.2 s" in prompt and "at most 8 s" in prompt
    assert "+x" in prompt and "${" not in prompt and all(f"`{verdict}`" in prompt for verdict in cj.VERDICTS)


@pytest.mark.parametrize("answer, verdict, reason", [
    ('{"verdict": "falls", "reason": "It tips over backwards."}', "falls", "It tips over backwards."),
    (verdict_answer("Walks_Forward ", "The floor slides left."), "walks_forward", "The floor slides left."),
    ('<think>maybe {"verdict": "other"}</think>\n{"verdict": "stands_still", "reason": "It balances."}', "stands_still", "It balances."),
])  # fmt: skip
def test_verdict_is_the_last_json_object_with_a_verdict_in_the_answer(answer, verdict, reason):
    assert cj.parse_verdict(answer) == (verdict, reason)


@pytest.mark.parametrize("answer, message", [
    ("It walks forward nicely.", "no JSON object with a verdict"),
    ('{"verdict": "dances", "reason": "?"}', "unknown verdict 'dances'"),
    ('{"reason": "no verdict here"}', "no JSON object with a verdict"),
])  # fmt: skip
def test_an_answer_without_a_known_verdict_is_refused_with_one_line(answer, message):
    with pytest.raises(ValueError, match=message):
        cj.parse_verdict(answer)


# ---------------------------------------------------------------------------------------------------------
# Failures: "unjudged" with the reason, never a crash
# ---------------------------------------------------------------------------------------------------------
def answering(*answers):
    def ask(prompt, images):
        answer = answers[0]
        if isinstance(answer, Exception):
            raise answer
        return answer, {"model_version": "stub"}

    return ask


@pytest.mark.parametrize("ask, reason", [
    (answering(ModelError("no answer from http://127.0.0.1:9/v1: APIConnectionError: Connection error.")),
     "the judge gave no answer: no answer from http://127.0.0.1:9/v1: APIConnectionError"),
    (answering("It seems to walk."), "no JSON object with a verdict"),
    (answering('{"verdict": "flies", "reason": "up it goes"}'), "unknown verdict 'flies'"),
])  # fmt: skip
def test_a_judge_failure_is_the_verdict_unjudged_with_its_reason(recorded, tmp_path, ask, reason):
    result = evaluated_candidate(recorded, tmp_path)
    cj.Judge(ask, "m", "stub", "Hopper-v4").look(result)
    assert result.verdict == "unjudged" and result.verdict_reason.startswith(reason)
    record = json.loads((tmp_path / "still.judge.json").read_text())
    assert record["verdict"] == "unjudged" and record["reason"] == result.verdict_reason and len(record["frame_times"]) == 6


def test_a_server_that_goes_down_mid_run_leaves_unjudged_not_a_crash(recorded, tmp_path):
    result = evaluated_candidate(recorded, tmp_path)
    url = closed_port_url()
    cj.Judge(openai_backend(url, "llava", timeout=5, attempts=1), "llava", "server", "Hopper-v4").look(result)
    assert result.verdict == "unjudged" and result.verdict_reason.startswith(f"the judge gave no answer: no answer from {url}")


def test_an_unreadable_video_or_none_is_unjudged(tmp_path):
    (tmp_path / "broken.mp4").write_bytes(b"not a video")
    broken = ev.PolicyResult(name="broken", path="broken.py", video=str(tmp_path / "broken.mp4"), score=1.0, mean_return=1.0)
    without = ev.PolicyResult(name="without", path="without.py", score=1.0, mean_return=1.0)
    failed = ev.PolicyResult(name="failed", path="failed.py", error="policy(obs) raised IndexError")
    judge = cj.Judge(answering('{"verdict": "falls", "reason": "x"}'), "m", "stub", "Hopper-v4")
    for result in (broken, without, failed):
        judge.look(result)
    assert broken.verdict == "unjudged" and broken.verdict_reason
    assert without.verdict == "unjudged" and without.verdict_reason == "no video to look at"
    assert failed.verdict is None  # a policy that failed its evaluation is not judged at all


# ---------------------------------------------------------------------------------------------------------
# An OpenAI-compatible server with image input, from the command line
# ---------------------------------------------------------------------------------------------------------
def run_cli(*args, cwd):
    return run_script(ROOT / "evaluate_policy.py", *args, cwd=cwd)


def test_judge_sees_the_frames_as_images_and_its_verdict_stands_beside_the_score_without_ranking(tmp_path):
    (tmp_path / "still.py").write_text(STILL)
    (tmp_path / "forward.py").write_text(FORWARD)
    # recorded verdicts, in evaluation order; the first contradicts the numbers, the second is no verdict at all
    server = FakeJudgeServer(verdict_answer("walks_forward", "It strides | forward."), "I cannot tell from these frames.")
    try:
        run = run_cli("--env-id", "Hopper-v4", "still.py", "forward.py", "--episodes", "1", "--max-episode-steps", "40",
                      "--video-dir", "videos", "--json", "r.json", "--markdown", "r.md", "--judge-model", "llava:13b",
                      "--judge-base-url", server.url, cwd=tmp_path)  # fmt: skip
    finally:
        server.close()
    assert run.returncode == 0, run.stderr[-2000:]

    # what the server received: six 480x480 JPEG frames of each video (fewer if it is shorter: one per 4 steps), the prompt
    report = json.loads((tmp_path / "r.json").read_text())
    by_name = {c["name"]: c for c in report["candidates"]}
    assert len(server.requests) == 2
    for request, name in zip(server.requests, ["still", "forward"]):
        frames = min(6, -(-by_name[name]["episodes"][0]["length"] // 4))
        assert request["path"] == "/v1/chat/completions" and request["model"] == "llava:13b"
        assert [(image.format, image.size) for image in request["images"]] == [("JPEG", (480, 480))] * frames
        assert "`Hopper-v4`" in request["text"] and "walks_forward" in request["text"]
    assert by_name["still"]["episodes"][0]["length"] == 40  # it stays up: all six frames

    # the verdicts beside the numbers; the ranking is the score's, as if there were no judge
    assert (by_name["still"]["verdict"], by_name["still"]["verdict_reason"]) == ("walks_forward", "It strides | forward.")
    assert by_name["forward"]["verdict"] == "unjudged" and "no JSON object with a verdict" in by_name["forward"]["verdict_reason"]
    unjudged = [ev.PolicyResult(**{**c, "verdict": None, "verdict_reason": None}) for c in report["candidates"]]
    assert [r.name for r in ev.rank(unjudged)] == [c["name"] for c in report["candidates"]]
    assert report["best"] == ev.best_of(ev.rank(unjudged)).name and "llava:13b" in report["judge"]

    markdown = (tmp_path / "r.md").read_text()
    header = next(line for line in markdown.splitlines() if line.startswith("| rank"))
    assert [cell.strip() for cell in header.strip("|").split("|")][-3:] == ["judge", "judge's reason", "error"]
    assert "| walks_forward | It strides \\| forward." in markdown and "do not change the ranking" in markdown
    record = json.loads((tmp_path / "videos" / "still.judge.json").read_text())
    assert record["answer"].endswith("```") and record["verdict"] == "walks_forward" and record["model_version"] == "llava:13b"


def test_a_judge_server_that_is_not_running_fails_at_once_before_anything_runs(tmp_path):
    (tmp_path / "still.py").write_text(STILL)
    url = closed_port_url()
    start = time.monotonic()
    run = run_cli("still.py", "--judge-model", "llava", "--judge-base-url", url, "--video-dir", "videos", cwd=tmp_path)
    assert run.returncode == 2 and time.monotonic() - start < 30
    assert run.stderr.strip() == f"error: --judge-base-url {url}: connection refused: is the server at {url} running?"
    assert not (tmp_path / "videos").exists()


@pytest.mark.parametrize("kwargs, message", [
    ({"model": None, "base_url": "http://127.0.0.1:9/v1"}, "--judge-base-url needs --judge-model"),
    ({"video": False}, "cannot go with --no-video"),
    ({"frames": 0}, "--judge-frames must be at least 1"),
    ({"base_url": None}, "no Gemini API key: set GEMINI_API_KEY (or GOOGLE_API_KEY), or use --judge-base-url"),
])  # fmt: skip
def test_judge_flag_mistakes_are_one_usage_error(monkeypatch, kwargs, message):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    settings = {"model": "llava", "base_url": "http://127.0.0.1:9/v1", "env_id": "Hopper-v4", "frames": 6, "video": True, **kwargs}
    with pytest.raises(ev.UsageError) as mistake:
        cj.make_judge(**settings)
    assert message in str(mistake.value) and "\n" not in str(mistake.value)


# ---------------------------------------------------------------------------------------------------------
# Gemini through the real google-genai SDK, with a mock transport
# ---------------------------------------------------------------------------------------------------------
def test_gemini_judge_sends_the_frames_as_inline_jpeg_parts_and_reads_its_verdict(recorded, tmp_path, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    requests = []

    def gemini(request):
        requests.append(json.loads(request.content))
        text = verdict_answer("stands_still", "The floor does not move.")
        return httpx2.Response(200, json={"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP",
                                                          "index": 0}], "modelVersion": "gemini-2.5-flash"})  # fmt: skip

    ask = gemini_backend("gemini-2.5-flash", attempts=1, http_client=httpx2.Client(transport=httpx2.MockTransport(gemini)))
    result = evaluated_candidate(recorded, tmp_path)
    cj.Judge(ask, "gemini-2.5-flash", "Gemini API", "Hopper-v4", max_seconds=0.32).look(result)

    assert (result.verdict, result.verdict_reason) == ("stands_still", "The floor does not move.")
    (body,) = requests
    parts = body["contents"][0]["parts"]
    assert "`Hopper-v4`" in parts[0]["text"] and "at most 0.32 s" in parts[0]["text"]
    images = [part["inlineData"] for part in parts[1:]]
    mime_types = {image.get("mimeType", image.get("mime_type")) for image in images}  # google-genai 3.4 sends mime_type
    assert len(images) == 6 and mime_types == {"image/jpeg"}
    data = [image["data"] + "=" * (-len(image["data"]) % 4) for image in images]  # the SDK sends unpadded URL-safe base64
    decoded = [Image.open(io.BytesIO(base64.urlsafe_b64decode(d))) for d in data]
    assert [(image.format, image.size) for image in decoded] == [("JPEG", (480, 480))] * 6
    assert json.loads((tmp_path / "still.judge.json").read_text())["model_version"] == "gemini-2.5-flash"
