"""Condition names, in one place: what a run's name says, and what figures and tables call it.

A run's condition is its --exp-name (its folder is {env_id}__{condition}__{seed}). It says what guided the run,
then the settings where the run differs from the paper's CAMEL (camel_td3.py --paper, which scripts/sweep.py passes to
every run; camel_td3.py's own default is CAMEL+, camel_qbc_gwarm_noboot_cu2 here):

    [sac_]{guide}[_{variant}][_ls{N}k][_no_ma_em]

  sac_       trained by camel_sac.py (the sweep's TRAINER=sac); without it, camel_td3.py
  guide      baseline      no guide: TD3 (or SAC)
             camel         CAMEL with the default guide policies/{env}.py, written by a language model
             camel_oneanswer  CAMEL with the best one-answer LLM candidate where the default guide is a refined
                           one (Hopper-v4: policies/llm/Hopper-v4/round1_candidate4.py)
             camel_tuned   CAMEL with the hand-written, reward-tuned guide policies/tuned/{env}.py
             expert        expert masking (--expert-model)
             random        random masking (--random-guide)
             standstill, lean, ...   CAMEL with a guide file of that name (policies/poor/{env}_{name}.py)
  _{variant} the sweep's VARIANT: flags that change the algorithm; the CAMEL+ levers of camel_td3.py have names
             (VARIANT_LABELS), joined by _ in the order the flags are listed there: qbc_gwarm_noboot_cu2 (CAMEL+),
             qbc_gwarm_noboot (CAMEL+ with 1 critic update per step, the default until the probe's confirmation);
             the committed runs also hold qbc_gwarm (with the guide bootstrap, which has left the trainer),
             prop_gwarm and qbc_gwarm_noboot_ln (the sweep passes a VARIANT made of the levers in the trainer with
             their flags)
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

# What each guide is called in every figure and table, in the order figures list them.
PAPER = "paper's CAMEL"  # the method of the paper, as every label names it (CAMEL+ is camel_td3.py's default)
GUIDE_LABELS = {
    "baseline": "TD3",
    "expert": "Expert masking",
    "random": "Random masking",
    "camel": "paper's CAMEL, LLM-written guide",
    "camel_oneanswer": "paper's CAMEL, LLM-written guide (one answer)",
    "camel_tuned": "paper's CAMEL, tuned guide",
    "standstill": "paper's CAMEL, poor guide (stands still)",
    "lean": "paper's CAMEL, poor guide (leans and falls)",
}
SWEEP_GUIDES = ("baseline", "camel", "camel_tuned", "random", "expert")  # the sweep's built-in conditions
# The CAMEL+ levers of camel_td3.py (docs/design.md), by their part of a variant's name: the flags and the label.
# Before --guide-bootstrap had a flag, guide BC bootstrapped the TD target from the guide (the buffer kept its
# actions), so in the committed runs' names qbc brings the guide bootstrap and only qbc_..._noboot is guide BC without
# it: the names keep their meaning. The guide bootstrap has left camel_td3.py (last at commit 4b0bd79), as have
# prop and bc (last at commit 6abd027) and ln (RETIRED_LEVERS): their runs keep their labels, and a sweep can no longer
# run them.
VARIANT_LABELS = {
    "prop": (None, "guide proposal"),
    "bc": (None, "guide BC + guide bootstrap"),
    "qbc": ("--guide-bc-coef 0.4", "Q-filtered guide BC + guide bootstrap"),
    "boot": (None, "guide bootstrap"),
    "gwarm": ("--warmup-actions guide", "guide warm-up"),
    "noboot": ("", "no guide bootstrap"),
    "cu2": ("--critic-updates-per-step 2", "2 critic updates per step"),
    "ln": (None, "critic layer norm"),
}


BOOTSTRAP_LAST_COMMIT = "4b0bd79"  # the last commit of camel_td3.py with --guide-bootstrap
SCREEN_LEVERS_LAST_COMMIT = "6abd027"  # ... with the CAMEL+ screen's levers that lost or only watched (prop, bc, ...)
LAYER_NORM_LAST_COMMIT = "95415d5"  # ... with --critic-layer-norm (the probe's screen)
# the last commit of camel_td3.py with each retired lever but the guide bootstrap (which qbc and boot bring)
RETIRED_LEVERS = {"prop": SCREEN_LEVERS_LAST_COMMIT, "bc": SCREEN_LEVERS_LAST_COMMIT, "ln": LAYER_NORM_LAST_COMMIT}


def name_has_bootstrap(parts):
    """Whether the levers of a name (its parts, as VARIANT_LABELS names them) include the guide bootstrap: qbc or
    boot, unless noboot turns it off."""
    return any(part in ("qbc", "boot") for part in parts) and "noboot" not in parts


def variant_flags(variant):
    """The trainer flags of a VARIANT made only of CAMEL+ levers' names (qbc_gwarm_noboot_cu2, CAMEL+: the Q-filtered
    guide BC's, the guide warm-up's and the critic updates', in that order); [] for any other VARIANT, whose flags
    EXTRA_ARGS gives.
    ValueError for a VARIANT that names a lever which has left the trainer (qbc without noboot: the guide bootstrap)."""
    parts = variant.split("_") if variant else []
    if not parts or not all(part in VARIANT_LABELS for part in parts):
        return []
    retired = [part for part in parts if VARIANT_LABELS[part][0] is None]
    if retired and retired[0] != "boot":
        raise ValueError(f"VARIANT {variant}: {retired[0]} ({VARIANT_LABELS[retired[0]][1]}) has left camel_td3.py; "
                         f"its runs were made with commit {RETIRED_LEVERS[retired[0]]}")  # fmt: skip
    if retired or name_has_bootstrap(parts):
        raise ValueError(f"VARIANT {variant}: the guide bootstrap (which qbc brings unless noboot follows) has left "
                         f"camel_td3.py; its runs were made with commit {BOOTSTRAP_LAST_COMMIT} or before. CAMEL+ is "
                         "VARIANT=qbc_gwarm_noboot_cu2")  # fmt: skip
    return [flag for part in parts for flag in VARIANT_LABELS[part][0].split()]


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


def without_settings(condition):
    """The condition at today's defaults and with MA EM: camel_tuned for camel_tuned_ls25k_no_ma_em."""
    return split(condition)[0]


