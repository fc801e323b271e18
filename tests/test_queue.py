"""Specification of the experiment queue (scripts/queue.py), end to end. Each test clones the repository into a
throwaway folder whose docs/preregistration.md registers one tiny experiment, T1 (TD3 and the paper's CAMEL on
Hopper-v4, seed 1, 1500 steps, an evaluation and a checkpoint every 500), at the clone's code commit, and runs this
working tree's scripts/queue.py there with its own QUEUE_DIR. The queue plans and reports the registered runs (CAMEL+
last in each seed's round; a running run's step and recent speed), refuses an unregistered experiment, runs every run
at the registered commit, exports and commits the curves (those files only), stops on SIGTERM with a checkpoint that
the next queue resumes, and refuses a second queue while one runs. Nothing touches this repository's history or the
real queue."""

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from camel_utils.preregistration import planned_runs, record_problems, registered_experiments

REPO = Path(__file__).resolve().parent.parent
FLAGS = ["--learning-starts", "500", "--batch-size", "32", "--buffer-size", "5000", "--eval-frequency", "500",
         "--eval-episodes", "1", "--checkpoint-frequency", "500", "--no-save-model"]  # fmt: skip
STEPS = 1500
EVALUATIONS = [500, 1000, 1500]  # every --eval-frequency steps and the last
QUEUE_SETTINGS = ("WORKERS", "QUEUE_DIR", "EXPORT_MINUTES", "EXPERIMENTS", "COMMIT", "UNTIL")
IDENTITY = {"GIT_AUTHOR_NAME": "queue test", "GIT_AUTHOR_EMAIL": "queue@test", "GIT_COMMITTER_NAME": "queue test",
            "GIT_COMMITTER_EMAIL": "queue@test"}  # fmt: skip


def git(*args, cwd):
    """git's output without its last newline (a `status --porcelain` line keeps its leading space)."""
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60).stdout.rstrip("\n")


def wait_for(condition, timeout, what, seen=None):
    """Poll until condition() is true; fail naming `what`, and what was last `seen` (a list the condition fills), after
    `timeout` seconds."""
    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, f"waited {timeout} s for {what}" + (f"; last seen: {seen}" if seen else "")
        time.sleep(0.2)


