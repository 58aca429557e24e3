"""Models: the registry of what each model is (and litellm, loaded lazily), the client
(chat and embeddings), the embedded GGUF model, the scripted test model, the numpy MiniLM
embedder, and the one retry policy.

The embedded model registers here, like any in-process provider, as soon as the package
is imported; importing local.py is cheap (llama.cpp loads on the first call)."""
from . import local, registry

registry.register_provider("local", local.CAPABILITIES, local.handler)
