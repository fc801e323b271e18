"""Condition names, in one place: what a run's name says, and the short name figures and tables give its method.

A run's condition is its --exp-name (its folder is {env_id}__{condition}__{seed}). Today's trainers name a run after
the script that made it, as CleanRL does (default_exp_name): td3 and camel_td3 (camel_td3.py without and with a
guide: TD3 and the paper's CAMEL), camel_plus_td3 (CAMEL+), sac and camel_sac (camel_sac.py). The name says the
method, not the guide: a run records its guide file and that file's sha256 (finished.json's guide_file), and figures
name the guide from that record (camel_utils/results/provenance.py), so that one method with two guides is two lines.

The committed runs of docs/results/runs/*.json keep their historical names, which said the guide and then the
settings where a run differed from the paper's CAMEL:

    [sac_]{guide}[_{variant}][_ls{N}k][_no_ma_em]

  sac_       trained by camel_sac.py; without it, camel_td3.py
  guide      baseline (no guide: TD3), camel (the LLM-written guide policies/{env}.py), camel_oneanswer (the best
             one-answer LLM candidate), camel_tuned (policies/tuned/), standstill and lean (policies/poor/),
             expert (expert masking), random (random masking)
  _{variant} the CAMEL+ levers of then: qbc_gwarm_noboot_cu2 is CAMEL+, qbc_gwarm_noboot CAMEL+ with
             1 critic update per step; the others hold levers that have left the trainer (SHORT_LABELS names them
             after the commit they were last made with; docs/design.md says what each was)
  _ls{N}k    learned from N thousand steps (--learning-starts) instead of the default 5k: _ls25k
  _no_ma_em  the paper's control: the same guide without the masking-aware actor and epsilon masking

The budget (--total-timesteps), evaluation settings and seeds are not in the name; each run records them, and
plot.py compares a condition only with a baseline run at the same training settings.

Standard library only: scripts/sweep.py, which runs without the project's packages, imports it.
"""

import re

NO_MA_EM = "_no_ma_em"  # the control without the masking-aware actor and epsilon masking
SAC = "sac_"  # runs of camel_sac.py
DEFAULT_LEARNING_STARTS = 5000  # camel_td3.py's and camel_sac.py's --learning-starts; other values are in the name
LEARNING_STARTS = re.compile(r"(.+)_ls(\d+)(k?)")  # {condition}_ls{N}k: learned from N thousand steps

# The committed runs' variant names hold CAMEL+ levers of then (docs/design.md says what each was): qbc Q-filtered guide
# BC, which then also bootstrapped the TD target from the guide (only qbc_..._noboot is guide BC without it), gwarm the
# guide warm-up, cu2 two critic updates per step; boot, prop, bc and ln left the trainer at the commits below.
BOOTSTRAP_LAST_COMMIT = "4b0bd79"  # the last commit of camel_td3.py with --guide-bootstrap
SCREEN_LEVERS_LAST_COMMIT = "6abd027"  # ... with the CAMEL+ screen's levers that lost or only watched (prop, bc, ...)
LAYER_NORM_LAST_COMMIT = "95415d5"  # ... with --critic-layer-norm (the probe's screen)
UNMASKED_GAIN_LAST_COMMIT = "b17fd5c"  # ... with the flags that let the unmasked actor gain while masking is on

# Hugging Face Hub repo ids (owner/name) for an expert; a value that looks like a path is a path.
HUB_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")
MODEL_FILE_ENDINGS = (".cleanrl_model", ".pt", ".pth")


def is_hub_repo_id(value):
    """owner/name, as Hugging Face spells repo ids; a value that looks like a path (a model file, ./x, /x, a/b/c) is
    a path, so a missing file is reported as missing rather than looked up on the Hub."""
    return HUB_REPO_ID.fullmatch(value) is not None and not value.endswith(MODEL_FILE_ENDINGS)


