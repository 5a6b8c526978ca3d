"""vLLM's offline path in a process of its own: ``LLM(...)`` with the lane's model, greedy
tokens for a prompt, the result as one JSON line on stdout (``RESULT {...}``).

``python -m ci.smoke.vllm_offline --model PATH --tensor-parallel-size N --max-model-len L``.
Run by ``test_vllm.py`` with its output in a log file, so vLLM's own lines (the attention
backend, the warm-up) and its engine process's traceback are the testcase's artifact, and
the pytest process never holds the GPU.
"""

import argparse
import json
import sys
from typing import List

RESULT_PREFIX = "RESULT "


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--tensor-parallel-size", type=int, default=1)
    parser.add_argument("--max-model-len", type=int, default=2048)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.3)
    parser.add_argument("--prompt", default="Hello")
    parser.add_argument("--max-tokens", type=int, default=10)
    parser.add_argument("--attention-backend", default=None)
    parser.add_argument("--gdn-prefill-backend", default=None)
    args = parser.parse_args(argv)

    import vllm

    llm = vllm.LLM(
        model=args.model,
        tensor_parallel_size=args.tensor_parallel_size,
        max_model_len=args.max_model_len,
        gpu_memory_utilization=args.gpu_memory_utilization,
        enforce_eager=True,
        trust_remote_code=True,
        **{
            key: value
            for key, value in (
                ("attention_backend", args.attention_backend),
                ("gdn_prefill_backend", args.gdn_prefill_backend),
            )
            if value
        },
    )
    params = vllm.SamplingParams(max_tokens=args.max_tokens, temperature=0.0, ignore_eos=True)
    output = llm.generate([args.prompt], params)[0].outputs[0]
    result = {"text": output.text, "token_ids": list(output.token_ids)}
    print(RESULT_PREFIX + json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
