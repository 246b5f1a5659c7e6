"""Liger's fused loss under ZeRO-3 with an untied head (estimate/fused_loss.py): what a real DeepSpeed engine does
with an lm_head weight read by attribute, the head's module never called.

`use_liger_kernel` patches the model's forward (Liger's lce_forward), which reads `self.lm_head.weight` and hands it
to a fused linear cross-entropy that makes both gradients in forward and returns them in backward. The script
builds a tiny untied Llama under zero.Init (every parameter partitioned: the persistence threshold at 0), trains two
steps with that contract re-implemented in torch (Liger is Triton), once with the loss inside the model's forward
and once after it (TRL's DPO/GRPO Liger paths before trl#5891/#6372), and prints what the weight held when read
and whether the step moved it."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.estimate.deepspeed_engine import engine_lines

_ENGINE = textwrap.dedent(
    '''
    import json, sys, types
    import torch, deepspeed
    from deepspeed.utils import safe_get_full_fp32_param
    from transformers import LlamaConfig, LlamaForCausalLM
    config = json.loads(sys.argv[1])

    class FusedLinearCrossEntropy(torch.autograd.Function):  # Liger's contract: gradients made in forward
        @staticmethod
        def forward(ctx, x, weight, target):
            xf, wf = x.float(), weight.float()
            logits = xf @ wf.t()
            loss = torch.nn.functional.cross_entropy(logits, target)
            grad = torch.softmax(logits, -1)
            grad[torch.arange(len(target)), target] -= 1
            grad /= len(target)
            ctx.save_for_backward((grad @ wf).to(x.dtype), (grad.t() @ xf).to(weight.dtype))
            return loss

        @staticmethod
        def backward(ctx, grad_output):
            grad_input, grad_weight = ctx.saved_tensors
            return grad_input * grad_output, grad_weight * grad_output, None

    for where in json.loads(sys.argv[2]):
        ds = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1, "bf16": {"enabled": True},
              "zero_optimization": {"stage": 3, "stage3_param_persistence_threshold": 0},
              "optimizer": {"type": "AdamW", "params": {"lr": 1e-2, "torch_adam": True}}}
        with deepspeed.zero.Init(config_dict_or_path=ds):
            model = LlamaForCausalLM(LlamaConfig(**config, tie_word_embeddings=False))
        seen = []

        def lce_forward(self, input_ids, labels):  # Liger's lce_forward: the head's weight by attribute
            hidden = self.model(input_ids=input_ids).last_hidden_state
            weight = self.lm_head.weight
            seen.append(weight.numel())
            return FusedLinearCrossEntropy.apply(hidden.view(-1, hidden.shape[-1]), weight, labels.view(-1))

        def hidden_forward(self, input_ids, labels):
            return self.model(input_ids=input_ids).last_hidden_state

        model.forward = types.MethodType(lce_forward if where == "inside" else hidden_forward, model)
        engine, *_ = deepspeed.initialize(model=model, config=ds)
        head = engine.module.lm_head.weight
        before = safe_get_full_fp32_param(head).clone()
        ids = torch.randint(0, config["vocab_size"], (1, 16))
        outcome = "ok"
        try:
            for _ in range(2):
                out = engine(ids, ids)
                if where == "outside":  # the loss after the model's forward, as TRL's Liger paths took it
                    weight = engine.module.lm_head.weight
                    seen.append(weight.numel())
                    out = FusedLinearCrossEntropy.apply(out.view(-1, out.shape[-1]), weight, ids.view(-1))
                engine.backward(out)
                engine.step()
        except Exception as error:
            outcome = type(error).__name__
        moved = float((safe_get_full_fp32_param(head) - before).abs().max()) if outcome == "ok" else 0.0
        print("LIGER", where, outcome, min(seen), head.ds_numel, int(moved > 0), flush=True)
        engine.destroy()
    '''
)
_TINY_LLAMA = {"model_type": "llama", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 128,
               "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4}


@pytest.mark.slow
def test_an_untied_head_read_inside_the_models_forward_is_gathered_and_trains(tmp_path, cli) -> None:
    lines = engine_lines(tmp_path, _ENGINE, _TINY_LLAMA, ["inside", "outside"], "LIGER", what="a ZeRO-3 engine")
    measured = {where: rest for where, *rest in lines}
    outcome, seen, numel, moved = measured["inside"]
    assert (outcome, int(seen), int(moved)) == ("ok", int(numel), 1)  # gathered whole at every read, and trained
    outcome, seen, _, _ = measured["outside"]
    assert outcome != "ok" and int(seen) == 0  # read after the forward: the empty partition, and the loss fails
    # so the estimate takes the flag under ZeRO-3 and says how the head is gathered
    said = cli("estimate", "--model", "qwen2.5-7b", "--system", "8xH100-80GB", "--seq-len", "1024", "--strategy",
               "zero3", "--loss-kernel", "liger", "--format", "json")
    notes = " ".join(json.loads(said.stdout)["estimate"]["assumptions"])
    assert "gathered as the model's external parameter" in notes and "Liger-Kernel#1048" in notes