def learning_starts_suffix(learning_starts):
    """The name's suffix for a --learning-starts: none for the default, _ls25k for 25000."""
    if learning_starts == DEFAULT_LEARNING_STARTS:
        return ""
    return f"_ls{learning_starts // 1000}k" if learning_starts % 1000 == 0 else f"_ls{learning_starts}"  # LEARNING_STARTS reads it


def split(condition):
    """(stem, --learning-starts if not the default else None, no_ma_em): (camel_tuned, 25000, True) for
    camel_tuned_ls25k_no_ma_em."""
    no_ma_em = condition.endswith(NO_MA_EM) and len(condition) > len(NO_MA_EM)
    rest = condition[: -len(NO_MA_EM)] if no_ma_em else condition
    match = LEARNING_STARTS.fullmatch(rest)
    if match is None:
        return rest, None, no_ma_em
    return match[1], int(match[2]) * (1000 if match[3] else 1), no_ma_em


def format_steps(step):
    """A step count as figures, tables and labels show it: 1M, 25k, 2.5k, 300."""
    if step >= 1_000_000 and step % 100_000 == 0:
        return f"{step / 1_000_000:g}M"
    if step >= 1_000 and step % 100 == 0:
        return f"{step / 1_000:g}k"
    return str(step)


# ---- What figures and tables call a method: one short name per method -------------------------------------------
PAPER = "paper's CAMEL"  # the method of the paper, as every label names it
# Each method's short name: today's trainers' names first, then the committed runs' historical names, written with the
# LLM-written guide's part (camel_...): the same method with another guide (camel_tuned_qbc_gwarm, lean_qbc_gwarm) has
# the same short name, and figures add the guide, named from the run's guide file. No name here names a lever that has
# left the trainers: a method that held one is called after the method it varied and the commit it was last made with
# (docs/design.md says what each variant was).
SHORT_LABELS = {
    "td3": "TD3",
    "camel_td3": PAPER,
    "camel_plus_td3": "CAMEL+",
    "sac": "SAC",
    "camel_sac": "CAMEL-SAC",
    # the committed runs' names
    "baseline": "TD3",
    "expert": "Expert masking",
    "random": "Random masking",
    "camel": PAPER,
    "camel_qbc_gwarm_noboot_cu2": "CAMEL+",
    "camel_qbc_gwarm_noboot": "CAMEL+ (1 critic update)",  # the default until the probe's confirmation
    "camel_qbc_gwarm": f"CAMEL+ (early version, commit {BOOTSTRAP_LAST_COMMIT})",  # the default until the ablation
    "camel_boot_gwarm": f"CAMEL+ (early version, commit {BOOTSTRAP_LAST_COMMIT}) w/o guide BC",  # the ablation's cells
    "camel_qbc": f"CAMEL+ (early version, commit {BOOTSTRAP_LAST_COMMIT}) w/o guide warm-up",
    "camel_qbc_gwarm_cu2_ln": f"CAMEL+ (early version, commit {BOOTSTRAP_LAST_COMMIT}), probe variant",  # before the probe
    "camel_qbc_gwarm_noboot_ln": f"CAMEL+ (1 critic update), probe variant (commit {LAYER_NORM_LAST_COMMIT})",
    "camel_qbc_gwarm_noboot_cu2_ln": f"CAMEL+, probe variant (commit {LAYER_NORM_LAST_COMMIT})",
    "camel_prop_gwarm": f"CAMEL+ screen, variant A (commit {SCREEN_LEVERS_LAST_COMMIT})",  # the screen that chose qbc_gwarm
    "camel_bc_gwarm": f"CAMEL+ screen, variant B (commit {SCREEN_LEVERS_LAST_COMMIT})",
    "camel_fullactor": f"{PAPER}, unmasked-gain variant A (commit {UNMASKED_GAIN_LAST_COMMIT})",
    "camel_fulltarget": f"{PAPER}, unmasked-gain variant B (commit {UNMASKED_GAIN_LAST_COMMIT})",
    "camel_distill": f"{PAPER}, unmasked-gain variant C (commit {UNMASKED_GAIN_LAST_COMMIT})",
}
# The guide part of the historical names, in the order figures list them, and the guide each one names: the label of
# a run that recorded no guide file (figures name a recorded file's guide from its provenance instead, and keep a
# name's own qualifier, "one answer", where the file is the kind of guide the name says).
HISTORICAL_GUIDES = {
    "baseline": None,
    "expert": None,
    "random": None,
    "camel": "LLM-written guide",
    "camel_oneanswer": "LLM-written guide (one answer)",
    "camel_tuned": "hand-written guide (tuned)",
    "standstill": "hand-written poor guide (standstill)",
    "lean": "hand-written poor guide (lean)",
}
# today's names, and the historical guide part beside which figures list them (their guide comes from their file)
TODAYS_GUIDES = {"td3": "baseline", "sac": "baseline", "camel_td3": "camel", "camel_plus_td3": "camel", "camel_sac": "camel"}


