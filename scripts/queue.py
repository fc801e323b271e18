"""The experiment queue: every run registered in docs/preregistration.md, run where it was registered, resumed across
sessions, its curve committed as it grows.

  .venv/bin/python scripts/queue.py            # run: resume what is unfinished, start what is missing, WORKERS at a time
  UNTIL=15:40 .venv/bin/python scripts/queue.py   # the same, stopping at 15:40 and starting first what can end by then
  .venv/bin/python scripts/queue.py status     # what is done, running, stopped and left, per experiment; runs nothing
  .venv/bin/python scripts/queue.py plan       # every registered run in the order the queue takes them

Each experiment of docs/preregistration.md has a ```json block: its id, the commit its runs are made with, the steps,
the flags every run gets and its groups of runs (methods x envs x seeds, with a guide file per env). The queue runs
each run with that commit's trainer, from a git worktree at QUEUE_DIR/code/<commit> (editing main never touches a
run under way), in QUEUE_DIR/<experiment>/ (run folders in runs/, each run's output in runs/<run>.log), one run per
core (pinned with taskset), one torch thread each. It takes first every run with a checkpoint (resumed with
--resume), then the next ones not finished, in the registered order but with CAMEL+ last in each seed's round
(in_queue_order). A run whose curve was committed unfinished but has no checkpoint here (a new machine) starts
again from step 0.

UNTIL=HH:MM or HH:MM:SS (this machine's clock; the session's end, less the minutes its last checks need) stops the
queue at that time as SIGTERM does, and makes it start first, on each free core, the first run in that order that is
expected to end before then; one that is not (an Ant-v4 CAMEL+ run on a CPU where it takes longer than a session)
waits until none is, so that the work a new machine would lose is as little as it can be. When none is, it takes the
one with the most time to go: the runs that outlast a session start soonest, and the experiment ends in fewer
sessions. The expected time is the run's steps to go over its speed here: its own on this machine, else that of the
committed runs of its method and env made on a machine of the same CPU model name and kind (the exports' "running"
record: seconds, timed steps, CPU), else that of its method's runs there in any env, else the slowest run's there,
else not known, which counts as ending in time.

Every EXPORT_MINUTES (default 10) and whenever a run ends, the curve of each run, finished or not, is exported to
docs/results/experiments/<experiment>/<run>.json (an unfinished one has "finished": null) and committed in the repository,
those files only. Ctrl-C or SIGTERM stops the queue: each run gets SIGTERM, saves a checkpoint with the episode under
way and exits; the curves are exported and committed; the next start of the queue resumes them.

Settings (environment variables): WORKERS (default: the number of cores), QUEUE_DIR (default: camel-queue beside the
repository, outside it, so that a freshly laid checkout keeps the checkpoints), EXPORT_MINUTES, EXPERIMENTS (ids to
run, space-separated; default all), COMMIT=0 (export without committing).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from camel_utils.cli import UsageError  # noqa: E402
from camel_utils.machine import cpu_kind, cpu_model  # noqa: E402
from camel_utils.preregistration import EXPORTS, TRAINERS, planned_runs, registered_experiments  # noqa: E402
from camel_utils.results.runs import event_files, read_export, running_time, timed_points  # noqa: E402


# ---- Where runs live ------------------------------------------------------------------------------------------------
def queue_dir():
    return Path(os.environ.get("QUEUE_DIR") or REPO.parent / "camel-queue").resolve()


def git(*args, cwd=REPO, check=True):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=check)


def worktree(commit):
    """A git worktree of the repository at `commit` (made, or remade when a fresh checkout lost its link)."""
    path = queue_dir() / "code" / commit
    head = git("rev-parse", "HEAD", cwd=path, check=False) if path.is_dir() else None
    if head is not None and head.returncode == 0 and head.stdout.strip().startswith(commit):
        return path
    if path.exists():
        shutil.rmtree(path)
    git("worktree", "prune")
    path.parent.mkdir(parents=True, exist_ok=True)
    git("worktree", "add", "--detach", str(path), commit)
    return path


def run_home(run):
    """The folder runs of the experiment start in (run folders in its runs/), with the worktree's policies/ linked, so
    that a run records its guide as policies/... ."""
    home = queue_dir() / run.experiment
    (home / "runs").mkdir(parents=True, exist_ok=True)
    link = home / "policies"
    target = worktree(run.commit) / "policies"
    if link.is_symlink() and Path(os.readlink(link)) != target:
        link.unlink()
    if not link.exists():
        link.symlink_to(target)
    return home


def run_dir(run):
    return queue_dir() / run.experiment / "runs" / run.name


def export_path(run):
    return EXPORTS / run.experiment / f"{run.name}.json"


def run_file(run, suffix):
    """A file beside the run's folder: its process id (.pid) while a queue runs it, its output (.log)."""
    return run_dir(run).parent / f"{run.name}{suffix}"