class Clone:
    """A clone of the repository registering T1 at its code commit, and the queues started in it (each in a session
    of its own, so its runs share its process group)."""

    def __init__(self, tmp_path, methods, steps, seeds=(1,)):
        self.root, self.repo, self.queue_dir = tmp_path, tmp_path / "repo", tmp_path / "q"
        subprocess.run(["git", "clone", "--quiet", "--shared", str(REPO), str(self.repo)], check=True, timeout=120)
        self.code = git("rev-parse", "HEAD", cwd=self.repo)  # the registered commit: the clone's code
        shutil.copy(REPO / "scripts" / "queue.py", self.repo / "scripts" / "queue.py")  # the queue as this working tree has it
        entry = {"id": "T1", "commit": self.code, "total_timesteps": steps, "flags": FLAGS,
                 "groups": [{"methods": list(methods), "envs": ["Hopper-v4"], "seeds": list(seeds)}]}  # fmt: skip
        text = f"# Preregistration\n\n## T1\n\n```json\n{json.dumps(entry, indent=2)}\n```\n"
        (self.repo / "docs" / "preregistration.md").write_text(text)
        # no committed runs: their recorded speeds would make status's expected hours depend on the machine
        git("rm", "-r", "-q", "docs/results/experiments", cwd=self.repo)
        git("commit", "-q", "-m", "register T1", "--", "docs/preregistration.md", "scripts/queue.py", "docs/results/experiments", cwd=self.repo)
        self.registered = git("rev-parse", "HEAD", cwd=self.repo)
        self.runs = planned_runs(registered_experiments(text)[0])
        self.processes, self.outputs = [], []

    def environment(self, **settings):
        env = {k: v for k, v in os.environ.items() if k not in QUEUE_SETTINGS}
        env.update(IDENTITY, QUEUE_DIR=str(self.queue_dir), WORKERS="1", EXPORT_MINUTES="0.05")
        env.update({k: str(v) for k, v in settings.items()})
        return env

    def command(self, *args, **settings):
        """`scripts/queue.py ARGS` run to its end (plan, status, a refused start)."""
        return subprocess.run([sys.executable, str(self.repo / "scripts" / "queue.py"), *args], cwd=self.repo,
                              env=self.environment(**settings), capture_output=True, text=True, timeout=120)  # fmt: skip

    def start(self, **settings):
        """The queue started in the background, its output in a file of its own."""
        output = self.root / f"queue{len(self.processes)}.out"
        with open(output, "w") as f:
            process = subprocess.Popen([sys.executable, str(self.repo / "scripts" / "queue.py")], cwd=self.repo,
                                       env=self.environment(**settings), stdout=f, stderr=subprocess.STDOUT,
                                       start_new_session=True)  # fmt: skip
        self.processes.append(process)
        self.outputs.append(output)
        return process

    def run_folder(self, run):
        return self.queue_dir / "T1" / "runs" / run.name

    def log(self, run):
        return self.queue_dir / "T1" / "runs" / f"{run.name}.log"

    def exported(self, run):
        path = self.repo / "docs" / "results" / "experiments" / "T1" / f"{run.name}.json"
        return json.loads(path.read_text()) if path.exists() else None

    def eval_steps(self, run):
        return [step for step, _ in self.exported(run)["curves"]["eval/episodic_return"]]

    def changed(self):
        """`git status --porcelain` of the clone: what is changed and not committed."""
        return set(git("status", "--porcelain", cwd=self.repo).splitlines())

    def committed_since_registration(self):
        return set(git("diff", "--name-only", self.registered, "HEAD", cwd=self.repo).splitlines())

    def close(self):
        """Kill what is still running and print every queue's output and run log (pytest shows them on a failure)."""
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        for output in self.outputs:
            print(f"---- {output.name}\n{output.read_text()}")
        for log in sorted((self.queue_dir / "T1" / "runs").glob("*.log")):
            print(f"---- {log.name}\n{log.read_text()[-4000:]}")


@pytest.fixture
def clone(tmp_path):
    made = []

    def make(methods=("td3", "camel_td3"), steps=STEPS, seeds=(1,)):
        made.append(Clone(tmp_path, methods, steps, seeds))
        return made[-1]

    yield make
    for c in made:
        c.close()


def test_plan_lists_the_registered_runs_in_order_and_status_says_none_finished_and_what_is_next(clone):
    c = clone()
    plan = c.command("plan")
    assert plan.returncode == 0, plan.stderr
    assert plan.stdout.splitlines() == [f"  0 T1 Hopper-v4__td3__1 - {STEPS} @{c.code[:10]}",
                                        f"  1 T1 Hopper-v4__camel_td3__1 policies/hopper.py {STEPS} @{c.code[:10]}"]  # fmt: skip
    status = c.command("status")
    assert status.returncode == 0, status.stderr
    assert status.stdout.splitlines() == ["T1: 0 of 2 finished", "  2 not started, next: Hopper-v4__td3__1, Hopper-v4__camel_td3__1"]
    assert not c.queue_dir.exists(), "plan and status run nothing"


def test_in_each_seeds_round_the_queue_takes_camel_plus_last(clone):
    # CAMEL+ is about twice as slow per step: the others of its seed go first, so that they can finish in one session
    c = clone(methods=("camel_plus_td3", "td3", "camel_td3"), seeds=(1, 2))
    plan = c.command("plan")
    assert plan.returncode == 0, plan.stderr
    assert [line.split()[2] for line in plan.stdout.splitlines()] == [
        "Hopper-v4__td3__1", "Hopper-v4__camel_td3__1", "Hopper-v4__camel_plus_td3__1",
        "Hopper-v4__td3__2", "Hopper-v4__camel_td3__2", "Hopper-v4__camel_plus_td3__2"]  # fmt: skip
    status = c.command("status")
    assert status.stdout.splitlines()[1] == "  6 not started, next: Hopper-v4__td3__1, Hopper-v4__camel_td3__1, Hopper-v4__camel_plus_td3__1, Hopper-v4__td3__2 ..."


