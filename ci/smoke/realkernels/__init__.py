"""vLLM's and FlagGems' own kernels: captured from their launchers, compiled and launched."""
