"""The claims table of docs/results.md: every number and word in it computed from runs (scripts/claims.py)."""

import json
import string
import os
import subprocess
import sys
import tomllib

import pytest

from camel_utils.results.claims import ClaimError, budget_blocks, claims_markdown, headline_markdown, read_claims, replace_claims

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUIDE = ("policies/hopper.py", "a" * 64)


def exported_run(folder, env_id, condition, seed, evaluations, training=None, guide=GUIDE, learning_starts=5000, scalars=None):
    """An exported run file (camel-run/1): `evaluations` and `training` are [(step, return)], `scalars` {tag: [(step,
    value)]} of other tags."""
    name = f"{env_id}__{condition}__{seed}"
    curves = {"eval/episodic_return": [list(p) for p in evaluations], **{tag: [list(p) for p in points] for tag, points in (scalars or {}).items()}}
    if training:
        curves["charts/episodic_return"] = [list(p) for p in training]
    record = {"format": "camel-run/1", "run_name": name, "env_id": env_id, "condition": condition, "seed": seed,
              "total_timesteps": evaluations[-1][0], "binned": {}, "curves": curves,
              "hyperparameters": {"exp_name": condition, "seed": str(seed), "env_id": env_id, "learning_starts": str(learning_starts),
                                  "llm_policy": guide[0] if guide else "None", "epsilon_fraction": "0.5",
                                  "total_timesteps": str(evaluations[-1][0])},
              "finished": {"run_name": name, "env_id": env_id, "exp_name": condition, "seed": seed,
                           "guide_file": {"path": guide[0], "sha256": guide[1]} if guide else None}}  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(record))


def claims_file(tmp_path, rows, resamples=200, headline=""):
    guides = tmp_path / "guides.json"
    guides.write_text(json.dumps({"Hopper-v4": {"mine": {"return": 1000.0, "guide": "policies/hopper.py"}}}))
    text = f'runs = "{tmp_path / "runs"}"\nguide_returns = "{guides}"\nbootstrap_resamples = {resamples}\n\n{headline}\n'
    path = tmp_path / "claims.toml"
    path.write_text(text + "\n".join(f"[[claim]]\n{row}\n" for row in rows))
    return path


def headline_spec(tmp_path):
    """A registered experiment's table (x and y on seeds 1-3 under registered/) and the interim one (x alone, the
    guide alone, a published number) shown until then."""
    return f'''[headline]
envs = ["Hopper-v4"]
runs = "{tmp_path / "registered"}"
bootstrap_resamples = 200
text = "Like for like at {{step}} steps, {{ci}} CIs, {{resamples}} resamples."
waiting = "{{total}} registered runs under way."
columns = [{{ condition = "x", seeds = "1-3", label = "X" }}, {{ condition = "y", seeds = "1-3", label = "Y" }}]
figure = {{ path = "{tmp_path / "registered.png"}", alt = "X and Y" }}

[headline.interim]
runs = "{tmp_path / "runs"}"
bootstrap_resamples = 100
text = "Not like for like, at {{step}} steps ({{resamples}} resamples)."
columns = [{{ condition = "x", seeds = "1-3", label = "X" }}, {{ guide = "mine", label = "guide alone" }},
           {{ published = {{ "Hopper-v4" = 2249 }}, label = "published" }}]
'''


X_AGAINST_Y = '''question = "Does x end above y?"
x = { condition = "x", seeds = "1-3", label = "X" }
y = { condition = "y", seeds = "1-3", label = "Y" }
envs = ["Hopper-v4"]'''


@pytest.fixture
def runs(tmp_path):
    for seed, (x, y) in enumerate([(300, 50), (200, 150), (100, 250)], start=1):
        exported_run(tmp_path / "runs", "Hopper-v4", "x", seed, [(5000, 0.0), (10000, x)],
                     training=[(0, 1.0), (5000, 2.0), (10000, 3.0), (30000, 4.0)])  # fmt: skip
        exported_run(tmp_path / "runs", "Hopper-v4", "y", seed, [(5000, 0.0), (10000, y)], guide=None)
    return tmp_path / "runs"


