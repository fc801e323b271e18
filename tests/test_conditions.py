"""camel_utils/conditions.py, the one home of condition names: a name says what guided a run and the settings where it
differs from the defaults, and every figure and table label is built from it; the Hub repo-id pattern."""

import pytest

from camel_utils.conditions import condition_label, guide_label, is_hub_repo_id, learning_starts_suffix, order_key, split


@pytest.mark.parametrize("condition, label", [
    ("baseline", "TD3"),
    ("camel", "paper's CAMEL, LLM-written guide"),
    ("camel_tuned", "paper's CAMEL, tuned guide"),
    ("standstill", "paper's CAMEL, poor guide (stands still)"),
    ("lean", "paper's CAMEL, poor guide (leans and falls)"),
    ("expert", "Expert masking"),
    ("random", "Random masking"),
    ("camel_tuned_no_ma_em", "paper's CAMEL, tuned guide w/o MA EM"),
    ("baseline_ls25k", "TD3, learning from 25k"),
    ("camel_tuned_ls25k_no_ma_em", "paper's CAMEL, tuned guide w/o MA EM, learning from 25k"),
    ("random_ls25k_no_ma_em", "Random masking w/o MA EM, learning from 25k"),
    ("standstill_ls25k", "paper's CAMEL, poor guide (stands still), learning from 25k"),
    ("sac_baseline", "SAC"),
    ("sac_camel_tuned", "CAMEL-SAC, tuned guide"),
    ("sac_camel", "CAMEL-SAC, LLM-written guide"),
    ("sac_expert", "Expert masking (SAC)"),
    ("camel_tuned_prop_gwarm", "paper's CAMEL, tuned guide + guide proposal + guide warm-up"),
    ("camel_bc_gwarm", "paper's CAMEL, LLM-written guide + guide BC + guide bootstrap + guide warm-up"),
    ("camel_qbc_gwarm_noboot_cu2", "CAMEL+, LLM-written guide"),  # the default
    # the default until the probe's confirmation, with TD3's one critic update per step
    ("camel_qbc_gwarm_noboot", "CAMEL+ with 1 critic update per step, LLM-written guide"),
    # the committed runs of the default until the guide bootstrap left (qbc brought it), and its ablation
    ("camel_qbc_gwarm", "CAMEL+ + guide bootstrap with 1 critic update per step, LLM-written guide"),
    ("camel_boot_gwarm", "CAMEL+ w/o guide BC + guide bootstrap with 1 critic update per step, LLM-written guide"),
    ("camel_qbc", "CAMEL+ w/o guide warm-up + guide bootstrap with 1 critic update per step, LLM-written guide"),
    ("camel_qbc_noboot", "paper's CAMEL, LLM-written guide + Q-filtered guide BC"),
    ("standstill_qbc_gwarm", "CAMEL+ + guide bootstrap with 1 critic update per step, poor guide (stands still)"),
    # the probe's screen: critic layer norm (retired) on the default of then, and with 2 critic updates per step
    ("camel_qbc_gwarm_noboot_ln", "CAMEL+ + critic layer norm with 1 critic update per step, LLM-written guide"),
    ("camel_qbc_gwarm_noboot_cu2_ln", "CAMEL+ + critic layer norm, LLM-written guide"),
])  # fmt: skip
def test_each_condition_is_labelled_by_what_guided_it_and_its_settings(condition, label):
    assert condition_label(condition) == label


def test_only_a_guide_with_llm_provenance_is_called_llm():
    labelled = {c: condition_label(c) for c in ("camel_tuned", "camel_tuned_ls25k", "standstill", "lean", "expert", "random", "baseline")}
    assert not [label for label in labelled.values() if "LLM" in label]
    assert "LLM" in condition_label("camel")


def test_a_name_that_is_not_a_guide_stands_for_itself():
    assert condition_label("camel_td3") == "camel_td3"  # camel_td3.py's default exp_name: not the LLM-written guide
    assert condition_label("camel_tuned_distill") == "camel_tuned_distill"  # a variant without a --label
    assert condition_label("mytweak_ls25k") == "mytweak, learning from 25k"


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


def test_a_guides_own_return_is_named_as_the_guide_not_as_a_method_it_guides():
    assert condition_label("camel") == "paper's CAMEL, LLM-written guide"  # the method with that guide
    assert guide_label("camel") == "LLM-written guide"  # the guide alone
    assert guide_label("camel_tuned") == "tuned guide"
    assert guide_label("standstill") == "poor guide (stands still)"
    assert guide_label("expert") == "expert agent"  # expert masking's guide
    assert guide_label("my_guide") == "my_guide"  # a name of the user's own stands for itself
