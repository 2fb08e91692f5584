"""Text-completion (LLM) services: a shared base and one subpackage per backend."""
