"""What every command of the project shares: one-line usage errors and the progress display. Standard library only
(tqdm is imported when a terminal shows a bar), so scripts/sweep.py can use it without the project's packages."""

import os
import shlex
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent  # the repository: camel_utils/ is in it
USER_CWD = "CAMEL_USER_CWD"  # set by scripts/sweep.py for its runs: the folder the user started the sweep from


class UsageError(SystemExit):
    """A mistake in the command (a flag, a file, the env, a guide) found before any work starts: its message, one
    `error: ...` line, goes to stderr as it is raised, and the command exits with status 2. Nothing catches it but
    Python, which exits with its code."""

    def __init__(self, problem):
        super().__init__(f"error: {problem}")  # str(e) is the line
        self.code = 2  # what Python exits with; the line is printed here, since Python prints no message for a number
        print(self, file=sys.stderr, flush=True)


# ---- Commands the project prints: they must work when pasted where the user stands --------------------------------
def user_folder():
    """The folder the user typed the command in: this process's, or the sweep's that started it."""
    return os.environ.get(USER_CWD) or os.getcwd()


def shown_path(path):
    """A path (relative to this process's folder, or absolute) as the user can paste it where they stand: relative to
    their folder, or absolute where that is shorter (a path far above or beside it)."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute, user_folder())
    return relative if len(relative) <= len(absolute) else absolute


def command(script, *args):
    """`python SCRIPT ARGS` for a script of the repository (camel_td3.py, evaluate_policy.py), its path and every path
    among args (pass them through shown_path) as seen from the user's folder."""
    return shlex.join(["python", shown_path(REPO / script), *map(str, args)])


def module_command(module, *args):
    """`python -m MODULE ARGS` for a module of camel_utils, runnable from the user's folder (from another folder than
    the repository, with the repository on PYTHONPATH)."""
    line = shlex.join(["python", "-m", module, *map(str, args)])
    repo = shown_path(REPO)
    return line if repo == "." else f"PYTHONPATH={shlex.quote(repo)} {line}"


def repo_relative(value, repo=REPO):
    """A value that is an absolute path inside the repository, as a path relative to it (policies/hopper.py); any
    other value unchanged. Committed results then name the files they used the same way on every machine."""
    if not isinstance(value, str) or not os.path.isabs(value):
        return value
    for root, path in ((os.path.normpath(repo), os.path.normpath(value)), (os.path.realpath(repo), os.path.realpath(value))):
        if os.path.commonpath([root, path]) == root and path != root:
            return Path(os.path.relpath(path, root)).as_posix()
    return value


def format_duration(seconds):
    """1 h 05 min, 12 min 30 s, 45 s."""
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


class Progress:
    """Progress towards `total` units: a tqdm bar (with its rate and time left) while stderr is a terminal; in a log
    file, a plain line at most every `every` seconds, with the time left at the rate since the start, instead of a bar
    redrawn with carriage returns. `write` prints a line without breaking the bar."""

    def __init__(self, total, desc, unit="step", initial=0, every=30.0):
        self.total, self.desc, self.unit, self.every = total, desc, unit, every
        self.n = self.initial = initial
        self.postfix, self.start = "", time.monotonic()
        self.last_line = self.start
        self.bar = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=initial, desc=desc, unit=unit, dynamic_ncols=True, smoothing=0.05)

    def time_left(self):
        """Seconds to the total at the rate since the start (None before any progress)."""
        done, elapsed = self.n - self.initial, time.monotonic() - self.start
        return None if done <= 0 or elapsed <= 0 else (self.total - self.n) * elapsed / done

    def line(self):
        left = self.time_left()
        left = f", {format_duration(left)} left" if left is not None and self.n < self.total else ""
        postfix = f" | {self.postfix}" if self.postfix else ""
        return f"{self.desc}: {self.n}/{self.total} {self.unit}s ({self.n / self.total:.0%}{left}){postfix}"

    def advance_to(self, n):
        if n > self.n:
            self.update(n - self.n)

    def update(self, n=1):
        self.n += n
        if self.bar is not None:
            self.bar.update(n)
        elif time.monotonic() - self.last_line >= self.every or self.n >= self.total:
            print(self.line(), file=sys.stderr, flush=True)
            self.last_line = time.monotonic()

    def set_postfix(self, text):
        self.postfix = text
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=False)

    def write(self, line):
        if self.bar is not None:
            self.bar.write(line)
        else:
            print(line, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
