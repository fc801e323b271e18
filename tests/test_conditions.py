"""camel_utils/conditions.py, the one home of condition names: a name says what guided a run and the settings where it
differs from the defaults, and every figure and table label is built from it; the Hub repo-id pattern."""

import pytest

from camel_utils.conditions import (
    SHORT_LABELS, condition_label, guide_label, is_hub_repo_id, learning_starts_suffix, method_label, order_key, split,
)  # fmt: skip


@pytest.mark.parametrize("condition, label", [
    # today's trainers' names: the method alone, the guide comes from the file a run recorded
    ("td3", "TD3"),
    ("camel_td3", "paper's CAMEL"),
    ("camel_plus_td3", "CAMEL+"),
    ("camel_sac", "CAMEL-SAC"),
    ("sac", "SAC"),
    # the committed runs' historical names: the method's short name and the guide the name says
    ("baseline", "TD3"),
    ("camel", "paper's CAMEL, LLM-written guide"),
    ("camel_oneanswer", "paper's CAMEL, LLM-written guide (one answer)"),
    ("camel_tuned", "paper's CAMEL, hand-written guide (tuned)"),
    ("standstill", "paper's CAMEL, hand-written poor guide (standstill)"),
    ("lean", "paper's CAMEL, hand-written poor guide (lean)"),
    ("expert", "Expert masking"),
    ("random", "Random masking"),
    ("camel_tuned_no_ma_em", "paper's CAMEL, hand-written guide (tuned) w/o MA EM"),
    ("baseline_ls25k", "TD3, learning from 25k"),
    ("camel_tuned_ls25k_no_ma_em", "paper's CAMEL, hand-written guide (tuned) w/o MA EM, learning from 25k"),
    ("random_ls25k_no_ma_em", "Random masking w/o MA EM, learning from 25k"),
    ("sac_baseline", "SAC"),
    ("sac_camel_tuned", "CAMEL-SAC, hand-written guide (tuned)"),
    ("sac_expert", "Expert masking (SAC)"),
    ("camel_qbc_gwarm_noboot_cu2", "CAMEL+, LLM-written guide"),  # CAMEL+ under its historical name
    ("camel_qbc_gwarm_noboot", "CAMEL+ (1 critic update), LLM-written guide"),
    # the methods that held a lever which has left the trainers: named after the commit, not the lever
    ("camel_qbc_gwarm", "CAMEL+ (early version, commit 4b0bd79), LLM-written guide"),
    ("camel_boot_gwarm", "CAMEL+ (early version, commit 4b0bd79) w/o guide BC, LLM-written guide"),
    ("camel_qbc", "CAMEL+ (early version, commit 4b0bd79) w/o guide warm-up, LLM-written guide"),
    ("standstill_qbc_gwarm", "CAMEL+ (early version, commit 4b0bd79), hand-written poor guide (standstill)"),
    ("camel_qbc_gwarm_noboot_ln", "CAMEL+ (1 critic update), probe variant (commit 95415d5), LLM-written guide"),
    ("camel_qbc_gwarm_noboot_cu2_ln", "CAMEL+, probe variant (commit 95415d5), LLM-written guide"),
    ("camel_tuned_prop_gwarm", "CAMEL+ screen, variant A (commit 6abd027), hand-written guide (tuned)"),
    ("camel_tuned_distill_ls25k", "paper's CAMEL, unmasked-gain variant C (commit b17fd5c), hand-written guide (tuned), learning from 25k"),
])  # fmt: skip
def test_each_condition_is_labelled_by_its_method_its_guide_and_its_settings(condition, label):
    assert condition_label(condition) == label


def test_no_label_names_a_lever_that_has_left_the_trainers():
    retired = ("bootstrap", "proposal", "layer norm", "full bounds", "distillation", "fading", "averaged", "kept best")
    labels = [condition_label(name) for name in SHORT_LABELS] + list(SHORT_LABELS.values())
    assert not [label for label in labels if any(word in label for word in retired)]


def test_one_method_has_one_short_name_under_its_old_and_its_new_name():
    assert method_label("camel_plus_td3") == method_label("camel_qbc_gwarm_noboot_cu2") == method_label("lean_qbc_gwarm_noboot_cu2") == "CAMEL+"
    assert method_label("camel_td3") == method_label("camel") == method_label("camel_tuned_ls25k") == "paper's CAMEL"
    assert method_label("td3") == method_label("baseline") == "TD3"
    assert method_label("sac") == method_label("sac_baseline") == "SAC"
    assert method_label("camel_sac") == method_label("sac_camel_tuned") == "CAMEL-SAC"
    # and two methods never share one: every historical name's short name is its own, but for the renamed CAMEL+,
    # the paper's CAMEL and TD3
    shared = {"CAMEL+", "paper's CAMEL", "TD3", "SAC", "CAMEL-SAC"}
    others = [label for label in SHORT_LABELS.values() if label not in shared]
    assert len(others) == len(set(others))