def guide_and_method(stem):
    """(the guide part, the SHORT_LABELS name of the method) of a name without its settings, sac_ removed:
    ("camel_tuned", "camel_qbc_gwarm") for camel_tuned_qbc_gwarm, ("camel", "camel_plus_td3") for camel_plus_td3;
    (stem, None) for a name of the user's own."""
    if stem in TODAYS_GUIDES:
        return TODAYS_GUIDES[stem], stem
    for guide in sorted(HISTORICAL_GUIDES, key=len, reverse=True):
        if stem == guide or stem.startswith(guide + "_"):
            method = "camel" + stem[len(guide) :] if HISTORICAL_GUIDES[guide] else stem
            if method in SHORT_LABELS:
                return guide, method
    return stem, None


def on_sac(label):
    """A TD3 method's short name for the same method trained by camel_sac.py."""
    if label == "TD3":
        return "SAC"
    if label.startswith(PAPER):
        return "CAMEL-SAC" + label[len(PAPER) :]
    return f"{label} (SAC)"


def method_label(condition):
    """The short name of a condition's method, without its guide and settings: "CAMEL+" for camel_plus_td3 and for
    camel_tuned_qbc_gwarm_noboot_cu2_ls25k; a name of the user's own stands for itself."""
    stem = split(condition)[0]
    sac = stem.startswith(SAC)
    method = guide_and_method(stem[len(SAC) :] if sac else stem)[1]
    if method is None:
        return stem
    return on_sac(SHORT_LABELS[method]) if sac else SHORT_LABELS[method]


def name_guide(condition):
    """The guide a historical name says (HISTORICAL_GUIDES), or None (today's names say none)."""
    stem = split(condition)[0]
    stem = stem[len(SAC) :] if stem.startswith(SAC) else stem
    return None if stem in TODAYS_GUIDES else HISTORICAL_GUIDES.get(guide_and_method(stem)[0])


def condition_label(condition, custom=None, guide=None):
    """The condition's name in figures and tables: its --label (custom) if given, else its method's short name and
    the guide: `guide` (the label of the guide file its runs recorded, camel_utils/results/provenance.py) or, for a
    run that recorded none, the guide its historical name says; then "w/o MA EM" for a _no_ma_em control and
    "learning from 25k" for _ls25k. A name of the user's own stands for itself."""
    custom = custom or {}
    if condition in custom:
        return custom[condition]
    stem, learning_starts, no_ma_em = split(condition)
    with_ma_em = condition[: -len(NO_MA_EM)] if no_ma_em else condition
    if no_ma_em and with_ma_em in custom:
        return f"{custom[with_ma_em]} w/o MA EM"
    if stem in custom:
        label = custom[stem]
    else:
        said = name_guide(stem)
        if guide is not None and said is not None and said.startswith(guide):
            guide = said  # the name's own qualifier of that guide: (one answer)
        guide = said if guide is None else guide
        label = method_label(stem) + (f", {guide}" if guide else "")
    return label + (" w/o MA EM" if no_ma_em else "") + (f", learning from {format_steps(learning_starts)}" if learning_starts else "")