def on_sac(label):
    """A TD3 label for the same condition trained by camel_sac.py."""
    if label == "TD3":
        return "SAC"
    if label.startswith(PAPER):
        return "CAMEL-SAC" + label[len(PAPER) :]
    return f"{label} (SAC)"


def condition_label(condition, custom=None):
    """The condition's name in figures and tables: its --label (custom) if given, else built from its parts:
    the guide's label, "w/o MA EM" for a _no_ma_em control and "learning from 25k" for _ls25k. A name that is
    not a guide's (an --exp-name of the user's own) stands for itself."""
    custom = custom or {}
    if condition in custom:
        return custom[condition]
    stem, learning_starts, no_ma_em = split(condition)
    with_ma_em = condition[: -len(NO_MA_EM)] if no_ma_em else condition
    if no_ma_em and with_ma_em in custom:
        return f"{custom[with_ma_em]} w/o MA EM"
    guide, levers = split_variant(stem)
    if stem in custom:
        label = custom[stem]
    elif stem in GUIDE_LABELS:
        label = GUIDE_LABELS[stem]
    elif levers:
        label = levers_label(guide, levers)
    elif stem.startswith(SAC) and stem[len(SAC) :] in GUIDE_LABELS:
        label = on_sac(GUIDE_LABELS[stem[len(SAC) :]])
    else:
        label = stem
    return label + (" w/o MA EM" if no_ma_em else "") + (f", learning from {format_steps(learning_starts)}" if learning_starts else "")


def guide_label(entry):
    """What a guide's own return (the dashed line of figures and tables) is called: the guide, not a method it guides
    ("LLM-written guide" for camel's, "tuned guide" for camel_tuned's, "expert agent" for expert masking's)."""
    if entry == "expert":
        return "expert agent"
    return GUIDE_LABELS.get(entry, entry).removeprefix(PAPER + ", ")


def levers_label(guide, levers):
    """The label of a guide's run with CAMEL+ levers: "CAMEL+, LLM-written guide" for CAMEL+ (qbc_gwarm_noboot_cu2);
    where a run has two of guide BC, the guide warm-up and the retired guide bootstrap, the CAMEL+ part it lacks after
    "w/o", the bootstrap and critic layer norm after "+", and "with 1 critic update per step" where it had TD3's one
    (camel_qbc_gwarm_noboot, the default until the probe's confirmation: "CAMEL+ with 1 critic update per step, ...";
    camel_qbc_gwarm, the default until the bootstrap left: "CAMEL+ + guide bootstrap with 1 critic update per step,
    ..."); else the guide's label and each lever's (the other retired levers' runs, a part alone)."""
    guide_label = GUIDE_LABELS[guide]
    if not any(lever in ("prop", "bc") for lever in levers):
        bootstrap = name_has_bootstrap(levers)
        parts = {"guide BC": "qbc" in levers, "guide warm-up": "gwarm" in levers}
        if sum(parts.values()) + bootstrap >= 2:
            name = "CAMEL+" + "".join(f" w/o {part}" for part, on in parts.items() if not on)
            name += " + guide bootstrap" if bootstrap else ""
            name += f" + {VARIANT_LABELS['ln'][1]}" if "ln" in levers else ""
            name += "" if "cu2" in levers else " with 1 critic update per step"
            return f"{name}, {guide_label.removeprefix(PAPER + ', ')}" if guide_label.startswith(PAPER + ", ") else f"{name}, {guide_label}"
    parts = [VARIANT_LABELS[lever][1] for lever in levers if lever != "noboot"]
    if "noboot" in levers:  # the bootstrap that qbc (or bc, boot) brings is turned off again
        parts = [part.replace(" + guide bootstrap", "") for part in parts if part != "guide bootstrap"]
    return " + ".join([guide_label] + parts)


def split_variant(stem):
    """(guide, CAMEL+ levers) of a name made of a guide and VARIANT_LABELS' parts: ("camel_tuned", ["prop", "gwarm"])
    for camel_tuned_prop_gwarm; (stem, []) for any other name."""
    for guide in sorted(GUIDE_LABELS, key=len, reverse=True):
        parts = stem[len(guide) + 1 :].split("_") if stem.startswith(guide + "_") else []
        if parts and all(part in VARIANT_LABELS for part in parts):
            return guide, parts
    return stem, []


def order_key(condition):
    """Figures list conditions TD3 before SAC, then by guide as in GUIDE_LABELS (others after, by name), each at
    the default settings before its variants, and each before its _no_ma_em control."""
    stem, learning_starts, no_ma_em = split(condition)
    sac = stem.startswith(SAC)
    guide, levers = split_variant(stem[len(SAC) :] if sac else stem)
    rank = list(GUIDE_LABELS)
    return (sac, rank.index(guide) if guide in rank else len(rank), guide, levers, learning_starts or 0, no_ma_em)


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