def test_an_unregistered_experiment_is_refused_in_one_line(clone):
    c = clone()
    for mode in ("plan", "status", "run"):
        refused = c.command(mode, EXPERIMENTS="T1 T9")
        assert refused.returncode == 2 and refused.stdout == ""
        assert refused.stderr.splitlines() == ["error: EXPERIMENTS names T9, which docs/preregistration.md does not register"]
    assert not c.queue_dir.exists()


def test_the_queue_runs_every_run_at_the_registered_commit_and_commits_only_their_curves(clone):
    c = clone()
    # what someone else is editing in the repository: one file changed, one staged; the queue commits neither
    with open(c.repo / "README.md", "a") as f:
        f.write("\nan edit under way\n")
    (c.repo / "notes.txt").write_text("staged, not committed\n")
    git("add", "notes.txt", cwd=c.repo)
    before = c.changed()
    queue = c.start(WORKERS=2)
    assert queue.wait(timeout=300) == 0
    for run in c.runs:
        finished = json.loads((c.run_folder(run) / "finished.json").read_text())
        assert finished["commit"] == c.code and finished["total_timesteps"] == STEPS
        assert f"{c.queue_dir}/code/{c.code}/camel_td3.py --env-id Hopper-v4" in c.log(run).read_text()  # the registered trainer
        record = c.exported(run)
        assert record["finished"] is not None and record_problems(run, record) == []
        assert c.eval_steps(run) == EVALUATIONS
        last = git("log", "-1", "--format=%s", f"{c.registered}..HEAD", "--", f"docs/results/experiments/T1/{run.name}.json", cwd=c.repo)
        assert re.fullmatch(rf"queue: (.*, )?{run.name}(, .*)? finished \(T1\)", last), last  # the commit of its finish says so
    assert c.committed_since_registration() == {f"docs/results/experiments/T1/{run.name}.json" for run in c.runs}
    assert c.changed() == before == {" M README.md", "A  notes.txt"}
    status = c.command("status")
    assert status.stdout.splitlines()[0] == "T1: 2 of 2 finished"


def test_a_queue_stopped_with_sigterm_leaves_a_checkpoint_that_the_next_queue_resumes_to_the_end(clone):
    c = clone(methods=("camel_td3",))
    (run,) = c.runs
    queue = c.start()
    wait_for(lambda: (c.run_folder(run) / "checkpoint.pt").exists() or queue.poll() is not None, 180, "the run's first checkpoint")
    assert queue.poll() is None, "the queue ended before the run's first checkpoint"
    queue.send_signal(signal.SIGTERM)  # the queue only: it passes the signal on to its runs
    assert queue.wait(timeout=120) == 130
    assert (c.run_folder(run) / "checkpoint.pt").exists() and not (c.run_folder(run) / "finished.json").exists()
    record = c.exported(run)
    assert record["finished"] is None and record_problems(run, record) == []  # the curve so far, exported and committed
    assert c.changed() == set() and c.committed_since_registration() == {f"docs/results/experiments/T1/{run.name}.json"}
    status = c.command("status").stdout.splitlines()
    assert status[0] == "T1: 0 of 1 finished"
    assert re.fullmatch(rf"  {run.name}: stopped, resumes from its checkpoint \(committed curve to step \d+\)", status[1]), status

    queue = c.start()
    assert queue.wait(timeout=300) == 0
    starts = [line for line in c.log(run).read_text().splitlines() if line.startswith("==== ")]
    assert len(starts) == 2 and "--resume" not in starts[0] and f"--resume runs/{run.name}" in starts[1]
    assert f"queue: {run.name} (T1) on core 0: resumed" in c.outputs[1].read_text()
    finished = json.loads((c.run_folder(run) / "finished.json").read_text())
    assert finished["commit"] == c.code and finished["total_timesteps"] == STEPS
    assert c.exported(run)["finished"] == finished
    assert c.eval_steps(run) == EVALUATIONS  # each evaluation once: none lost or repeated across the stop
    assert c.changed() == set()