def test_comparison_gives_the_means_and_the_probability_of_improvement_computed_by_hand(tmp_path, runs):
    table = claims_markdown(claims_file(tmp_path, [X_AGAINST_Y]))
    row = table.splitlines()[-1]
    # means 200 and 150; P(X > Y): of the 9 pairs, X wins 3 + 2 + 1 = 6
    assert "Hopper at 10k: 200 [" in row and "against 150 [" in row and "P(X > Y) 0.67 [" in row
    assert "not resolved on Hopper" in row and "X (seeds 1-3) against Y (seeds 1-3)" in row


def test_every_seed_above_reads_above_and_against_a_guide_reads_from_the_mean(tmp_path, runs):
    for seed in (1, 2, 3):
        exported_run(runs, "Hopper-v4", "low", seed, [(5000, 0.0), (10000, 10.0 * seed)])
    rows = [X_AGAINST_Y.replace('condition = "y"', 'condition = "low"'),
            'question = "Does x end above its guide?"\nx = { condition = "x", seeds = "1-3", label = "X" }\nguide = "mine"\nenvs = ["Hopper-v4"]']
    table = claims_markdown(claims_file(tmp_path, rows)).splitlines()
    assert "P(X > Y) 1.00 [1.00, 1.00]" in table[-2] and "above on Hopper" in table[-2]
    # the guide returns 1000: every resampled mean of 100, 200, 300 lies below it
    assert "200 [" in table[-1] and "against 1000" in table[-1] and "below on Hopper" in table[-1]


def test_window_and_mean_over_training_metrics_computed_by_hand(tmp_path, runs):
    window = X_AGAINST_Y + '\nmetric = "window"\ntag = "charts/episodic_return"\nwindow = [5000, 25000]'
    training = X_AGAINST_Y + '\nmetric = "mean over training"'
    for seed in (1, 2, 3):  # y's runs need the training curve too
        exported_run(runs, "Hopper-v4", "y", seed, [(5000, 0.0), (10000, 0.0)], training=[(5000, 1.0), (10000, 1.0)], guide=None)
    table = claims_markdown(claims_file(tmp_path, [window, training])).splitlines()
    # the training returns at 5k and 10k are 2 and 3: their mean 2.5 (shown rounded: 2), y's 1
    assert "mean over steps 5k-25k: 2 [2, 2] against 1 [1, 1]" in table[-2]
    # x's evaluations 0 at 5k and 300/200/100 at 10k: the trapezoid's mean over 5k-10k is 150/100/50, mean 100
    assert "mean over training, 5k-10k: 100 [" in table[-1] and "against 0 [0, 0]" in table[-1]


def test_a_group_keeps_its_own_seeds_per_env(tmp_path, runs):
    row = X_AGAINST_Y.replace('label = "Y" }', 'label = "Y", seeds_by_env = { "Hopper-v4" = "1,3" } }')
    table = claims_markdown(claims_file(tmp_path, [row])).splitlines()
    # y's seeds 1 and 3 return 50 and 250: mean 150; X wins 2 + 1 + 1 of 6 pairs
    assert "Y (seeds 1-3 (Hopper 1, 3))" in table[-1] and "P(X > Y) 0.67" in table[-1]


def test_a_group_of_fewer_than_three_seeds_reads_too_few_seeds(tmp_path, runs):
    row = X_AGAINST_Y.replace('seeds = "1-3", label = "X"', 'seeds = "1,2", label = "X"')
    table = claims_markdown(claims_file(tmp_path, [row])).splitlines()
    # x's seeds 1 and 2 (300, 200) beat y's 50, 150, 250 in 3 + 2 of 6 pairs, and still no reading
    assert "X (seeds 1, 2)" in table[-1] and "P(X > Y) 0.83" in table[-1] and "too few seeds on Hopper" in table[-1]


