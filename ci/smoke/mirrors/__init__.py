"""Our mirrors of vLLM's kernels (attention, GDN post-conv): configs, references, launches."""