def test_while_a_queue_runs_a_second_is_refused_and_the_curves_are_committed_every_export_minutes(clone):
    c = clone(methods=("td3",), steps=100_000)  # a run that outlasts the test
    (run,) = c.runs
    queue = c.start()
    pid_file = c.queue_dir / "T1" / "runs" / f"{run.name}.pid"
    wait_for(lambda: pid_file.exists() or queue.poll() is not None, 60, "the queue to start its run")
    second = c.command()
    assert second.returncode == 2 and second.stdout == ""
    assert second.stderr.splitlines() == ["error: a queue is already running (scripts/queue.py status shows its runs); stop it first"]
    assert queue.poll() is None and pid_file.exists(), "the refused queue leaves the running one alone"
    path = f"docs/results/experiments/T1/{run.name}.json"
    wait_for(lambda: queue.poll() is not None or git("log", "--format=%H", "--", path, cwd=c.repo), 180, "a committed curve")
    assert queue.poll() is None, "the queue ended while its run was under way"
    assert c.exported(run)["finished"] is None
    assert git("log", "-1", "--format=%s", cwd=c.repo) == "queue: curves (T1)"
    # the first curve may be committed before the run's event file holds two of its points, which a rate needs
    speed = rf"  {run.name}: running, step [\d,]+, \d+ steps/s over its last 10k steps \(\d+\.\d h to go at that rate\)"
    status = []

    def status_gives_the_rate():
        status[:] = c.command("status").stdout.splitlines()
        running = len(status) > 1 and re.fullmatch(rf"{speed} \(committed curve to step \d+\)", status[1])
        return queue.poll() is not None or running

    wait_for(status_gives_the_rate, 120, "status to give the running run's rate", seen=status)
    assert queue.poll() is None, status


def test_a_queue_given_until_stops_itself_then_as_sigterm_stops_it(clone):
    c = clone(methods=("td3",), steps=100_000)  # a run that outlasts the test
    (run,) = c.runs
    until = time.strftime("%H:%M:%S", time.localtime(time.time() + 40))  # the run is under way by then
    queue = c.start(UNTIL=until)
    assert queue.wait(timeout=150) == 0
    assert f"queue: UNTIL={until} reached: stopping its runs at their next step" in c.outputs[0].read_text()
    assert (c.run_folder(run) / "checkpoint.pt").exists() and not (c.run_folder(run) / "finished.json").exists()
    record = c.exported(run)
    assert record["finished"] is None and record["running"]["steps"] > 0 and c.changed() == set()
    status = c.command("status").stdout.splitlines()
    assert re.fullmatch(rf"  {run.name}: stopped, resumes from its checkpoint \(committed curve to step \d+\)", status[1]), status
    refused = c.command(UNTIL="3 pm")
    assert refused.returncode == 2 and refused.stderr == "error: UNTIL='3 pm' is not a time of day HH:MM or HH:MM:SS (e.g. UNTIL=15:40)\n"


def test_status_gives_a_running_runs_rate_over_its_last_10k_steps_in_its_newest_process(tmp_path, monkeypatch, capsys):
    import importlib.util

    from torch.utils.tensorboard import SummaryWriter

    spec = importlib.util.spec_from_file_location("queue_script", REPO / "scripts" / "queue.py")
    queue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(queue)
    monkeypatch.setenv("QUEUE_DIR", str(tmp_path))
    experiment = {"id": "T1", "commit": "0" * 40, "total_timesteps": 100_000, "groups": [{"methods": ["td3"], "envs": ["Hopper-v4"], "seeds": [1]}]}
    (run,) = planned_runs(experiment)
    assert queue.recent_speed(run) is None  # no folder yet
    # a first process: 50 steps/s to step 20,000, then paused for an hour; resumed in a second: 80 steps/s, then 40
    first = SummaryWriter(str(queue.run_dir(run)), filename_suffix=".first")
    for step in range(0, 20_001, 100):
        first.add_scalar("charts/epsilon", 1.0, step, walltime=1000.0 + step / 50 + (3600 if step == 20_000 else 0))
    first.close()
    assert queue.recent_speed(run) == (20_000, 10_000 / (200 + 3600))  # the pause counts: the rate over those steps
    time.sleep(0.05)  # the second file is newer
    second = SummaryWriter(str(queue.run_dir(run)), filename_suffix=".second")
    for step in range(20_000, 40_001, 100):
        second.add_scalar("charts/epsilon", 1.0, step, walltime=9000.0 + min(step - 20_000, 10_000) / 80 + max(step - 30_000, 0) / 40)
    second.close()
    assert queue.recent_speed(run) == (40_000, 40.0)  # steps 30,000-40,000 of the newest process, at 40 steps/s
    assert queue.recent_speed(run, window=15_000) == (40_000, 15_000 / (5_000 / 80 + 250))
    # both run by a queue now (this process's id), the second just resumed and with nothing logged: it gets its own word
    (resumed,) = planned_runs({**experiment, "groups": [{"methods": ["td3"], "envs": ["Walker2d-v4"], "seeds": [1]}]})
    queue.run_dir(resumed).mkdir(parents=True)
    for each in (run, resumed):
        queue.pid_file(each).write_text(str(os.getpid()))
    queue.status([run, resumed])
    assert capsys.readouterr().out.splitlines() == [
        "T1: 0 of 2 finished",
        f"  {run.name}: running, step 40,000, 40 steps/s over its last 10k steps (0.4 h to go at that rate) (committed curve to step 0)",
        f"  {resumed.name}: running (committed curve to step 0)",
    ]


