"""Text-completion (LLM) services: one subpackage per backend, and what tg-launch shares with them.

Their shared base is ``trustgraph.base.processors.llm_service.CompletionService``, in
trustgraph-base, so that upstream's providers and one written elsewhere need no more than that
package.  Here beside the backends: ``gguf`` (whether a file is a model llama.cpp loads, which
tg-launch checks too) and ``choice_scores`` (how likely the model found each option).
"""