def test_a_recorded_guide_file_names_the_guide_and_a_name_keeps_its_own_qualifier():
    assert condition_label("camel_plus_td3", guide="hand-written guide (tuned)") == "CAMEL+, hand-written guide (tuned)"
    assert condition_label("camel_td3", guide="LLM-written guide") == "paper's CAMEL, LLM-written guide"
    # a historical name run with another file is named by the file, not by what the name says
    assert condition_label("camel", guide="guide selected.py") == "paper's CAMEL, guide selected.py"
    assert condition_label("camel_oneanswer", guide="LLM-written guide") == "paper's CAMEL, LLM-written guide (one answer)"
    assert condition_label("camel_tuned_ls25k", guide="hand-written guide (tuned)") == "paper's CAMEL, hand-written guide (tuned), learning from 25k"


def test_only_a_guide_with_llm_provenance_is_called_llm():
    labelled = {c: condition_label(c) for c in ("camel_tuned", "camel_tuned_ls25k", "standstill", "lean", "expert", "random", "baseline")}
    assert not [label for label in labelled.values() if "LLM" in label]
    assert "LLM" in condition_label("camel")
    assert not [name for name in ("td3", "camel_td3", "camel_plus_td3", "camel_sac") if "LLM" in condition_label(name)]  # no file, no claim


def test_a_name_that_is_not_a_guide_stands_for_itself():
    assert condition_label("camel_tuned_mytweak") == "camel_tuned_mytweak"  # a variant the table does not know
    assert condition_label("mytweak_ls25k") == "mytweak, learning from 25k"
    assert condition_label("mytweak", guide="guide mine.py") == "mytweak, guide mine.py"


def test_a_custom_label_names_a_condition_and_its_variants():
    custom = {"camel_tuned_distill": "CAMEL + distillation", "camel_tuned": "CAMEL"}
    assert condition_label("camel_tuned_distill", custom) == "CAMEL + distillation"
    assert condition_label("camel_tuned_distill_ls25k", custom) == "CAMEL + distillation, learning from 25k"
    assert condition_label("camel_tuned_distill_no_ma_em", custom) == "CAMEL + distillation w/o MA EM"
    assert condition_label("camel_tuned_ls25k", custom) == "CAMEL, learning from 25k"
    assert condition_label("camel_tuned_ls25k", {"camel_tuned_ls25k": "Mine"}) == "Mine"  # the whole name wins


def test_a_name_splits_into_its_guide_its_learning_start_and_its_control():
    assert split("camel_tuned_ls25k_no_ma_em") == ("camel_tuned", 25000, True)
    assert split("camel_tuned_distill_ls25k") == ("camel_tuned_distill", 25000, False)
    assert split("baseline") == ("baseline", None, False)
    assert split("x_ls2500") == ("x", 2500, False)
    assert [learning_starts_suffix(n) for n in (5000, 25000, 2500)] == ["", "_ls25k", "_ls2500"]


def test_figures_list_the_baseline_then_the_guides_then_their_variants_then_sac():
    conditions = ["sac_baseline", "zzz", "camel_tuned_ls25k", "camel", "random_no_ma_em", "camel_tuned", "baseline_ls25k",
                  "random", "baseline"]  # fmt: skip
    assert sorted(conditions, key=order_key) == ["baseline", "baseline_ls25k", "random", "random_no_ma_em", "camel", "camel_tuned",
                                                 "camel_tuned_ls25k", "zzz", "sac_baseline"]  # fmt: skip
    # today's names beside the guide they run with: TD3, the paper's CAMEL, CAMEL+, then SAC's
    assert sorted(["camel_sac", "camel_plus_td3", "sac", "camel_td3", "td3"], key=order_key) == [
        "td3", "camel_td3", "camel_plus_td3", "sac", "camel_sac"]  # fmt: skip


@pytest.mark.parametrize("value, hub", [
    ("cleanrl/Hopper-v4-td3_continuous_action-seed1", True),
    ("experts/Hopper-v4.cleanrl_model", False),  # a model file: a path
    ("owner/model.pt", False),
    ("./x/y", False),
    ("/x/y", False),
    ("a/b/c", False),
    ("plain", False),
])  # fmt: skip
def test_hub_repo_ids_are_owner_slash_name_and_anything_like_a_path_is_a_path(value, hub):
    assert is_hub_repo_id(value) is hub


def test_camel_plus_variants_sort_after_their_guide_and_unknown_parts_stand_for_themselves():
    names = ["camel_tuned_prop_gwarm", "camel_tuned", "camel_bc_gwarm", "camel", "baseline"]
    assert sorted(names, key=order_key) == ["baseline", "camel", "camel_bc_gwarm", "camel_tuned", "camel_tuned_prop_gwarm"]
    assert condition_label("camel_tuned_prop_other") == "camel_tuned_prop_other"
    assert condition_label("camel_qbc_noboot") == "camel_qbc_noboot"  # a combination no committed run has


def test_a_guides_own_return_is_named_as_the_guide_not_as_a_method_it_guides():
    assert condition_label("camel") == "paper's CAMEL, LLM-written guide"  # the method with that guide
    assert guide_label("camel") == "LLM-written guide"  # the guide alone
    assert guide_label("camel_tuned") == "hand-written guide (tuned)"
    assert guide_label("standstill") == "hand-written poor guide (standstill)"
    assert guide_label("expert") == "expert agent"  # expert masking's guide
    assert guide_label("my_guide") == "my_guide"  # a name of the user's own stands for itself
