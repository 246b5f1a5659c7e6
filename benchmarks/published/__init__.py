"""Published, measured peak GPU memory, each row as the command a user types (benchmarks/estimator_vs_published.py).

`ROWS`: the design set's rows (design.py) and the frozen set's (frozen.py), each with its source's set from
sources.py. A row is scored only through `accelwiz estimate` with its argv (and its `config`, an Accelerate YAML
passed with `--config`), never through objects the command line cannot produce; a row the command line cannot
say carries `not_expressible` instead of an argv.
"""

from __future__ import annotations

from benchmarks.published.alignment_handbook_recipes import ROWS as _HANDBOOK_RECIPES
from benchmarks.published.alignment_handbook_zephyr import ROWS as _ZEPHYR
from benchmarks.published.axolotl_examples import ROWS as _AXOLOTL_EXAMPLES
from benchmarks.published.axolotl_pr602_openllama import ROWS as _AXOLOTL_PR602
from benchmarks.published.baichuan2_issues_verdicts import ROWS as _BAICHUAN2_ISSUES
from benchmarks.published.brevdev_notebooks import ROWS as _BREVDEV
from benchmarks.published.chatglm3_finetune import ROWS as _CHATGLM3
from benchmarks.published.chatglm6b_issues_memory import ROWS as _CHATGLM6B_ISSUES
from benchmarks.published.chatglm_efficient_tuning_readme import ROWS as _CHATGLM_ETUNING
from benchmarks.published.databricks_ml_examples import ROWS as _DATABRICKS
from benchmarks.published.deepspeed_blog_muon import ROWS as _DEEPSPEED_MUON_BLOG
from benchmarks.published.deepseek_coder_issues_memory import ROWS as _DEEPSEEK_CODER_ISSUES
from benchmarks.published.deepspeed_threads_memory import ROWS as _DEEPSPEED_THREADS
from benchmarks.published.deepspeed_tutorials_zero import ROWS as _DEEPSPEED_TUTORIALS
from benchmarks.published.deepspeedexamples_bf16_master_weight import ROWS as _DSE_BF16_MW
from benchmarks.published.deepspeedexamples_dschat_logs import ROWS as _DSE_LOGS
from benchmarks.published.deepspeedexamples_issues_memory import ROWS as _DSE_ISSUES
from benchmarks.published.design import ROWS as _DESIGN
from benchmarks.published.dolly_training import ROWS as _DOLLY
from benchmarks.published.fastchat_issues_memory import ROWS as _FASTCHAT_ISSUES
from benchmarks.published.fastchat_training import ROWS as _FASTCHAT
from benchmarks.published.firefly_qlora_verdicts import ROWS as _FIREFLY_QLORA
from benchmarks.published.fms_acceleration_bench import ROWS as _FMS_PR14
from benchmarks.published.frozen import ROWS as _FROZEN
from benchmarks.published.gemma_cookbook_axolotl import ROWS as _GEMMA_COOKBOOK_AXOLOTL
from benchmarks.published.gemma_cookbook_litgpt import ROWS as _GEMMA_COOKBOOK_LITGPT
from benchmarks.published.galore_issue_baselines import ROWS as _GALORE_ISSUE6
from benchmarks.published.georgesung_qlora_blog import ROWS as _GEORGESUNG_QLORA
from benchmarks.published.glm4_finetune import ROWS as _GLM4
from benchmarks.published.hf_blog_4bit_qlora import ROWS as _HF_4BIT
from benchmarks.published.hf_blog_accelerate_deepspeed import ROWS as _HF_DEEPSPEED
from benchmarks.published.hf_blog_launch_trl_qlora import ROWS as _HF_LAUNCH_TRL
from benchmarks.published.hf_blog_llama2_70b_fsdp import ROWS as _HF_LLAMA2_70B_FSDP
from benchmarks.published.hf_blog_personal_copilot import ROWS as _HF_PERSONAL_COPILOT
from benchmarks.published.hf_blog_pytorch_fsdp import ROWS as _HF_FSDP
from benchmarks.published.lambda_training_guide_405b import ROWS as _LAMBDA_405B
from benchmarks.published.hf_cookbook_code_llm import ROWS as _HF_COOKBOOK_CODE_LLM
from benchmarks.published.h2o_llmstudio_performance import ROWS as _H2O_LLMSTUDIO
from benchmarks.published.liger_kernel_hf_example import ROWS as _LIGER_HF
from benchmarks.published.lit_llama_howto import ROWS as _LIT_LLAMA_HOWTO
from benchmarks.published.litgpt_issues_memory import ROWS as _LITGPT_ISSUES
from benchmarks.published.litgpt_pr275_qlora import ROWS as _LITGPT_PR275
from benchmarks.published.litgpt_prepare_dataset import ROWS as _LITGPT_PREPARE_DATASET
from benchmarks.published.litgpt_resource_tables import ROWS as _LITGPT_TABLES
from benchmarks.published.litgpt_thunder_benchmark import ROWS as _LITGPT_THUNDER
from benchmarks.published.llm_chi_litgpt_lightning import ROWS as _LLM_CHI
from benchmarks.published.liucongg_chatglm_finetuning import ROWS as _LIUCONGG_CHATGLM
from benchmarks.published.liucongg_chatglm_finetuning_v01 import ROWS as _LIUCONGG_CHATGLM_V01
from benchmarks.published.llama_recipes_threads import ROWS as _LLAMA_RECIPES_THREADS
from benchmarks.published.llamafactory_issue4772_glm4 import ROWS as _LLAMAFACTORY_4772
from benchmarks.published.llamafactory_issues_memory import ROWS as _LLAMAFACTORY_ISSUES
from benchmarks.published.mezo_readme_verdicts import ROWS as _MEZO_README
from benchmarks.published.minicpm_finetune import ROWS as _MINICPM
from benchmarks.published.mlabonne_axolotl_guide import ROWS as _MLABONNE_AXOLOTL
from benchmarks.published.ms_swift_example_scripts import ROWS as _MS_SWIFT_SCRIPTS
from benchmarks.published.ms_swift_benchmark import ROWS as _MS_SWIFT
from benchmarks.published.ms_swift_best_practice_docs import ROWS as _MS_SWIFT_DOCS
from benchmarks.published.open_instruct_issues import ROWS as _OPEN_INSTRUCT_ISSUES
from benchmarks.published.openrlhf_issues_memory import ROWS as _OPENRLHF_ISSUES
from benchmarks.published.open_r1_readme_recipes import ROWS as _OPEN_R1_README
from benchmarks.published.openshift_ai_ray_deepspeed import ROWS as _OPENSHIFT_RAY
from benchmarks.published.peft_example_lorafa import ROWS as _PEFT_LORAFA
from benchmarks.published.peft_issues_memory import ROWS as _PEFT_ISSUES
from benchmarks.published.philschmid_blog import ROWS as _PHILSCHMID_BLOG
from benchmarks.published.qlora_guanaco import ROWS as _QLORA_GUANACO
from benchmarks.published.qwen2_llama_factory_example import ROWS as _QWEN2_LF_EXAMPLE
from benchmarks.published.qwen_issues_memory import ROWS as _QWEN_ISSUES
from benchmarks.published.qwen_readme import ROWS as _QWEN_README
from benchmarks.published.raschka_lora_insights import ROWS as _RASCHKA
from benchmarks.published.raschka_llms_from_scratch import ROWS as _RASCHKA_LLMS_FROM_SCRATCH
from benchmarks.published.rocm_blogs_llama import ROWS as _ROCM_BLOGS
from benchmarks.published.snowflake_arctic_alst import ROWS as _SNOWFLAKE_ALST
from benchmarks.published.sources import SOURCES
from benchmarks.published.stanford_alpaca_issues import ROWS as _ALPACA_ISSUES
from benchmarks.published.stanford_alpaca_readme import ROWS as _ALPACA
from benchmarks.published.torchao_float8nocompile import ROWS as _TORCHAO_F8NC
from benchmarks.published.torchao_low_bit_optim import ROWS as _TORCHAO_LOW_BIT
from benchmarks.published.toolbench_issues_memory import ROWS as _TOOLBENCH_ISSUES
from benchmarks.published.torchtune_issues_memory import ROWS as _TORCHTUNE_ISSUES
from benchmarks.published.torchtune_llama3_tutorial import ROWS as _TORCHTUNE_LLAMA3
from benchmarks.published.torchtune_memory_prs import ROWS as _TORCHTUNE_PRS
from benchmarks.published.torchtune_tutorials import ROWS as _TORCHTUNE_TUTORIALS
from benchmarks.published.trl_docs_sft_t4 import ROWS as _TRL_DOCS_T4
from benchmarks.published.trl_example_notebooks import ROWS as _TRL_NOTEBOOKS
from benchmarks.published.transformers_issues_run_clm import ROWS as _TRANSFORMERS_RUN_CLM
from benchmarks.published.trl_issues_memory import ROWS as _TRL_ISSUES
from benchmarks.published.trl_notebook_tool_calling import ROWS as _TRL_NB_TOOL_CALLING
from benchmarks.published.unsloth_context import ROWS as _UNSLOTH
from benchmarks.published.universal_llm_trainer import ROWS as _UNIVERSAL_LLM_TRAINER
from benchmarks.published.vertex_model_garden_peft import ROWS as _VERTEX_MG_PEFT
from benchmarks.published.xirider_finetune_gpt2xl import ROWS as _XIRIDER_GPT2XL
from benchmarks.published.xtuner_docs import ROWS as _XTUNER_DOCS
from benchmarks.published.yi_finetune import ROWS as _YI_FINETUNE
from benchmarks.published.yi_issues_memory import ROWS as _YI_ISSUES
from benchmarks.published.yuan2_finetune_docs import ROWS as _YUAN2_DOCS