@pytest.mark.parametrize("row, words", [
    (X_AGAINST_Y.replace('seeds = "1-3", label = "X"', 'seeds = "1-4", label = "X"'), "no finished run of seed 4"),
    (X_AGAINST_Y.replace("Does x end above y?", "Does x end above y, 1173 against 475?"), "writes a number by hand"),
    (X_AGAINST_Y + '\nguide = "mine"', "give either y"),
    (X_AGAINST_Y + '\nmetric = "auc"', "metric 'auc'"),
])  # fmt: skip
def test_a_row_that_cannot_be_computed_is_refused_in_one_line(tmp_path, runs, row, words):
    with pytest.raises(ClaimError, match=words):
        claims_markdown(claims_file(tmp_path, [row]))


def test_groups_that_ran_other_training_settings_are_refused_unless_the_question_names_them(tmp_path, runs):
    for seed in (1, 2, 3):
        exported_run(runs, "Hopper-v4", "late", seed, [(5000, 0.0), (10000, 5.0)], learning_starts=25000)
    row = X_AGAINST_Y.replace('condition = "y"', 'condition = "late"')
    with pytest.raises(ClaimError, match="learning_starts 5000 against 25000"):
        claims_markdown(claims_file(tmp_path, [row]))
    assert "above on Hopper" in claims_markdown(claims_file(tmp_path, [row + '\ndiffers_in = ["learning_starts"]']))


def test_seeds_of_one_group_with_different_guide_files_are_refused(tmp_path, runs):
    exported_run(runs, "Hopper-v4", "x", 3, [(5000, 0.0), (10000, 100.0)], guide=("policies/tuned/hopper.py", "b" * 64))
    with pytest.raises(ClaimError, match="different guide files"):
        claims_markdown(claims_file(tmp_path, [X_AGAINST_Y]))


def claims_script(claims, document, readme=None):
    """scripts/claims.py's command line on this claims file and results.md (and README.md: its first-screen blocks)."""
    script = [sys.executable, os.path.join(REPO, "scripts", "claims.py"), "--claims", str(claims), "--document", str(document)]
    return script + (["--readme", str(readme)] if readme else [])


