"""The multimodal judge (beyond the paper): a model looks at a few frames of each evaluated policy's video and says
what it saw, as a verdict and a one-sentence reason, shown beside the numbers in the report.

The paper picks among candidates by a person watching their videos and names a multimodal model doing it as future
work. Here the model only describes: the ranking stays guide_eval's score, and the verdict stands beside it (a
disagreement between the two is worth a look at the video). A judge that fails (the server goes down, the answer
holds no JSON or an unknown verdict, the video cannot be read) gives the verdict "unjudged" with the reason; it
never stops an evaluation. Each look is kept beside the video as {name}.judge.json: the prompt, the frame times,
the raw answer and the verdict.

The frames are read from the MP4 with moviepy, evenly spaced from the first frame to the last (the last shows where
the episode ended), sent as JPEG images with prompts/judge.md, to Gemini (google-genai) or to an OpenAI-compatible
server with image input (camel_utils/llm.py).
"""

import io
import json
import string
from pathlib import Path

import numpy as np
from tqdm import tqdm

from camel_utils.cli import UsageError
from camel_utils.guide_eval import make_env, one_line, write_json
from camel_utils.llm import ModelError, check_server_listens, gemini_backend, openai_backend

VERDICTS = ("walks_forward", "stands_still", "falls", "moves_backward", "other")
UNJUDGED = "unjudged"  # the judge was asked and gave no usable verdict; the reason says why
JUDGE_PROMPT = Path(__file__).resolve().parents[1] / "prompts" / "judge.md"


def video_frames(path, n):
    """`n` frames of an MP4, evenly spaced from its first to its last (fewer if it has fewer), as
    [(time in seconds, RGB array)]."""
    from moviepy import VideoFileClip  # imported here: only the judge reads videos

    clip = VideoFileClip(str(path), audio=False)
    try:
        total = max(1, clip.reader.n_frames)
        wanted = set(np.linspace(0, total - 1, n).round().astype(int).tolist())
        frames, last = [], None
        for i, frame in enumerate(clip.iter_frames()):
            if i in wanted:
                frames.append((i / clip.fps, frame))
            last = (i / clip.fps, frame)
        if last is None:
            raise ValueError("the video has no frames")
        if len(frames) < len(wanted) and (not frames or frames[-1][0] != last[0]):
            frames.append(last)  # ffmpeg's frame count was an estimate: the last frame stands in for those past the end
        return frames
    finally:
        clip.close()


def jpeg(frame, quality=85):
    from PIL import Image  # moviepy's own dependency

    buffer = io.BytesIO()
    Image.fromarray(np.asarray(frame, dtype=np.uint8)).save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


def judge_prompt(env_id, times, max_seconds=None, template=JUDGE_PROMPT):
    """prompts/judge.md filled for one video whose frames are at `times` (seconds)."""
    shown = ", ".join(f"{t:.1f} s" for t in times)
    length = f"The video lasts {times[-1]:.1f} s"
    if max_seconds:
        length += f"; an episode lasts at most {max_seconds:g} s and ends earlier when the robot falls"
    values = {"env_id": env_id, "num_frames": len(times), "frame_times": shown, "episode_length": length + "."}
    return string.Template(Path(template).read_text(encoding="utf-8")).substitute(values)


def parse_verdict(text):
    """(verdict, reason) from the judge's answer: the last JSON object in it that holds a "verdict" (models like to
    wrap it in a code fence, or think aloud first). ValueError with one line if there is none or it is unknown."""
    decoder, found = json.JSONDecoder(), None
    for start in [i for i, c in enumerate(text) if c == "{"]:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and "verdict" in value:
            found = value
    if found is None:
        raise ValueError(f"no JSON object with a verdict in the answer: {one_line(text, 120)!r}")
    verdict = str(found["verdict"]).strip().lower()
    if verdict not in VERDICTS:
        raise ValueError(f"unknown verdict {one_line(found['verdict'], 60)!r} (expected one of {', '.join(VERDICTS)})")
    return verdict, one_line(found.get("reason") or "", 300)


class Judge:
    """Asks a multimodal model about each evaluated policy's video; `look(result)` fills in its verdict and reason.
    `ask(prompt, images)` is a camel_utils.llm backend (or a test's stand-in)."""

    def __init__(self, ask, model, backend, env_id, max_seconds=None, frames=6):
        self.ask, self.model, self.backend, self.env_id, self.max_seconds, self.frames = ask, model, backend, env_id, max_seconds, frames
        self.description = (f"{model} ({backend}), shown {frames} frames of each video; its verdict stands beside the score "
                            "and does not change the ranking")  # fmt: skip

    def look(self, result):
        """Judge one policy that ran (a failed one is left alone): never raises, a failure is the verdict "unjudged"."""
        if result.error is not None or result.score is None:
            return
        record = {"model": self.model, "backend": self.backend, "video": result.video}
        try:
            if not result.video:
                raise ValueError("no video to look at")
            frames = video_frames(result.video, self.frames)
            times = [t for t, _ in frames]
            record.update(frame_times=[round(t, 2) for t in times], prompt=judge_prompt(self.env_id, times, self.max_seconds))
            text, details = self.ask(record["prompt"], [("image/jpeg", jpeg(frame)) for _, frame in frames])
            record.update(details, answer=text)
            result.verdict, result.verdict_reason = parse_verdict(text)
        except ModelError as e:
            result.verdict, result.verdict_reason = UNJUDGED, f"the judge gave no answer: {e}"
        except Exception as e:  # an unreadable video, an answer without a usable verdict: shown, never a crash
            reason = str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}"
            result.verdict, result.verdict_reason = UNJUDGED, one_line(reason)
        record.update(verdict=result.verdict, reason=result.verdict_reason)
        if result.video:
            write_json(Path(result.video).with_suffix(".judge.json"), record)
        tqdm.write(f"{result.name}: judge: {result.verdict} ({result.verdict_reason})")


def make_judge(model, base_url, env_id, max_episode_steps=None, frames=6, video=True, timeout=600.0, attempts=5):
    """The judge the flags ask for (--judge-model, --judge-base-url, --judge-frames), checked before anything runs:
    one UsageError line for a missing model name, no videos, a server that does not listen, a missing Gemini key."""
    if not model:
        raise UsageError("--judge-base-url needs --judge-model, the name the server knows the multimodal model by")
    if frames < 1:
        raise UsageError("--judge-frames must be at least 1")
    if not video:
        raise UsageError("--judge-model looks at the videos, so it cannot go with --no-video")
    if base_url:
        check_server_listens(base_url, "--judge-base-url")
        ask, backend = openai_backend(base_url, model, timeout=timeout, attempts=attempts), f"OpenAI-compatible server at {base_url}"
    else:
        ask, backend = gemini_backend(model, timeout=timeout, attempts=attempts, other_flags="--judge-base-url"), "Gemini API"
    env = make_env(env_id, max_episode_steps)
    dt, steps = getattr(env.unwrapped, "dt", None), env.spec.max_episode_steps
    env.close()
    return Judge(ask, model, backend, env_id, dt * steps if dt and steps else None, frames)