def load_queue_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location("queue_script", REPO / "scripts" / "queue.py")
    queue = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(queue)
    return queue


def test_until_is_the_next_such_time_of_day_and_anything_else_is_refused_in_one_line(capsys):
    queue = load_queue_script()
    now = time.mktime((2026, 12, 31, 23, 0, 0, 0, 0, -1))  # 23:00 on the year's last day
    assert queue.deadline("23:40", now) - now == 40 * 60
    assert queue.deadline("23:00:30", now) - now == 30
    assert queue.deadline("01:30", now) - now == 2.5 * 3600  # past midnight: the next day's, in the next year
    assert queue.deadline("23:00", now) - now == 24 * 3600  # now itself has passed
    for text in ("1540", "24:00", "15:4", "15:40:60", "15:40:00:00", "noon", ""):
        with pytest.raises(SystemExit) as refused:
            queue.deadline(text, now)
        assert refused.value.code == 2
        assert capsys.readouterr().err == f"error: UNTIL={text!r} is not a time of day HH:MM or HH:MM:SS (e.g. UNTIL=15:40)\n"


def test_with_until_the_queue_starts_first_the_runs_expected_to_end_in_time(tmp_path, monkeypatch, capsys):
    from torch.utils.tensorboard import SummaryWriter

    queue = load_queue_script()
    monkeypatch.setenv("QUEUE_DIR", str(tmp_path / "q"))
    monkeypatch.setattr(queue, "REPO", tmp_path / "repo")  # where the committed exports are read
    experiment = {"id": "T1", "commit": "0" * 40, "total_timesteps": 100_000,
                  "groups": [{"methods": ["td3", "camel_plus_td3"], "envs": ["Hopper-v4", "Ant-v4"], "seeds": [1]}]}  # fmt: skip
    runs = {(run.method, run.env_id): run for run in planned_runs(experiment)}
    slow, fast, other_env, resumed = (runs["camel_plus_td3", "Ant-v4"], runs["td3", "Ant-v4"], runs["td3", "Hopper-v4"],
                                    runs["camel_plus_td3", "Hopper-v4"])  # fmt: skip
    # machines: one CPU model name covers kinds that differ in speed, as "AMD EPYC" with and without AVX-512 does
    here, other_kind, third = ({"cpu": "AMD EPYC", "cpu_kind": {"family": 25, "model": model, "simd": ["avx2"]}}
                               for model in (17, 1, 2))  # fmt: skip
    # committed exports made here: Ant-v4 CAMEL+ at 10 steps/s (another seed), Ant-v4 TD3 at 50; TD3 at 5 elsewhere
    exports = tmp_path / "repo" / "docs" / "results" / "experiments" / "E0"
    exports.mkdir(parents=True)
    for name, method, env_id, seconds, machine in [("a", "camel_plus_td3", "Ant-v4", 2_000, here),
                                                   ("b", "td3", "Ant-v4", 400, here),
                                                   ("c", "td3", "Ant-v4", 4_000, other_kind)]:  # fmt: skip
        record = {"format": "camel-run/1", "env_id": env_id, "hyperparameters": {"exp_name": method},
                  "running": {"seconds": seconds, "steps": 20_000, **machine}}  # fmt: skip
        (exports / f"{name}.json").write_text(json.dumps(record))
    # Hopper-v4 CAMEL+ has run here: 20 steps/s to step 40,000, its checkpoint there
    writer = SummaryWriter(str(queue.run_dir(resumed)))
    for step in range(0, 40_001, 100):
        writer.add_scalar("charts/epsilon", 1.0, step, walltime=1000.0 + step / 20)
    writer.close()
    (queue.run_dir(resumed) / "checkpoint.pt").write_bytes(b"")
    assert queue.expected_speed(slow, here) == 10.0 and queue.expected_speed(fast, here) == 50.0
    assert queue.expected_speed(fast, other_kind) == 5.0 and queue.expected_speed(other_env, other_kind) == 5.0
    assert queue.expected_speed(other_env, here) == 50.0  # none on Hopper-v4: TD3's here in any env
    assert queue.expected_speed(other_env, third) is None
    plus = dataclasses.replace(resumed, seed=2)  # CAMEL+ on Hopper-v4 has not run here: CAMEL+'s speed on Ant-v4
    assert queue.expected_speed(plus, here) == 10.0
    camel = dataclasses.replace(fast, method="camel_td3")  # no run of the paper's CAMEL here: the slowest run's speed
    assert queue.expected_speed(camel, here) == 10.0 and queue.expected_speed(camel, other_kind) == 5.0
    assert queue.expected_speed(resumed, here) == 20.0  # its own speed here, before any export's
    assert queue.seconds_to_go(resumed, here) == 60_000 / 20  # from its checkpoint
    assert queue.seconds_to_go(slow, here) == 100_000 / 10 and queue.seconds_to_go(other_env, third) is None

    order = [resumed, slow, fast, other_env]
    monkeypatch.setattr(queue.time, "time", lambda: 1_000_000.0)
    todo = list(order)
    assert queue.next_run(todo, None, here) == resumed  # without UNTIL: the queue's order
    todo = list(order)  # 2,500 s left: only TD3 (2,000 s on either env) can end in time
    assert queue.next_run(todo, 1_002_500.0, here) == fast
    assert capsys.readouterr().out == ("queue: 0.7 h to UNTIL; waiting for a later start: "
                                       f"{resumed.name} (0.8 h), {slow.name} (2.8 h)\n")  # fmt: skip
    assert queue.next_run(todo, 1_002_500.0, here) == other_env and todo == [resumed, slow]
    capsys.readouterr()
    assert queue.next_run(todo, 1_002_500.0, here) == slow  # none can: the one with the most to go (2.8 h, not 0.8 h)
    assert capsys.readouterr().out == ("queue: 0.7 h to UNTIL, in which no run left is expected to end: the one with the most to go, "
                                       f"{slow.name} (2.8 h), runs until then and goes on in a later session on this machine\n")  # fmt: skip
    assert queue.next_run(todo, 1_003_000.0, here) == resumed and todo == []
    todo = [other_env, fast]  # 2,000 s to go each, 1,000 s left: of equals, the first in order
    assert queue.next_run(todo, 1_001_000.0, here) == other_env and todo == [fast]
    capsys.readouterr()
    capsys.readouterr()
    todo = list(order)  # 3,000 s left: the resumed run (3,000 s to go) ends in time
    assert queue.next_run(todo, 1_003_000.0, here) == resumed and capsys.readouterr().out == ""
    todo = [slow, fast]  # on a machine no committed run was made on, a speed not known counts as ending in time
    assert queue.next_run(todo, 1_000_001.0, third) == slow
    monkeypatch.setattr(queue, "this_machine", lambda: here)  # status says what the runs not started take here
    queue.status([slow, fast])
    assert capsys.readouterr().out.splitlines()[1] == f"  2 not started, next: {slow.name} (2.8 h here), {fast.name} (0.6 h here)"
    assert (queue.duration(360), queue.duration(359), queue.duration(0)) == ("0.1 h", "6 min", "0 min")
