"""Kernels the perf group times through their real launcher, and the mirror whose configs it
times at the same shapes: written by the lane side (``ci/smoke/test_perf.py``), read by the
controller (``ci.history.tuning``, the tuning gap). Standard library only: part of the lane
package.

A launcher's testcase records ``CONFIG = LAUNCHER_CONFIG`` (the launcher picks tiles, warps
and stages) and its shape as its test parameters; the mirror's testcase of one config at that
shape has the parameters ``<shape>-<config>``.
"""

LAUNCHER_CONFIG = "vllm-launcher"
VLLM_ATTENTION = "vllm kernel_unified_attention"
VLLM_GDN = "vllm _fused_post_conv_kernel"
# The launched kernel's name -> its mirror's.
MIRRORS = {VLLM_ATTENTION: "unified_attention", VLLM_GDN: "gdn_post_conv"}