# One module per source added for issue 28 (its set is in sources.py); their argv name model config.json files
# under benchmarks/published/models/ by paths relative to the repository root.
_NEW = (*_QWEN_README, *_MS_SWIFT, *_CHATGLM3, *_UNSLOTH, *_UNIVERSAL_LLM_TRAINER, *_TORCHTUNE_TUTORIALS,
        *_LITGPT_TABLES, *_HF_4BIT, *_HF_FSDP, *_HF_DEEPSPEED, *_RASCHKA, *_TORCHTUNE_LLAMA3,
        *_GLM4, *_MINICPM, *_HF_LLAMA2_70B_FSDP, *_TRL_DOCS_T4, *_ALPACA, *_FASTCHAT, *_QLORA_GUANACO,
        *_ZEPHYR, *_ROCM_BLOGS, *_DATABRICKS, *_TRL_ISSUES, *_LLAMAFACTORY_ISSUES, *_OPENRLHF_ISSUES)
_NEW += (*_LIGER_HF, *_TORCHAO_LOW_BIT)  # issue 28, eighth round: framework benchmark pages
_NEW += (*_OPENSHIFT_RAY, *_VERTEX_MG_PEFT, *_LAMBDA_405B)  # issue 28, ninth round: vendors' pages
_NEW += (*_HF_PERSONAL_COPILOT, *_HF_LAUNCH_TRL, *_HF_COOKBOOK_CODE_LLM, *_HANDBOOK_RECIPES)  # ninth: HF's pages
_NEW += (*_LLAMA_RECIPES_THREADS, *_FMS_PR14)  # issue 28, tenth round: PR and issue threads
_NEW += (*_AXOLOTL_EXAMPLES, *_MS_SWIFT_SCRIPTS)  # tenth round: framework docs and recipes outside HF
_NEW += (*_AXOLOTL_PR602, *_LITGPT_PR275)  # issue 28, eleventh round: PR and issue threads
_NEW += (*_PHILSCHMID_BLOG,)  # eleventh round: independent blog posts and tutorials
_NEW += (*_TORCHTUNE_PRS, *_OPEN_INSTRUCT_ISSUES)  # issue 28, twelfth round: PR and issue threads
_NEW += (*_DOLLY, *_YI_FINETUNE)  # twelfth round: model vendors' own fine-tuning READMEs
_NEW += (*_MS_SWIFT_DOCS, *_XTUNER_DOCS, *_H2O_LLMSTUDIO)  # thirteenth round: fine-tuning frameworks' docs
_NEW += (*_SNOWFLAKE_ALST, *_BREVDEV)  # thirteenth round: companies' engineering docs and notebooks
_NEW += (*_DEEPSPEED_THREADS, *_PEFT_ISSUES)  # thirteenth round: library PR and issue threads
# fourteenth round: individual engineers' write-ups
_NEW += (*_RASCHKA_LLMS_FROM_SCRATCH, *_GEORGESUNG_QLORA, *_XIRIDER_GPT2XL, *_MLABONNE_AXOLOTL)
_NEW += (*_TRL_NOTEBOOKS, *_DEEPSPEED_TUTORIALS)  # fourteenth round: the libraries' own docs and example notebooks
_NEW += (*_YUAN2_DOCS, *_QWEN2_LF_EXAMPLE)  # fourteenth round: Chinese model vendors' fine-tuning docs
# fifteenth round (helper D): framework docs with measured tables, and their how-to verdicts
_NEW += (*_LITGPT_THUNDER, *_TORCHAO_F8NC, *_LITGPT_PREPARE_DATASET, *_LIT_LLAMA_HOWTO, *_GEMMA_COOKBOOK_LITGPT)
_NEW += (*_LIUCONGG_CHATGLM, *_LIUCONGG_CHATGLM_V01)  # fifteenth round (helper C): fine-tuning repositories' tables
_NEW += (*_LITGPT_ISSUES, *_DSE_ISSUES)  # fifteenth round (helper G): issue threads with measured memory
_NEW += (*_DSE_LOGS, *_DSE_BF16_MW, *_LLM_CHI)  # fifteenth round (helper J): training logs committed in repositories
_NEW += (*_GALORE_ISSUE6, *_MEZO_README)  # fifteenth round (helper M): memory-method repos' baselines
# sixteenth round (helper E1): libraries' and projects' docs, READMEs and notebooks
_NEW += (*_CHATGLM_ETUNING, *_OPEN_R1_README, *_GEMMA_COOKBOOK_AXOLOTL)
_NEW += (*_FASTCHAT_ISSUES, *_ALPACA_ISSUES, *_TRANSFORMERS_RUN_CLM)  # sixteenth round (helper E2): issue threads
# seventeenth round (helper C2): Asia-based projects' issue threads and READMEs
_NEW += (*_TOOLBENCH_ISSUES, *_FIREFLY_QLORA, *_LLAMAFACTORY_4772)
# seventeenth round (helper C1): English framework docs, blogs and example notebooks
_NEW += (*_TRL_NB_TOOL_CALLING, *_DEEPSPEED_MUON_BLOG, *_PEFT_LORAFA)
# seventeenth round (helper C3): issue trackers of projects' own fine-tuning scripts, and torchtune's
_NEW += (*_CHATGLM6B_ISSUES, *_QWEN_ISSUES, *_BAICHUAN2_ISSUES, *_TORCHTUNE_ISSUES)
_NEW += (*_YI_ISSUES,)  # seventeenth round (helper C3), registered after the four above were scored
_NEW += (*_DEEPSEEK_CODER_ISSUES,)  # seventeenth round (helper C3), registered after yi-issues was scored
ROWS: list[dict] = [{**row, "set": SOURCES[row["source"]][0]} for row in (*_DESIGN, *_FROZEN, *_NEW)]

__all__ = ["ROWS", "SOURCES"]