def test_check_fails_on_a_hand_edited_number_and_the_script_writes_the_table_back(tmp_path, runs):
    claims = claims_file(tmp_path, [X_AGAINST_Y])
    document = tmp_path / "results.md"
    document.write_text("# Results\n\n<!-- claims -->\nold\n<!-- /claims -->\n\n## More\n")
    script = claims_script(claims, document)
    assert "[headline]" not in claims.read_text()  # no README table to write
    assert subprocess.run(script + ["--check"], capture_output=True, text=True).returncode == 1
    done = subprocess.run(script, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    written = document.read_text()
    assert written.startswith("# Results\n\n<!-- claims -->\n") and written.endswith("<!-- /claims -->\n\n## More\n")
    assert "P(X > Y) 0.67" in written
    assert subprocess.run(script + ["--check"], capture_output=True, text=True).returncode == 0
    document.write_text(written.replace("P(X > Y) 0.67", "P(X > Y) 0.97"))
    checked = subprocess.run(script + ["--check"], capture_output=True, text=True)
    assert checked.returncode == 1 and "python scripts/claims.py" in checked.stderr


def test_a_registered_row_waits_for_all_its_runs_and_takes_its_own_intervals(tmp_path, runs):
    registered = X_AGAINST_Y.replace('seeds = "1-3", label = "X"', 'seeds = "1-4", label = "X"')
    registered += '\nexperiment = "E1"\nconfidence = 0.983\nbootstrap_resamples = 300\nsection = "preregistration.md#e1"'
    row = claims_markdown(claims_file(tmp_path, [registered])).splitlines()[-1]
    assert "its 7 runs are under way" in row and "waits for its runs" in row and "[registered](preregistration.md#e1)" in row
    exported_run(runs, "Hopper-v4", "x", 4, [(5000, 0.0), (10000, 400.0)])
    row = claims_markdown(claims_file(tmp_path, [registered])).splitlines()[-1]
    # x 100-400 (mean 250) against y 50, 150, 250: X wins 6 + 3 of 12 pairs
    assert "98.3% CIs, 300 resamples:" in row and "250 [" in row and "P(X > Y) 0.75" in row


def test_a_group_takes_only_the_runs_of_its_guide_file(tmp_path, runs):
    for seed in (1, 2, 3):  # the same method and seeds with another guide, in the same folder
        exported_run(runs / "lean", "Hopper-v4", "x", seed, [(5000, 0.0), (10000, 1000.0)], guide=("policies/poor/hopper_lean.py", "c" * 64))
    with pytest.raises(ClaimError, match="different guide files"):
        claims_markdown(claims_file(tmp_path, [X_AGAINST_Y]))
    lean = X_AGAINST_Y.replace('label = "X" }', 'label = "X", guide_files = { "Hopper-v4" = "policies/poor/hopper_lean.py" } }')
    shipped = X_AGAINST_Y.replace('label = "X" }', 'label = "X", guide_files = { "Hopper-v4" = "policies/hopper.py" } }')
    table = claims_markdown(claims_file(tmp_path, [lean, shipped])).splitlines()
    assert "1000 [1000, 1000] against 150" in table[-2] and "200 [" in table[-1]


def test_the_headline_shows_the_interim_table_until_every_registered_run_is_in(tmp_path, runs):
    claims = claims_file(tmp_path, [X_AGAINST_Y], headline=headline_spec(tmp_path))
    waiting = headline_markdown(claims)
    assert waiting.startswith("6 registered runs under way.\n\nNot like for like, at 10k steps (100 resamples).")
    assert "| env | X | guide alone | published |" in waiting and "| Hopper-v4 | 200 [" in waiting and "| 1000 | 2249 |" in waiting
    # the normalised IQM of 300, 200, 100 (Hopper: R_random 18.0, R_ref 2693.0) is the middle run's: (200 - 18) / 2675
    assert f"| IQM of the normalised score, over the envs | {(200 - 18) / 2675:.2f} [" in waiting
    for seed, (x, y) in enumerate([(300, 50), (200, 150), (100, 250)], start=1):
        exported_run(tmp_path / "registered", "Hopper-v4", "x", seed, [(5000, 0.0), (10000, x + 1000)])
        if seed < 3:
            exported_run(tmp_path / "registered", "Hopper-v4", "y", seed, [(5000, 0.0), (10000, y)], guide=None)
    assert headline_markdown(claims).startswith("6 registered runs under way.")  # 5 of 6 in
    exported_run(tmp_path / "registered", "Hopper-v4", "y", 3, [(5000, 0.0), (10000, 250)], guide=None)
    assert "![" not in headline_markdown(claims)  # the figure once figures.sh has drawn it (all the experiment's runs in)
    (tmp_path / "registered.png").write_bytes(b"png")
    done = headline_markdown(claims)
    assert done.startswith("Like for like at 10k steps, 95% CIs, 200 resamples.\n\n| env | X | Y |")
    assert "| Hopper-v4 | 1200 [" in done and "] | 150 [" in done
    assert done.endswith(f"\n\n![X and Y]({tmp_path / 'registered.png'})\n")


def headline_script(tmp_path, readme_text):
    """scripts/claims.py's command line on a claims file with the headline of headline_spec, an empty results.md and
    a README.md holding readme_text: (command, README path)."""
    claims = claims_file(tmp_path, [X_AGAINST_Y], headline=headline_spec(tmp_path))
    document, readme = tmp_path / "results.md", tmp_path / "README.md"
    document.write_text("<!-- claims -->\n<!-- /claims -->\n")
    readme.write_text(readme_text)
    return claims_script(claims, document, readme), readme


def test_the_script_checks_and_writes_the_readme_headline_too(tmp_path, runs):
    script, readme = headline_script(tmp_path, "# Mine\n\n<!-- headline -->\nold\n<!-- /headline -->\n\nMore.\n")
    assert subprocess.run(script, capture_output=True, text=True).returncode == 0
    assert readme.read_text().startswith("# Mine\n\n<!-- headline -->\n6 registered runs under way.") and readme.read_text().endswith("<!-- /headline -->\n\nMore.\n")
    assert subprocess.run(script + ["--check"], capture_output=True, text=True).returncode == 0
    readme.write_text(readme.read_text().replace("| 2249 |", "| 2250 |"))
    checked = subprocess.run(script + ["--check"], capture_output=True, text=True)
    assert checked.returncode == 1 and str(readme) in checked.stderr


def test_check_accepts_a_readme_headline_written_before_the_queue_committed_the_last_run(tmp_path, runs):
    # the queue commits each finished run to main as it ends: main must stay green until claims.py is run again, though
    # the headline's whole shape changes (interim table to the registered one) and no line-by-line match exists
    script, readme = headline_script(tmp_path, "<!-- headline -->\n<!-- /headline -->\n")
    assert subprocess.run(script, capture_output=True, text=True).returncode == 0
    written = readme.read_text()
    assert "6 registered runs under way." in written
    for seed, (x, y) in enumerate([(300, 50), (200, 150), (100, 250)], start=1):
        exported_run(tmp_path / "registered", "Hopper-v4", "x", seed, [(5000, 0.0), (10000, x + 1000)])
        exported_run(tmp_path / "registered", "Hopper-v4", "y", seed, [(5000, 0.0), (10000, y)], guide=None)
    checked = subprocess.run(script + ["--check"], capture_output=True, text=True)
    assert checked.returncode == 0 and f"{readme} still says some registered runs are under way" in checked.stdout
    assert readme.read_text() == written  # --check writes nothing
    readme.write_text(written.replace("| 2249 |", "| 2250 |"))  # a wrong number in the interim table is still caught
    assert subprocess.run(script + ["--check"], capture_output=True, text=True).returncode == 1
    assert subprocess.run(script, capture_output=True, text=True).returncode == 0
    assert "under way" not in readme.read_text() and "| Hopper-v4 | 1200 [" in readme.read_text()
    assert subprocess.run(script + ["--check"], capture_output=True, text=True).stdout.startswith("the tables in")


def test_check_accepts_a_registered_row_still_under_way_but_no_wrong_number(tmp_path, runs):
    registered = X_AGAINST_Y + '\nexperiment = "E1"'
    claims = claims_file(tmp_path, [X_AGAINST_Y.replace("Does x", "Does X"), registered])
    document = tmp_path / "results.md"
    document.write_text("<!-- claims -->\n<!-- /claims -->\n")
    script = claims_script(claims, document)
    written = claims_markdown(claims, all_pending=True)  # as written while the registered runs were under way
    document.write_text(replace_claims(document.read_text(), written))
    checked = subprocess.run(script + ["--check"], capture_output=True, text=True)
    assert checked.returncode == 0 and "still says some registered runs are under way" in checked.stdout
    document.write_text(document.read_text().replace("P(X > Y) 0.67", "P(X > Y) 0.70", 1))  # the unregistered row's
    assert subprocess.run(script + ["--check"], capture_output=True, text=True).returncode == 1
    assert subprocess.run(script, capture_output=True, text=True).returncode == 0
    assert "under way" not in document.read_text()


def budget_spec(tmp_path):
    speeds = tmp_path / "speeds.json"
    speeds.write_text(json.dumps({"machine": {"cpu": "Test CPU", "date": "today"},
                                  "summary": [{"variant": "td3", "threads": 1, "median": 1.0},
                                              {"variant": "camel", "threads": 1, "median": 0.25}]}))  # fmt: skip
    return f'''[budget]
envs = ["Hopper-v4"]
runs = "{tmp_path / "b1m"}"
steps = [5000, 10000]
target_steps = [10000]
reference = "td3"
speeds = "{speeds}"
bootstrap_resamples = 200
readme = "README.md"
benchmark = "{tmp_path / "benchmark.md"}"
columns = [{{ condition = "td3", seeds = "1-3", label = "TD3" }}, {{ condition = "camel_td3", seeds = "1-3", label = "CAMEL" }}]
waiting = "B1M: {{total}} runs under way."
text = "B1M, {{ci}} CIs, {{resamples}} resamples."
time_text = "Hours to {{reference}}'s return at {{step}} on {{cpu}}:"
benchmark_waiting = "Waits for {{total}} runs."
below_text = "Below {{reference}} at {{step}}:"
benchmark_text = "From B1M."
figure = {{ path = "{tmp_path / "b1m.png"}", alt = "B1M to 10k" }}
'''


def test_the_budget_blocks_wait_for_every_run_then_give_the_table_and_the_hours_computed_by_hand(tmp_path):
    claims = claims_file(tmp_path, [], headline=budget_spec(tmp_path))
    blocks = budget_blocks(claims)
    assert [text for _, _, _, text in blocks] == ["", "B1M: 6 runs under way.\n", "Waits for 6 runs.\n"]
    for seed in (1, 2, 3):  # TD3: 100 at 5k, 200 at 10k; CAMEL: 300 and 400
        exported_run(tmp_path / "b1m", "Hopper-v4", "td3", seed, [(5000, 100.0), (10000, 200.0)], guide=None)
        exported_run(tmp_path / "b1m", "Hopper-v4", "camel_td3", seed, [(5000, 300.0), (10000, 400.0)])
    first_screen, readme, benchmark = [text for _, _, _, text in budget_blocks(claims)]
    assert first_screen == ""  # CAMEL ends above TD3
    assert readme.startswith("B1M, 95% CIs, 200 resamples.\n\n| env | method | 5k | 10k |")
    assert "| Hopper-v4 | TD3 | 100 [100, 100] | 200 [200, 200] |" in readme and "| Hopper-v4 | CAMEL | 300 [300, 300] | 400 [400, 400] |" in readme
    assert "MR.Q, published" not in readme  # published at 1M only, and these steps end at 10k
    # TD3's target, its mean at 10k, is 200: TD3 reaches it at 10k (10,000 s at 1 step/s), CAMEL at 5k (20,000 s at 0.25)
    assert readme.endswith("Hours to TD3's return at 10k on Test CPU: Hopper-v4 (200): TD3 2.8 h, CAMEL 5.6 h.\n")
    assert benchmark.startswith("From B1M.\n\n| env | target | return | TD3 (1.0 steps/s) | CAMEL (0.2 steps/s) |")
    assert "| Hopper-v4 | TD3 at 10k | 200.0 | 10k steps, 2.78 h | 5k steps, 5.56 h |" in benchmark
    (tmp_path / "b1m.png").write_bytes(b"png")  # once scripts/figures.sh has drawn it: under the table
    assert budget_blocks(claims)[1][3] == readme + f"\n![B1M to 10k]({tmp_path / 'b1m.png'})\n"
    exported_run(tmp_path / "b1m", "Hopper-v4", "camel_td3", 3, [(5000, 300.0), (10000, -500.0)])  # CAMEL's mean: 300 / 3
    first_screen = budget_blocks(claims)[0][3]
    assert first_screen == "Below TD3 at 10k:\n- CAMEL on Hopper-v4: 100 against 200\n"
    for seed in (1, 2, 3):  # CAMEL's mean curve now stays below TD3's 200 to the end: 190, then 100
        exported_run(tmp_path / "b1m", "Hopper-v4", "camel_td3", seed, [(5000, 190.0), (10000, 100.0)])
    assert "Hopper-v4 (200): TD3 2.8 h, CAMEL not reached by 10k.\n" in budget_blocks(claims)[1][3]


def test_the_first_screen_names_a_method_below_the_reference_once_both_have_every_run_on_that_env(tmp_path, runs):
    """While a third method's runs are under way, the tables wait but the first screen already says where a method
    whose runs are all in ends below the reference's."""
    spec = budget_spec(tmp_path).replace('label = "CAMEL" }]', 'label = "CAMEL" }, { condition = "camel_plus_td3", seeds = "1-3", label = "CAMEL+" }]')
    design = tmp_path / "design.md"
    spec += f'diagnosis = {{ document = "{design}", steps = [5000, 10000], text = "Below {{reference}} at {{step}}: {{method}} on {{env}}." }}\n'
    claims = claims_file(tmp_path, [], headline=spec)
    speeds = json.loads((tmp_path / "speeds.json").read_text())
    speeds["summary"].append({"variant": "camel-plus", "threads": 1, "median": 0.125})
    (tmp_path / "speeds.json").write_text(json.dumps(speeds))
    lengths = {"eval/episodic_length": [(5000, 500.0), (10000, 1000.0)]}  # whole 1000-step episodes at 10k
    for seed in (1, 2, 3):  # TD3: 200 at 10k; CAMEL: 150, 160, 170 (mean 160)
        exported_run(tmp_path / "b1m", "Hopper-v4", "td3", seed, [(5000, 100.0), (10000, 200.0)], guide=None, scalars=lengths)
        exported_run(tmp_path / "b1m", "Hopper-v4", "camel_td3", seed, [(5000, 100.0), (10000, 140.0 + 10 * seed)], scalars=lengths)
    exported_run(tmp_path / "b1m", "Hopper-v4", "camel_plus_td3", 1, [(5000, 100.0), (10000, 50.0)], scalars=lengths)  # 1 of 3
    first_screen, scalars, readme, benchmark = [text for _, _, _, text in budget_blocks(claims)]
    assert first_screen == "Below TD3 at 10k:\n- CAMEL on Hopper-v4: 160 against 200\n"  # not CAMEL+: 2 seeds to go
    assert scalars.startswith("Below TD3 at 10k: CAMEL on Hopper-v4.\n\n| Hopper-v4, mean over seeds 1, 2, 3 | TD3 | CAMEL |")
    assert "| return without the mask at 10k (per seed) | 200 (200, 200, 200) | 160 (150, 160, 170) |" in scalars
    assert "| steps per evaluation episode at 10k, of 1000 (per seed) | 1000, 1000, 1000 | 1000, 1000, 1000 |" in scalars
    assert (readme, benchmark) == ("B1M: 9 runs under way.\n", "Waits for 9 runs.\n")
    assert [text for _, _, _, text in budget_blocks(claims, waiting=True)[:2]] == ["", ""]

    # the queue commits CAMEL+'s last runs: main stays green (--check) until scripts/claims.py lists CAMEL+ too
    document, readme_file, benchmark_file = tmp_path / "results.md", tmp_path / "README.md", tmp_path / "benchmark.md"
    document.write_text("<!-- claims -->\n<!-- /claims -->\n")
    readme_file.write_text("# B1M\n\n<!-- below-td3 -->\n<!-- /below-td3 -->\n\n<!-- budget -->\n<!-- /budget -->\n")
    benchmark_file.write_text("<!-- time-to-return -->\n<!-- /time-to-return -->\n")
    design.write_text("## Diagnosis\n\n<!-- below-td3-scalars -->\n<!-- /below-td3-scalars -->\n\nWhy CAMEL ends below.\n")
    script = claims_script(claims, document, readme_file)
    assert subprocess.run(script, capture_output=True, text=True).returncode == 0
    written, written_design = readme_file.read_text(), design.read_text()
    assert "<!-- below-td3 -->\nBelow TD3 at 10k:\n- CAMEL on Hopper-v4: 160 against 200\n<!-- /below-td3 -->" in written
    assert written_design == f"## Diagnosis\n\n<!-- below-td3-scalars -->\n{scalars}<!-- /below-td3-scalars -->\n\nWhy CAMEL ends below.\n"
    for seed in (2, 3):  # CAMEL+: 50 at 10k on every seed, below TD3 too
        exported_run(tmp_path / "b1m", "Hopper-v4", "camel_plus_td3", seed, [(5000, 100.0), (10000, 50.0)], scalars=lengths)
    checked = subprocess.run(script + ["--check"], capture_output=True, text=True)
    assert checked.returncode == 0 and f"{readme_file} still says some registered runs are under way" in checked.stdout
    assert f"{design} still says some registered runs are under way" in checked.stdout  # its CAMEL+ table to come
    readme_file.write_text(written.replace("160 against", "161 against"))  # a wrong number is still caught
    assert subprocess.run(script + ["--check"], capture_output=True, text=True).returncode == 1
    readme_file.write_text(written)
    design.write_text(written_design.replace("160 (150, 160, 170)", "161 (150, 160, 170)"))  # in the diagnosis too
    assert subprocess.run(script + ["--check"], capture_output=True, text=True).returncode == 1
    assert subprocess.run(script, capture_output=True, text=True).returncode == 0
    assert "- CAMEL on Hopper-v4: 160 against 200\n- CAMEL+ on Hopper-v4: 50 against 200\n<!-- /below-td3 -->" in readme_file.read_text()
    assert design.read_text().startswith(f"## Diagnosis\n\n<!-- below-td3-scalars -->\n{scalars}\nBelow TD3 at 10k: CAMEL+ on Hopper-v4.\n\n")
    assert "| return without the mask at 10k (per seed) | 200 (200, 200, 200) | 50 (50, 50, 50) |" in design.read_text()
    assert subprocess.run(script + ["--check"], capture_output=True, text=True).stdout.startswith("the tables in")


def test_a_document_without_markers_is_refused():
    with pytest.raises(ClaimError, match="no <!-- claims -->"):
        replace_claims("# Results\n", "table\n")


def test_the_committed_claims_table_is_what_the_committed_runs_give():
    _, claims = read_claims(os.path.join(REPO, "docs", "results", "claims.toml"))
    assert len(claims) >= 30
    checked = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "claims.py"), "--check"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_every_committed_template_fills_its_placeholders():
    """The texts of docs/results/claims.toml are str.format templates: a doubled brace ({{step}}) would print itself."""
    with open(os.path.join(REPO, "docs", "results", "claims.toml"), "rb") as f:
        data = tomllib.load(f)
    tables = {"headline": data["headline"], "headline.interim": data["headline"]["interim"], "budget": data["budget"],
              "budget.diagnosis": data["budget"]["diagnosis"]}  # fmt: skip
    templates = {f"{name}.{key}": value for name, table in tables.items() for key, value in table.items()
                 if isinstance(value, str) and key.endswith(("text", "waiting"))}  # fmt: skip
    assert len(templates) >= 9
    for name, template in templates.items():
        fields = {field for _, field, _, _ in string.Formatter().parse(template) if field}
        filled = template.format(**{field: "X" for field in fields})
        assert "{" not in filled and "}" not in filled, name