def guide_label(entry):
    """What a guide's own return (the dashed line of figures and tables) is called: the guide its entry of
    docs/results/guides.json names ("LLM-written guide" for camel's, "expert agent" for expert masking's)."""
    if entry == "expert":
        return "expert agent"
    return HISTORICAL_GUIDES.get(entry) or entry


def order_key(condition):
    """Figures list conditions TD3 before SAC, then by guide as in HISTORICAL_GUIDES (today's names beside the guide
    they run with; others after, by name), then by method as in SHORT_LABELS, each at the default settings before its
    variants, and each before its _no_ma_em control."""
    stem, learning_starts, no_ma_em = split(condition)
    sac = stem.startswith(SAC) or stem in ("sac", "camel_sac")
    guide, method = guide_and_method(stem[len(SAC) :] if stem.startswith(SAC) else stem)
    guides, methods = list(HISTORICAL_GUIDES), list(SHORT_LABELS)
    known = guide in guides and method is not None
    return (sac, guides.index(guide) if known else len(guides), "" if known else stem,
            methods.index(method) if known else 0, learning_starts or 0, no_ma_em)  # fmt: skip

# ---- The methods: one trainer file each --------------------------------------------------------------------------
CAMEL_PLUS = ("CAMEL+ is the paper's CAMEL plus three parts: Q-filtered guide BC (the unmasked actor is pulled towards "
              "the guide's action wherever the critics value the guide's action at least as high as its own), the guide "
              "warm-up (before learning starts, masked steps take the guide's action plus noise) and two critic updates "
              "per step (each on its own batch; the actor learns as in TD3).")
# {script: (the method it runs with a guide, without one)}; camel_plus_td3.py refuses to run without a guide
METHODS = {"camel_td3.py": ("the paper's CAMEL", "TD3"), "camel_plus_td3.py": ("CAMEL+", None), "camel_sac.py": ("CAMEL-SAC", "SAC")}
# camel_plus_td3.py's arguments for CAMEL+'s parts: (CAMEL+'s value, the value that turns the part off, its name)
CAMEL_PLUS_PARTS = {"guide_bc_coef": (0.4, 0.0, "guide BC", "guide BC coef {:g}"),
                    "warmup_actions": ("guide", "uniform", "guide warm-up", None),
                    "critic_updates_per_step": (2, 1, "two critic updates per step", "{} critic updates per step")}


def default_exp_name(script, guided):
    """A run's --exp-name unless given, as CleanRL's: the script's name (camel_td3), td3 or sac without a guide."""
    if not guided:
        return "sac" if script == "camel_sac.py" else "td3"
    return script.removesuffix(".py")


def method_name(script, args, guided=True):
    """The method a run ran, in the words a user reads (args: a dict of its arguments): TD3 or SAC without a guide,
    the paper's CAMEL, CAMEL-SAC, or CAMEL+ (with "w/o" each part a run turned off, and a part's other values named:
    "CAMEL+ w/o guide warm-up", "CAMEL+ (guide BC coef 0.2)")."""
    with_guide, without = METHODS[script]
    if not guided:
        return without
    if script != "camel_plus_td3.py":
        return with_guide
    off = [name for arg, (_, value_off, name, _) in CAMEL_PLUS_PARTS.items() if args.get(arg) == value_off]
    other = [form.format(args[arg]) for arg, (value, value_off, _, form) in CAMEL_PLUS_PARTS.items()
             if args.get(arg) not in (value, value_off)]  # fmt: skip
    name = "CAMEL+" + "".join(f" w/o {part}" for part in off)
    return name + (f" ({', '.join(other)})" if other else "")
