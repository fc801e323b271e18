"""What the CAMEL trainers and tools use that is not an algorithm, as CleanRL keeps cleanrl_utils/. Each module is one
concept, and imports point one way, from the top of this list down (tests/test_imports.py keeps it so):

  run          a trainer's run: its arguments, checkpoints and resuming, charts, unmasked evaluations, the summary
  hub          a finished run's agent on the Hugging Face Hub (upload, model card)
  results/     committed runs: export, tables, statistics and figures (plot.py)
  judge        a multimodal model's verdict on a guide's video
  llm          asking a language model for guide code (Gemini, or any OpenAI-compatible server)
  guide_eval   measuring guides and trained agents: episodes, return, forward distance, falls, ranking
  guide        loading and checking a guide: an LLM-written file (untrusted code), an expert, random actions
  fast_update  the TD3 update computed faster, and two critics as one batched network
  agent        a trained agent in your own code: load_agent(path), then action = policy(obs)
  preregistration  the experiments of docs/preregistration.md: their runs, and a run checked against them (standard library only)
  conditions   run names: what a condition says, and what figures and tables call it (standard library only)
  cli          what every command shares: one-line usage errors, progress display (standard library only)
  machine      the CPU a run or a measurement was made on: model name, family and model, vector instruction sets
               (standard library only)

Nothing is imported here, so scripts/sweep.py, which runs without the project's packages, can import conditions and
cli alone.
"""