def test_a_registered_row_claims_what_its_entry_registered(tmp_path, runs):
    """A primary comparison decides over the envs and reports each env's word; a row that decides nothing reports."""
    for seed in (1, 2, 3):  # Walker2d-v4: X above Y on every seed
        exported_run(runs, "Walker2d-v4", "x", seed, [(5000, 0.0), (10000, 900.0 + seed)])
        exported_run(runs, "Walker2d-v4", "y", seed, [(5000, 0.0), (10000, 100.0 + seed)], guide=None)
    primary = X_AGAINST_Y.replace('envs = ["Hopper-v4"]', 'envs = ["Hopper-v4", "Walker2d-v4"]\ndecides = "over the envs"')
    reported = X_AGAINST_Y + '\ndecides = "nothing"'
    plain = X_AGAINST_Y.replace('envs = ["Hopper-v4"]', 'envs = ["Hopper-v4", "Walker2d-v4"]')
    words = [row.split(" | ")[-2] for row in claims_markdown(claims_file(tmp_path, [primary, reported, plain])).splitlines()[-3:]]
    # X 300 200 100 against Y 50 150 250 on Hopper-v4: P 0.67, not resolved; on Walker2d-v4 every X above every Y
    over = words[0].split("; ", 1)
    assert over[0] in ("over the envs above", "over the envs not resolved")
    assert over[1] == "per env, reported, not claimed: not resolved on Hopper; above on Walker2d"
    assert words[1] == "reported, not claimed: not resolved on Hopper"
    assert words[2] == f"not resolved on Hopper; above on Walker2d; {over[0]}"  # an unregistered row's every word is its reading
    for wrong in ['decides = "everything"', 'decides = "over the envs"']:  # the second with one env: nothing to decide over
        with pytest.raises(ClaimError, match="decides"):
            read_claims(claims_file(tmp_path, [X_AGAINST_Y + "\n" + wrong]))
