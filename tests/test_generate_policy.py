"""Specification of generate_policy.py: prompts, model backends, code extraction and checks, the report, refinement,
selection, and the --evaluate alias (evaluation itself is specified in test_evaluate_policy.py). No test reaches a
real model: Gemini is faked with an httpx2 MockTransport under the real google-genai SDK, and the OpenAI-compatible
backend talks to a small HTTP server started on 127.0.0.1."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")

import gymnasium as gym
import httpx2
import pytest

import generate_policy as gp
from fake_judge import FakeJudgeServer, verdict_answer
from local_server import LocalServer, QuietHandler
from script_process import run_script

ROOT = Path(gp.__file__).resolve().parent

# A guide that leans the hopper forward (it soon falls).
FORWARD = """import numpy as np

def policy(obs):
    torso_angle, torso_velocity = obs[1], obs[7]
    thigh = -0.6 * (torso_angle - 0.1) - 0.1 * torso_velocity
    return np.clip(np.array([thigh, -0.2, 0.3]), -1.0, 1.0)
"""
# A guide that holds still: it survives and earns the healthy reward, and goes nowhere.
STILL = """import numpy as np

def policy(obs):
    return np.clip(np.array([-2.0 * obs[1] - 0.2 * obs[7], 0.0, 0.0]), -1.0, 1.0)
