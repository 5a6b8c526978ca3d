"""Our Triton kernels, written after the structure of the vLLM kernels they stand for.

``triton.jit`` decides when a module is imported whether its functions are compiled or
interpreted (``TRITON_INTERPRET``), Triton's own ``tl.zeros`` and friends included; so an
interpreter lane sets ``TRITON_INTERPRET=1`` for the whole pytest process before triton is
imported, and compiles run in ``ci.smoke.compile.compiler``'s child process, where it is unset.
"""