def pid_file(run):
    return run_file(run, ".pid")


def running_pid(run):
    """The process id of the run if a queue is running it now, else None."""
    try:
        pid = int(pid_file(run).read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def state(run):
    """finished, running (by a queue now), checkpoint (resumable here), started (a folder without a checkpoint:
    killed before its first), or missing; a committed finished export counts as finished."""
    folder = run_dir(run)
    if (folder / "finished.json").exists():
        return "finished"
    if running_pid(run):
        return "running"
    exported = export_path(run)
    if exported.exists() and json.loads(exported.read_text()).get("finished"):
        return "finished"
    if (folder / "checkpoint.pt").exists():
        return "checkpoint"
    return "started" if folder.exists() else "missing"


def committed_steps(run):
    """The last step of the run's committed curve (0 when none)."""
    path = export_path(run)
    if not path.exists():
        return 0
    points = json.loads(path.read_text()).get("curves", {}).get("eval/episodic_return", [])
    return points[-1][0] if points else 0


def recent_speed(run, window=10_000):
    """(the last step, steps/s over its last `window` steps, evaluations included) of the run's newest process, from
    the wall times of its charts/epsilon points (one every 100 steps); None before it has logged two."""
    files = event_files(run_dir(run))
    points = timed_points(files[-1]) if files else []
    if len(points) < 2:
        return None
    last, now = points[-1]
    first, then = next(((step, time) for step, time in points if last - window <= step < last), points[-2])
    return last, (last - first) / (now - then)


# ---- Exporting and committing curves ------------------------------------------------------------------------------
def export(runs):
    """Write each run's curve (finished or not) under docs/results/experiments/<experiment>/; returns the files written."""
    from camel_utils.results.export import export_run

    written = []
    for run in runs:
        folder = run_dir(run)
        if event_files(folder):
            target = export_path(run)
            target.parent.mkdir(parents=True, exist_ok=True)
            if export_run(str(folder), str(target), repo=worktree(run.commit)):
                written.append(target)
    return written


def commit(paths, message):
    """Commit these files only (others staged or changed in the repository are left as they are)."""
    if os.environ.get("COMMIT", "1") == "0" or not paths:
        return
    relative = [str(p.relative_to(REPO)) for p in paths]
    for attempt in range(5):  # another git command may hold the index for a moment
        added = git("add", "--", *relative, check=False)
        if added.returncode == 0:
            if git("diff", "--cached", "--quiet", "--", *relative, check=False).returncode == 0:
                return  # nothing changed
            done = git("commit", "-q", "-m", message, "--", *relative, check=False)
            if done.returncode == 0:
                return
        time.sleep(2 + 3 * attempt)
    print(f"queue: could not commit {len(relative)} curve files: {(done if added.returncode == 0 else added).stderr.strip()}", file=sys.stderr)


# ---- The session's end (UNTIL) -------------------------------------------------------------------------------------
def deadline(text, now=None):
    """The timestamp of the next HH:MM[:SS] on this machine's clock after `now` (UNTIL=01:30 at 23:00: tomorrow's)."""
    parts = text.split(":")
    limits = (24, 60, 60)[: len(parts)]
    if not (2 <= len(parts) <= 3 and all(p.isdigit() and len(p) == 2 and int(p) < n for p, n in zip(parts, limits))):
        raise UsageError(f"UNTIL={text!r} is not a time of day HH:MM or HH:MM:SS (e.g. UNTIL=15:40)")
    hours, minutes, seconds = (int(p) for p in (*parts, "00")[:3])
    now = time.time() if now is None else now
    day = time.localtime(now)
    at = time.mktime((day.tm_year, day.tm_mon, day.tm_mday, hours, minutes, seconds, 0, 0, -1))
    return at if at > now else time.mktime((day.tm_year, day.tm_mon, day.tm_mday + 1, hours, minutes, seconds, 0, 0, -1))


def duration(seconds):
    """Hours to a tenth, or minutes under 6 of them."""
    return f"{seconds / 3600:.1f} h" if seconds >= 360 else f"{seconds / 60:.0f} min"


def this_machine():
    """{cpu, cpu_kind}: the CPU's model name and kind, as the exports' "running" records name the machine of a run."""
    return {"cpu": cpu_model(), "cpu_kind": cpu_kind()}


def timed_exports(machine):
    """(env_id, method, "running" record) of each committed export timed on a machine of this CPU model and kind
    (10k steps or more)."""
    return [(record["env_id"], (record.get("hyperparameters") or {}).get("exp_name"), running)
            for path in (REPO / "docs" / "results" / "experiments").glob("*/*.json")
            if (record := read_export(path)) and (running := record.get("running"))
            and {k: running.get(k) for k in machine} == machine and running["seconds"] > 0 and running["steps"] >= 10_000]  # fmt: skip


def expected_speed(run, machine, timed_here=None, timed=None):
    """The steps/s to expect of the run here: its own on this machine (run folder, 10k steps timed or more), else that
    of the committed runs of its method and env made on a machine of this CPU model and kind (their exports'
    "running"), else that of its method's runs there in any env, else the slowest of any run there (a guess that errs
    towards a run not ending in time), else None. `timed_here` (running_time of the run's folder) and `timed`
    (timed_exports(machine)): when the caller has them."""
    seconds, steps, _ = timed_here or running_time(run_dir(run))
    if steps >= 10_000:
        return steps / seconds
    timed = timed_exports(machine) if timed is None else timed
    for same_env in (True, False):
        chosen = [running for env_id, method, running in timed if method == run.method and (env_id == run.env_id or not same_env)]
        if chosen:
            return sum(t["steps"] for t in chosen) / sum(t["seconds"] for t in chosen)
    return min((running["steps"] / running["seconds"] for _, _, running in timed), default=None)


def seconds_to_go(run, machine, timed=None):
    """The run's expected seconds to its end here (from its checkpoint if it has one), or None when unknown. `timed`:
    timed_exports(machine), when the caller has it."""
    timed_here = running_time(run_dir(run))  # read once: a long run's event files take seconds
    speed = expected_speed(run, machine, timed_here, timed)
    done = timed_here[2] if state(run) == "checkpoint" else 0
    return (run.total_timesteps - done) / speed if speed else None


def next_run(todo, until, machine):
    """Take the next run from todo: the first, or with UNTIL the first expected to end before it (a run whose speed
    here is not known yet counts as one), so that a run that cannot finish in the session does not hold a core from
    one that can; when none can, the one with the most time to go (it goes on in a later session on this machine,
    from its checkpoint): the runs that outlast a session start soonest, so that the experiment ends in as few
    sessions as it can, and with it the chance that a change of machine restarts its runs."""
    if until is not None:
        left, to_go, timed = until - time.time(), [], timed_exports(machine)  # the exports read once per choice
        for i, run in enumerate(todo):
            to_go.append(seconds_to_go(run, machine, timed))
            if to_go[i] is None or to_go[i] <= left:
                if i:
                    waiting = ", ".join(f"{r.name} ({duration(seconds)})" for r, seconds in zip(todo, to_go[:i]))
                    print(f"queue: {duration(left)} to UNTIL; waiting for a later start: {waiting}", flush=True)
                return todo.pop(i)
        longest = max(range(len(todo)), key=lambda i: (to_go[i], -i))  # of equals, the first in order
        print(f"queue: {duration(left)} to UNTIL, in which no run left is expected to end: the one with the most to go, "
              f"{todo[longest].name} ({duration(to_go[longest])}), runs until then and goes on in a later session on this machine", flush=True)  # fmt: skip
        return todo.pop(longest)
    return todo.pop(0)


# ---- The loop -------------------------------------------------------------------------------------------------------
def chosen_experiments():
    experiments = registered_experiments()
    wanted = os.environ.get("EXPERIMENTS", "").split()
    unknown = set(wanted) - {e["id"] for e in experiments}
    if unknown:
        raise UsageError(f"EXPERIMENTS names {', '.join(sorted(unknown))}, which docs/preregistration.md does not register")
    return [e for e in experiments if not wanted or e["id"] in wanted]


def in_queue_order(runs):
    """The registered order (experiment by experiment, seed by seed), but in each seed's round the runs of CAMEL+,
    which takes about twice as long per step (docs/benchmark.md), after the others: on a new machine, where every run
    starts from step 0, the shorter runs are the ones that may finish within the session that starts them."""
    rounds = {}
    for run in runs:
        rounds.setdefault((run.experiment, run.seed), len(rounds))
    return sorted(runs, key=lambda run: (rounds[run.experiment, run.seed], run.method == "camel_plus_td3"))


def status(runs):
    counts = {}
    for run in runs:
        counts.setdefault(run.experiment, {}).setdefault(state(run), []).append(run)
    for experiment, by_state in counts.items():
        total = sum(len(v) for v in by_state.values())
        print(f"{experiment}: {len(by_state.get('finished', []))} of {total} finished")
        if len(by_state.get("finished", [])) == total:  # what to do with a whole experiment (docs/usage.md)
            print("  all in: its figure and the tables that wait for its runs are drawn by scripts/figures.sh (docs/usage.md)")
        words = {"running": "running", "checkpoint": "stopped, resumes from its checkpoint", "started": "no checkpoint, starts again"}
        for name, word in words.items():
            for run in by_state.get(name, []):
                said = word
                speed = recent_speed(run) if name == "running" else None
                if speed:  # the rate now, not the mean since the start, which counts the minutes a process was paused
                    step, rate = speed
                    hours = (run.total_timesteps - step) / rate / 3600
                    said = f"running, step {step:,}, {rate:.0f} steps/s over its last 10k steps ({hours:.1f} h to go at that rate)"
                print(f"  {run.name}: {said} (committed curve to step {committed_steps(run)})")
        left = by_state.get("missing", [])
        if left:
            machine = this_machine()
            timed = timed_exports(machine)
            expected = [(run, seconds_to_go(run, machine, timed)) for run in left[:4]]
            named = ", ".join(run.name + (f" ({duration(to_go)} here)" if to_go is not None else "") for run, to_go in expected)
            print(f"  {len(left)} not started, next: {named}{' ...' if len(left) > 4 else ''}")


def main(argv):
    mode = argv[0] if argv else "run"
    if mode not in ("run", "status", "plan") or len(argv) > 1:
        raise UsageError("usage: scripts/queue.py [run|status|plan] (see its docstring)")
    runs = in_queue_order([run for experiment in chosen_experiments() for run in planned_runs(experiment)])
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `scripts/queue.py plan | head` ends quietly
    if mode == "plan":
        for i, run in enumerate(runs):
            print(f"{i:3d} {run.experiment} {run.name} {run.guide or '-'} {run.total_timesteps} @{run.commit[:10]}")
        return 0
    if mode == "status":
        status(runs)
        return 0

    workers = int(os.environ.get("WORKERS") or os.cpu_count() or 1)
    until = deadline(os.environ["UNTIL"]) if os.environ.get("UNTIL") else None
    machine = this_machine()
    export_every = 60 * float(os.environ.get("EXPORT_MINUTES", "10"))
    python = str(REPO / ".venv" / "bin" / "python") if (REPO / ".venv" / "bin" / "python").exists() else sys.executable
    if any(state(run) == "running" for run in runs):
        raise UsageError("a queue is already running (scripts/queue.py status shows its runs); stop it first")
    todo = [run for run in runs if state(run) != "finished"]
    todo.sort(key=lambda run: state(run) != "checkpoint")  # resumable runs first, then in the queue's order
    running, failed, stopping, reached_until = {}, [], False, False

    def stop(signum, frame):
        nonlocal stopping
        stopping = True
        for process in running.values():
            process[0].send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    print(f"queue: {len(runs) - len(todo)} of {len(runs)} registered runs finished; {len(todo)} to go, {workers} at a time", flush=True)
    last_export = time.time()
    while (todo or running) and not (stopping and not running):
        while todo and len(running) < workers and not stopping:
            run = next_run(todo, until, machine)
            cores = sorted(set(range(workers)) - {core for _, core, _ in running.values()})
            core = cores[0]
            home, code = run_home(run), worktree(run.commit)
            command = run.command(python, code)
            if state(run) == "checkpoint":  # a run killed before its first checkpoint starts again in its folder
                command = [python, str(code / TRAINERS[run.method]), "--resume", f"runs/{run.name}", "--torch-threads", "1"]
            pinned = ["taskset", "-c", str(core % (os.cpu_count() or 1)), *command] if shutil.which("taskset") else command
            log = open(run_file(run, ".log"), "a")
            log.write(f"\n==== {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(command)}\n")
            log.flush()
            environment = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
            process = subprocess.Popen(pinned, cwd=home, stdout=log, stderr=subprocess.STDOUT, env=environment)
            running[run] = (process, core, log)
            pid_file(run).write_text(str(process.pid))
            print(f"queue: {run.name} ({run.experiment}) on core {core}: "
                  f"{'resumed' if '--resume' in command else 'started'}", flush=True)  # fmt: skip
        time.sleep(5)
        if until is not None and time.time() >= until and not stopping:
            print(f"queue: UNTIL={os.environ['UNTIL']} reached: stopping its runs at their next step", flush=True)
            stop(signal.SIGTERM, None)
            reached_until = True
        ended = [run for run, (process, _, _) in running.items() if process.poll() is not None]
        for run in ended:
            process, _, log = running.pop(run)
            log.close()
            pid_file(run).unlink(missing_ok=True)
            code = process.returncode
            if code == 0:
                print(f"queue: {run.name} finished", flush=True)
            elif code not in (130, -signal.SIGTERM):
                failed.append(run)
                print(f"queue: {run.name} failed (exit {code}); its output: {run_file(run, '.log')}", file=sys.stderr, flush=True)
        if ended or time.time() - last_export > export_every:
            # a run that wrote finished.json but has not exited yet is exported when it exits, in the commit that says so
            written = export([run for run in running if state(run) != "finished"] + ended)
            finished = [run for run in ended if state(run) == "finished"]
            message = (f"queue: {', '.join(r.name for r in finished)} finished" if finished else "queue: curves")
            commit(written, f"{message} ({', '.join(sorted({r.experiment for r in list(running) + ended}))})")
            last_export = time.time()
    status(runs)
    if failed:
        print(f"queue: {len(failed)} runs failed: {', '.join(r.name for r in failed)}", file=sys.stderr)
        return 1
    return 130 if stopping and not reached_until else 0



if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