"""


def reply(code, before="Let me think step by step about the joints.\n\n", after="\nThis keeps the torso upright."):
    return f"{before}```python\n{code}```{after}"


def make_args(tmp_path, **overrides):
    """Small, fast settings: two candidates, two short episodes, no video."""
    defaults = dict(env_id="Hopper-v4", num_candidates=2, output_dir=str(tmp_path / "out"), episodes=2, max_episode_steps=30,
                    video=False, eval_timeout=60.0)  # fmt: skip
    return gp.Args(**{**defaults, **overrides})


def scripted(*texts):
    """An `ask` that answers the given texts in order (an Exception is raised instead) and records the prompts."""
    answers, prompts = list(texts), []

    def ask(prompt):
        prompts.append(prompt)
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer, {"model_version": "scripted", "finish_reason": "STOP"}

    ask.prompts = prompts
    return ask


# ---------------------------------------------------------------------------------------------------------
# Prompts
# ---------------------------------------------------------------------------------------------------------
def test_hopper_prompt_holds_task_spaces_docs_xml_and_step_by_step_instructions():
    env = gym.make("Hopper-v4")
    prompt, template = gp.build_prompt(env)
    assert template == ROOT / "prompts" / "Hopper-v4.md"
    assert "11-element" in prompt and "3 torques" in prompt and "policy(obs)" in prompt and "np.clip" in prompt
    assert "step by step" in prompt and "NumPy" in prompt
    assert Path(env.unwrapped.fullpath).read_text().strip() in prompt  # the XML the env loads, verbatim
    assert "## Observation Space" in prompt and "## Episode End" in prompt and "documentation of Hopper-v5" in prompt
    assert "## Arguments" not in prompt and "{figure}" not in prompt and "${" not in prompt


@pytest.mark.parametrize("env_id, dims", [("Walker2d-v4", ("17-element", "6 torques")), ("Ant-v4", ("27-element", "8 torques"))])
def test_walker_and_ant_have_their_own_templates_with_their_own_sizes(env_id, dims):
    prompt, template = gp.build_prompt(gym.make(env_id))
    assert template.name == f"{env_id}.md"
    assert all(d in prompt for d in dims) and f"<mujoco_xml file=\"{env_id.split('-')[0].lower()}.xml\">" in prompt


def test_env_without_template_gets_the_generic_prompt_from_the_same_sources():
    prompt, template = gp.build_prompt(gym.make("InvertedPendulum-v4"))
    assert template.name == "generic.md"
    assert "InvertedPendulum-v4" in prompt and "inverted_pendulum.xml" in prompt and "## Observation Space" in prompt
    prompt, _ = gp.build_prompt(gym.make("Pendulum-v1"))  # not MuJoCo: documentation but no XML
    assert "documentation of Pendulum-v1" in prompt and "not a MuJoCo model" in prompt


def test_print_prompt_needs_no_key_and_calls_no_model(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    assert gp.main(make_args(tmp_path, print_prompt=True)) == 0
    out = capsys.readouterr().out
    assert out.startswith("Write a hand-made controller for the `Hopper-v4`") and not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------------------
# Code extraction and the shared checker
# ---------------------------------------------------------------------------------------------------------
def test_extract_code_takes_the_last_python_block_that_defines_policy():
    text = "Plan:\n```python\nk = 0.5  # a fragment\n```\n```bash\nls\n```\nFinal:\n" + reply(FORWARD, before="") + "\n```python\nprint(1)\n```"
    assert gp.extract_code(text) == FORWARD
    assert gp.extract_code(reply(STILL) + "\nImproved:\n" + reply(FORWARD)) == FORWARD


def test_extract_code_refuses_responses_without_a_complete_block():
    assert gp.extract_code("I would apply torque to the thigh.") is None
    assert gp.extract_code("```python\nimport numpy as np\ndef policy(obs):\n    return np.zeros(") is None  # cut off
    assert gp.extract_code("```python\nimport numpy as np\ndef act(obs):\n    return np.zeros(3)\n```") is None  # no policy
    assert gp.extract_code(FORWARD) == FORWARD  # bare code, as some local models answer


@pytest.mark.parametrize("code, reason", [
    ("import os\ndef policy(obs):\n    return os.getcwd()\n", "imports 'os'"),
    ("import numpy as np\ndef policy(obs):\n    open('x', 'w')\n    return np.zeros(3)\n", "'open'"),
    ("def policy(obs):\n    return __import__('os')\n", "__import__"),
    ("import numpy as np\ndef policy(obs):\n    np.save('x.npy', obs)\n    return np.zeros(3)\n", "file I/O"),
    ("import numpy as np\ndef policy(obs):\n    return obs.__class__.__bases__\n", "dunder"),
    ("import numpy as np\ndef policy(obs):\n    return eval('np.zeros(3)')\n", "'eval'"),
    ("from numpy import load\ndef policy(obs):\n    return load('x')\n", "file I/O"),
    ("import numpy as np\ndef policy(obs):\n    return getattr(np, 'save')('x', obs)\n", "'getattr'"),
    ("import numpy as np\ndef policy(obs):\n    return np.zeros(3\n", "syntax error"),
])  # fmt: skip
def test_hostile_or_broken_code_is_refused_by_the_shared_checker_and_never_run(tmp_path, code, reason):
    candidate = gp.ask_for_candidate(scripted(reply(code)), "prompt", tmp_path / "p.md", "round1_candidate1", 1, tmp_path,
                                     {"env_id": "Hopper-v4", "model": "m", "backend": "b"})  # fmt: skip
    assert candidate.error.startswith("refused by the checks") and reason in candidate.error
    assert (tmp_path / "round1_candidate1.py").exists()  # kept for the record, marked failed


# ---------------------------------------------------------------------------------------------------------
# Gemini through the real google-genai SDK, with a mock transport
# ---------------------------------------------------------------------------------------------------------
def gemini_response(text=None, finish="STOP"):
    parts = [{"text": "I should look at the torso angle first.", "thought": True}] + ([{"text": text}] if text else [])
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
            "usageMetadata": {"promptTokenCount": 3100, "candidatesTokenCount": 900, "thoughtsTokenCount": 2000, "totalTokenCount": 6000},
            "modelVersion": "gemini-2.5-pro", "responseId": "fake-response"}  # fmt: skip


RATE_LIMITED = (429, {"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", "status": "RESOURCE_EXHAUSTED"}})
UNAVAILABLE = (503, {"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}})


class FakeGemini:
    """Answers generateContent requests from a script of (status, JSON body) and records the requests."""

    def __init__(self, *answers):
        self.answers, self.requests = list(answers), []

    def __call__(self, request):
        self.requests.append(request)
        status, body = self.answers.pop(0)
        return httpx2.Response(status, json=body)

    def client(self):
        return httpx2.Client(transport=httpx2.MockTransport(self))


@pytest.fixture
def gemini_key(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)


def test_gemini_backend_sends_the_prompt_and_retries_a_429(gemini_key):
    fake = FakeGemini(RATE_LIMITED, (200, gemini_response(reply(FORWARD))))
    ask = gp.gemini_backend("gemini-pro-latest", temperature=0.7, timeout=30, attempts=3, http_client=fake.client())
    text, details = ask("write a hopper policy")
    assert gp.extract_code(text) == FORWARD and "torso angle first" not in text  # thoughts are not part of the text
    assert details["model_version"] == "gemini-2.5-pro" and details["finish_reason"] == "STOP"
    assert len(fake.requests) == 2  # the 429 was retried
    request = fake.requests[-1]
    assert request.url.path.endswith("/models/gemini-pro-latest:generateContent") and request.headers["x-goog-api-key"] == "test-key"
    body = json.loads(request.content)
    assert body["contents"][0]["parts"][0]["text"] == "write a hopper policy" and body["generationConfig"]["temperature"] == 0.7
    assert "candidateCount" not in body["generationConfig"]  # one request per candidate


def test_gemini_connection_errors_are_retried_then_reported_in_one_line_with_one_prefix(gemini_key, tmp_path):
    attempts = []

    def refuse(request):
        attempts.append(request)
        raise httpx2.ConnectError("[Errno 111] Connection refused", request=request)

    ask = gp.gemini_backend("gemini-pro-latest", attempts=2, http_client=httpx2.Client(transport=httpx2.MockTransport(refuse)))
    candidate = gp.ask_for_candidate(ask, "prompt", tmp_path / "p.md", "round1_candidate1", 1, tmp_path, {"env_id": "Hopper-v4", "model": "m", "backend": "b"})
    assert candidate.error == "request failed: no answer from Gemini: ConnectError: [Errno 111] Connection refused"
    assert len(attempts) == 2


def test_gemini_response_without_text_is_a_failed_candidate_not_a_crash(gemini_key, tmp_path):
    fake = FakeGemini((200, gemini_response(None, finish="MAX_TOKENS")))
    ask = gp.gemini_backend("gemini-pro-latest", attempts=1, http_client=fake.client())
    candidate = gp.ask_for_candidate(ask, "prompt", tmp_path / "p.md", "round1_candidate1", 1, tmp_path, {"env_id": "Hopper-v4", "model": "m", "backend": "b"})
    assert candidate.error.startswith("request failed: the response has no text") and "MAX_TOKENS" in candidate.error
    record = json.loads((tmp_path / "round1_candidate1.json").read_text())
    assert record["finish_reason"] == "MAX_TOKENS" and record["usage"]["thoughts_token_count"] == 2000


def test_missing_api_key_is_one_line_without_traceback(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    child = subprocess.run([sys.executable, str(ROOT / "generate_policy.py"), "--output-dir", str(tmp_path / "out")],
                           capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert child.returncode == 2 and "Traceback" not in child.stderr and len(child.stderr.splitlines()) == 1
    assert child.stderr.startswith("error:") and "GEMINI_API_KEY" in child.stderr and "GOOGLE_API_KEY" in child.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("overrides, message", [
    ({"env_id": "NoSuchEnv-v0"}, "--env-id NoSuchEnv-v0"),
    ({"env_id": "CartPole-v1"}, "Discrete action space"),
    ({"evaluate": ("x.py",), "select": "best"}, "cannot go with it"),
    ({"base_url": "http://127.0.0.1:1/v1"}, "--base-url needs --model"),
    ({"policy_path": "x.py"}, "add --select best"),
    ({"num_candidates": 0}, "at least 1"),
    ({"eval_timeout": 0}, "--eval-timeout and --request-timeout must be positive"),
])  # fmt: skip
def test_bad_input_stops_with_one_usage_error_before_anything_is_written(tmp_path, gemini_key, overrides, message):
    with pytest.raises(gp.UsageError) as mistake:
        gp.main(make_args(tmp_path, **overrides))
    assert message in str(mistake.value) and "\n" not in str(mistake.value)
    assert not (tmp_path / "out").exists()


def test_output_dir_that_cannot_be_written_or_holds_a_run_is_refused(tmp_path, gemini_key):
    (tmp_path / "file").write_text("")
    with pytest.raises(gp.UsageError, match="^error: --output-dir .*: cannot write there"):
        gp.main(make_args(tmp_path, output_dir=str(tmp_path / "file" / "out")))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "report.json").write_text("{}")
    with pytest.raises(gp.UsageError, match="already holds the results of an earlier run"):
        gp.main(make_args(tmp_path))


# ---------------------------------------------------------------------------------------------------------
# --evaluate: an alias of evaluate_policy.py
# ---------------------------------------------------------------------------------------------------------
def test_evaluate_alias_scores_files_with_evaluate_policy_and_writes_the_report_in_output_dir(tmp_path, capsys):
    (tmp_path / "still.py").write_text(STILL)
    (tmp_path / "nan.py").write_text("import numpy as np\n\ndef policy(obs):\n    return np.full(3, np.nan)\n")
    args = make_args(tmp_path, evaluate=(str(tmp_path / "nan.py"), str(tmp_path / "still.py")), episodes=1, max_episode_steps=10)
    assert gp.main(args) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["best"] == "still" and [c["name"] for c in report["candidates"]] == ["still", "nan"]
    assert (tmp_path / "out" / "report.md").exists()
    assert "python evaluate_policy.py --env-id Hopper-v4" in capsys.readouterr().err


def test_evaluate_alias_answers_a_mistake_as_evaluate_policy_does(tmp_path):
    run = run_generate("--evaluate", "missing.py", "--output-dir", str(tmp_path / "out"), timeout=60)
    assert run.returncode == 2 and run.stderr.splitlines() == ["error: missing.py: no such policy file"]
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------------------
# Generation end to end: fake Gemini, local OpenAI-compatible server, refinement, interruption
# ---------------------------------------------------------------------------------------------------------
def test_generation_with_fake_gemini_writes_candidates_report_and_selection_that_camel_td3_trains_with(tmp_path, gemini_key):
    fake = FakeGemini(
        RATE_LIMITED, (200, gemini_response(reply(FORWARD))),  # candidate 1: retried once, then good
        (200, gemini_response("I cannot write code for this.")),  # candidate 2: no code block
        UNAVAILABLE, UNAVAILABLE,  # candidate 3: the server stays down through both attempts
        (200, gemini_response(reply("import os\ndef policy(obs):\n    return os.system('ls')\n"))),  # candidate 4: hostile
    )  # fmt: skip
    ask = gp.gemini_backend(gp.DEFAULT_GEMINI_MODEL, timeout=30, attempts=2, http_client=fake.client())
    args = make_args(tmp_path, num_candidates=4, select="best", policy_path=str(tmp_path / "chosen" / "hopper.py"), episodes=1)
    assert gp.main(args, ask=ask) == 0
    out = tmp_path / "out"

    # provenance: prompt, raw responses, code files, details
    assert (out / "round1_prompt.md").read_text() == gp.build_prompt(gym.make("Hopper-v4"))[0]
    assert gp.extract_code((out / "round1_candidate1.response.md").read_text()) == FORWARD
    code = (out / "round1_candidate1.py").read_text()
    assert code.endswith(FORWARD) and "gemini-pro-latest" in code and "round1_prompt.md" in code
    details = json.loads((out / "round1_candidate1.json").read_text())
    assert details["model"] == "gemini-pro-latest" and details["model_version"] == "gemini-2.5-pro" and details["requested_at"]
    assert not (out / "round1_candidate2.py").exists() and (out / "round1_candidate2.response.md").exists()
    assert "503" in json.loads((out / "round1_candidate3.json").read_text())["error"]

    report = json.loads((out / "report.json").read_text())
    errors = {c["name"]: c["error"] for c in report["candidates"]}
    assert report["best"] == "round1_candidate1" and errors["round1_candidate1"] is None
    assert "no complete ```python block" in errors["round1_candidate2"]
    assert errors["round1_candidate3"].startswith("request failed: Gemini answered 503")
    assert errors["round1_candidate4"].startswith("refused by the checks")

    chosen = tmp_path / "chosen" / "hopper.py"
    assert chosen.read_text().endswith(FORWARD)
    run = run_script(ROOT / "camel_td3.py", "--env-id", "Hopper-v4", "--llm-policy", chosen, "--total-timesteps", "200",
                     "--learning-starts", "100", "--run-name", "guide_check", "--eval-episodes", "1", "--torch-threads", "1",
                     "--checkpoint-frequency", "0", cwd=tmp_path, timeout=180)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert (tmp_path / "runs" / "guide_check" / "finished.json").exists()


class FakeOpenAIServer(LocalServer):
    """A chat-completions server on 127.0.0.1 answering from a script of (status, body); records request bodies."""

    def __init__(self, *answers):
        self.answers, self.bodies = list(answers), []
        fake = self

        class Handler(QuietHandler):
            def do_POST(self):
                fake.bodies.append((self.path, json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
                status, body = fake.answers.pop(0)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("retry-after-ms", "10")
                self.end_headers()
                self.wfile.write(data)

        super().__init__(Handler, path="/v1")


def chat_completion(content, finish="stop"):
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": "qwen2.5-coder:7b",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
            "usage": {"prompt_tokens": 3000, "completion_tokens": 500, "total_tokens": 3500}}  # fmt: skip


def test_openai_compatible_backend_against_a_local_server_from_the_command_line(tmp_path):
    server = FakeOpenAIServer(
        (429, {"error": {"message": "slow down", "type": "rate_limit"}}), (200, chat_completion("<think>hmm</think>\n" + reply(STILL))),
        (200, chat_completion("", finish="length")),
    )  # fmt: skip
    out = tmp_path / "out"
    command = [sys.executable, str(ROOT / "generate_policy.py"), "--env-id", "Hopper-v4", "--base-url", server.url,
               "--model", "qwen2.5-coder:7b", "--temperature", "0.2", "--num-candidates", "2", "--episodes", "1",
               "--max-episode-steps", "12", "--output-dir", str(out), "--select", "best", "--policy-path", str(tmp_path / "hopper.py")]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    try:
        run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    finally:
        server.close()
    assert run.returncode == 0, run.stderr[-2000:]
    assert len(server.bodies) == 3  # the 429 was retried
    path, body = server.bodies[0]
    assert path == "/v1/chat/completions" and body["model"] == "qwen2.5-coder:7b" and body["temperature"] == 0.2
    assert body["messages"] == [{"role": "user", "content": (out / "round1_prompt.md").read_text()}]
    report = json.loads((out / "report.json").read_text())
    errors = {c["name"]: c["error"] for c in report["candidates"]}
    assert errors["round1_candidate1"] is None and "no text (finish reason length)" in errors["round1_candidate2"]
    assert (out / "round1_candidate1.py").read_text().endswith(STILL) and (out / "round1_candidate1.response.md").exists()
    assert (out / "round1_candidate1.mp4").stat().st_size > 0 and "round1_candidate1.mp4" in (out / "report.md").read_text()
    assert (tmp_path / "hopper.py").read_text().endswith(STILL) and "round1_candidate1" in run.stdout
    assert "\r" not in run.stderr and "it/s" not in run.stderr  # no progress bar drawn into a pipe or a log file


def test_refinement_sends_the_best_code_and_its_measurements_back_and_keeps_every_round(tmp_path):
    ask = scripted(reply(FORWARD), "no code this time", reply(STILL))
    args = make_args(tmp_path, num_candidates=1, iterations=2, episodes=1, max_episode_steps=20)
    assert gp.main(args, ask=ask) == 0
    first, second, third = ask.prompts
    assert "Improve it" not in first
    for refinement in (second, third):  # round 2 had no code, so round 3 still refines round 1's candidate
        assert "round1_candidate1" in refinement and FORWARD.strip() in refinement and first in refinement
        assert "forward distance" in refinement and "return" in refinement and "episode 1 (seed 1)" in refinement
    out = tmp_path / "out"
    assert [(out / f"round{r}_prompt.md").read_text() for r in (1, 2, 3)] == [first, second, third]
    report = json.loads((out / "report.json").read_text())
    assert sorted(c["name"] for c in report["candidates"]) == ["round1_candidate1", "round2_candidate1", "round3_candidate1"]
    assert {c["round"] for c in report["candidates"]} == {1, 2, 3}


def test_refinement_of_a_failed_candidate_sends_its_error():
    c = gp.Candidate(name="round1_candidate1", round=1, path="x.py", error="policy(obs) raised IndexError: index 11 is out of bounds")
    assert gp.describe_results(c, 1000) == "It failed: policy(obs) raised IndexError: index 11 is out of bounds"


def test_interrupted_generation_keeps_the_candidates_already_received(tmp_path):
    ask = scripted(reply(FORWARD), reply(STILL), KeyboardInterrupt())
    assert gp.main(make_args(tmp_path, num_candidates=3), ask=ask) == 130
    out = tmp_path / "out"
    for name in ("round1_candidate1", "round1_candidate2"):
        assert (out / f"{name}.py").exists() and (out / f"{name}.response.md").exists() and (out / f"{name}.json").exists()
    assert not list(out.glob("*.partial"))


# ---------------------------------------------------------------------------------------------------------
# Answers obtained outside the script (--answers): a chat window instead of an API
# ---------------------------------------------------------------------------------------------------------
def run_generate(*flags, timeout=180):
    return subprocess.run([sys.executable, str(ROOT / "generate_policy.py"), *flags], capture_output=True, text=True, timeout=timeout)


def test_answers_from_a_chat_go_through_the_same_checks_evaluation_report_and_selection_with_no_model(tmp_path, monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    answers = tmp_path / "answers"
    answers.mkdir()
    texts = [reply(FORWARD), "Sorry, I cannot help with that.", reply("import os\ndef policy(obs):\n    return os.system('ls')\n"),
             reply(STILL, after="\nIt holds still.\n\n")]  # fmt: skip
    for i, text in enumerate(texts, 1):
        (answers / f"answer{i}.md").write_bytes(text.encode())
    out, chosen = tmp_path / "out", tmp_path / "chosen.py"
    run = run_generate("--env-id", "Hopper-v4", "--answers", *[str(answers / f"answer{i}.md") for i in range(1, 5)],
                       "--model", "chat-model-x", "--episodes", "1", "--max-episode-steps", "40", "--no-video",
                       "--output-dir", str(out), "--select", "best", "--policy-path", str(chosen))  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]

    # every answer kept byte for byte, with where it came from; the prompt kept is the one --print-prompt gives
    prompt = run_generate("--env-id", "Hopper-v4", "--print-prompt").stdout
    assert (out / "round1_prompt.md").read_text() + "\n" == prompt
    for i, text in enumerate(texts, 1):
        assert (out / f"round1_candidate{i}.response.md").read_bytes() == text.encode()
        details = json.loads((out / f"round1_candidate{i}.json").read_text())
        assert details["model"] == "chat-model-x" and details["answer_file"] == str(answers / f"answer{i}.md")
        assert details["answer_sha256"] == hashlib.sha256(text.encode()).hexdigest()
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["model"] == "chat-model-x" and provenance["env_id"] == "Hopper-v4" and "--answers" in provenance["backend"]
    assert provenance["prompt_sha256"] == hashlib.sha256((out / "round1_prompt.md").read_bytes()).hexdigest()

    # the same extraction, checks, evaluation and ranking as an API run
    report = json.loads((out / "report.json").read_text())
    by_name = {c["name"]: c for c in report["candidates"]}
    assert "no complete ```python block" in by_name["round1_candidate2"]["error"]
    assert by_name["round1_candidate3"]["error"].startswith("refused by the checks")
    assert by_name["round1_candidate1"]["error"] is None and by_name["round1_candidate4"]["error"] is None
    assert by_name["round1_candidate1"]["episodes"][0]["length"] > 0
    best = report["best"]
    assert best in ("round1_candidate1", "round1_candidate4") and chosen.read_text().endswith({"round1_candidate1": FORWARD,
                                                                                               "round1_candidate4": STILL}[best])  # fmt: skip
    assert "written by chat-model-x (its answer was obtained outside generate_policy.py and read from answer1.md)" in (out / "round1_candidate1.py").read_text()


def test_answers_with_iterations_print_the_next_rounds_prompt_then_take_its_answers(tmp_path):
    first = tmp_path / "answer1.md"
    first.write_text(reply(FORWARD))
    flags = ["--env-id", "Hopper-v4", "--model", "chat-model-x", "--iterations", "1", "--episodes", "1", "--max-episode-steps", "20", "--no-video"]

    # round 1 only: its candidate is evaluated, and round 2's prompt (the best code with its measurements) is written and printed
    run = run_generate(*flags, "--answers", str(first), "--output-dir", str(tmp_path / "a"))
    assert run.returncode == 0, run.stderr[-2000:]
    refine = (tmp_path / "a" / "round2_prompt.md").read_text()
    assert "Improve it" in refine and FORWARD.strip() in refine and "episode 1 (seed 1)" in refine
    assert refine in run.stdout and "round2_answer1.md" in run.stdout
    assert not list((tmp_path / "a").glob("round2_candidate*"))

    # the same command with the round-2 answer: the same round-2 prompt is rebuilt, and its answer joins the ranking
    second = tmp_path / "round2_answer1.md"
    second.write_text(reply(STILL))
    run = run_generate(*flags, "--answers", str(first), str(second), "--output-dir", str(tmp_path / "b"))
    assert run.returncode == 0, run.stderr[-2000:]
    assert (tmp_path / "b" / "round2_prompt.md").read_text() == refine
    report = json.loads((tmp_path / "b" / "report.json").read_text())
    assert {(c["name"], c["round"]) for c in report["candidates"]} == {("round1_candidate1", 1), ("round2_candidate1", 2)}
    provenance = json.loads((tmp_path / "b" / "provenance.json").read_text())
    assert set(provenance["prompts"]) == {"round1", "round2"}
    assert provenance["prompts"]["round2"]["prompt_sha256"] == hashlib.sha256(refine.encode()).hexdigest()


@pytest.mark.parametrize("flags, message", [
    (["--answers", "ANSWER"], "--answers needs --model"),
    (["--answers", "MISSING", "--model", "m"], "no such file"),
    (["--answers", "ROUND2", "--model", "m"], "needs --iterations 1 or more"),
    (["--answers", "ANSWER", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"], "calls no model"),
])  # fmt: skip
def test_bad_answers_flags_are_one_line_errors_before_anything_is_written(tmp_path, flags, message):
    (tmp_path / "answer.md").write_text(reply(FORWARD))
    (tmp_path / "round2_answer.md").write_text(reply(FORWARD))
    paths = {"ANSWER": str(tmp_path / "answer.md"), "MISSING": str(tmp_path / "nope.md"), "ROUND2": str(tmp_path / "round2_answer.md")}
    run = run_generate("--env-id", "Hopper-v4", "--output-dir", str(tmp_path / "out"), *[paths.get(f, f) for f in flags], timeout=60)
    assert run.returncode == 2 and message in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_a_local_server_that_is_not_running_fails_at_once_with_what_to_check(tmp_path):
    import socket
    import time

    with socket.socket() as s:  # a port on 127.0.0.1 that nothing listens on once this socket is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    start = time.monotonic()
    run = run_generate("--env-id", "Hopper-v4", "--base-url", url, "--model", "m", "--output-dir", str(tmp_path / "out"), timeout=60)
    assert run.returncode == 2 and time.monotonic() - start < 15  # not ~35 s of retries
    assert run.stderr.strip() == f"error: --base-url {url}: connection refused: is the server at {url} running?"
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------------------------------------
# The multimodal judge (--judge-model): a verdict beside the score, never the ranking
# ---------------------------------------------------------------------------------------------------------
def test_judge_verdicts_stand_beside_the_scores_and_reach_the_refinement_prompt_but_never_choose(tmp_path):
    answers = [tmp_path / "answer1.md", tmp_path / "answer2.md"]
    answers[0].write_text(reply(FORWARD))
    answers[1].write_text(reply(STILL))
    # the judge's recorded verdicts, in evaluation order, each contradicting the numbers
    server = FakeJudgeServer(verdict_answer("walks_forward", "It leans into a stride."), verdict_answer("falls", "It topples."))
    out, chosen = tmp_path / "out", tmp_path / "chosen.py"
    try:
        run = run_generate("--env-id", "Hopper-v4", "--answers", *map(str, answers), "--model", "chat-model-x", "--iterations", "1",
                           "--episodes", "1", "--max-episode-steps", "40", "--output-dir", str(out), "--select", "best",
                           "--policy-path", str(chosen), "--judge-model", "llava:13b", "--judge-base-url", server.url)  # fmt: skip
    finally:
        server.close()
    assert run.returncode == 0, run.stderr[-2000:]
    assert len(server.requests) == 2 and all(request["images"] for request in server.requests)

    report = json.loads((out / "report.json").read_text())
    verdicts = {c["name"]: (c["verdict"], c["verdict_reason"]) for c in report["candidates"]}
    assert verdicts == {"round1_candidate1": ("walks_forward", "It leans into a stride."), "round1_candidate2": ("falls", "It topples.")}
    assert "llava:13b" in report["judge"] and (out / "round1_candidate1.judge.json").exists()
    header = next(line for line in (out / "report.md").read_text().splitlines() if line.startswith("| rank"))
    assert [cell.strip() for cell in header.strip("|").split("|")][-3:] == ["judge", "judge's reason", "error"]

    # the ranking and --select best are the score's, whatever the judge said
    unjudged = [gp.Candidate(**{**c, "verdict": None, "verdict_reason": None}) for c in report["candidates"]]
    best = gp.best_of(gp.rank(unjudged))
    assert report["best"] == best.name and [c["name"] for c in report["candidates"]] == [c.name for c in gp.rank(unjudged)]
    assert chosen.read_text().endswith({"round1_candidate1": FORWARD, "round1_candidate2": STILL}[best.name])

    # the next round's prompt tells the model what the judge saw in the best candidate's video
    refine = (out / "round2_prompt.md").read_text()
    assert f"said: {verdicts[best.name][0]} ({verdicts[best.name][1]})" in refine
