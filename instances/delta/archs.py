"""DELTA model architectures: dense (GPT-like) and MoE transformers (:class:`Arch`), their
parameter counts per layer, and the built-in ones (:data:`ARCHS`).

Ye, Liu, Sun, Hu, "DELTA: A DAG-aware Efficient OCS Logical Topology Optimization
Framework for AIDCs", 2026, Section V-A1, Table I. The paper only says the models are
"derived from the Megatron benchmarks"; the architectures below are the spec's
reconstruction (delta spec section 1.2.5, decisions 2-3 and 6-8 of section 6). The jobs
that train them: instances.delta.models.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields

from instances.errors import InstanceError, boolean, known_fields, number, obj, seq, text


@dataclass(frozen=True)
class Arch:
    """A transformer: dense (GPT-like) or MoE, with optional MLA attention (DeepSeek)."""

    name: str
    layers: int
    hidden: int
    heads: int
    vocab: int
    ffn: int = 0                  # dense FFN width (0 = 4 * hidden)
    kv_heads: int = 0             # 0 = heads (multi-head attention)
    head_dim: int = 0             # 0 = hidden // heads
    swiglu: bool = False
    experts: int = 0              # routed experts per MoE layer (0 = dense model)
    top_k: int = 0
    expert_ffn: int = 0
    shared_experts: int = 0
    dense_layers: int = 0         # leading dense layers of an MoE model (DeepSeek: 3)
    mla: dict = field(default_factory=dict)  # q_lora, kv_lora, qk_nope, qk_rope, v_head
    stage_layers: tuple = ()      # explicit layers per stage (uneven PP), else even split

    @property
    def moe(self) -> bool:
        return self.experts > 0

    def attn_params(self) -> int:
        h, nh = self.hidden, self.heads
        if self.mla:
            m = self.mla
            qk = m["qk_nope"] + m["qk_rope"]
            return (h * m["q_lora"] + m["q_lora"] * nh * qk            # q down / up
                    + h * (m["kv_lora"] + m["qk_rope"])                # kv down (+ rope key)
                    + m["kv_lora"] * nh * (m["qk_nope"] + m["v_head"])  # k_nope and v up
                    + nh * m["v_head"] * h)                            # output
        hd = self.head_dim or h // nh
        kv = self.kv_heads or nh
        return h * nh * hd + 2 * h * kv * hd + nh * hd * h

    def attn_width(self) -> int:
        """Width of the attention score computation (heads x head dim)."""
        if self.mla:
            return self.heads * (self.mla["qk_nope"] + self.mla["qk_rope"])
        return self.heads * (self.head_dim or self.hidden // self.heads)

    def _ffn(self, width: int) -> int:
        return (3 if self.swiglu else 2) * self.hidden * width

    def dense_ffn_params(self) -> int:
        return self._ffn(self.ffn or 4 * self.hidden)

    def expert_params(self) -> int:
        return self._ffn(self.expert_ffn)

    def is_moe_layer(self, layer: int) -> bool:
        return self.moe and layer >= self.dense_layers

    def layer_params(self, layer: int) -> tuple[int, int, int]:
        """(replicated params, expert params, active params) of one layer."""
        a = self.attn_params()
        if self.is_moe_layer(layer):
            shared = self.shared_experts * self.expert_params()
            routed = self.experts * self.expert_params()
            return a + shared, routed, a + shared + self.top_k * self.expert_params()
        f = self.dense_ffn_params()
        return a + f, 0, a + f

    def total_params(self) -> int:
        return sum(sum(self.layer_params(l)[:2]) for l in range(self.layers)) + 2 * self.vocab * self.hidden

    def layers_per_stage(self, pp: int) -> list[int]:
        if self.stage_layers:
            if len(self.stage_layers) != pp or sum(self.stage_layers) != self.layers:
                raise InstanceError("job.pp", f"{self.name}: stage_layers {self.stage_layers} do not "
                                    f"split {self.layers} layers into {pp} stages")
            return list(self.stage_layers)
        if self.layers % pp:
            raise InstanceError("job.pp", f"{self.name}: {self.layers} layers do not split evenly into "
                                f"pp={pp} stages (give arch.stage_layers)")
        return [self.layers // pp] * pp


# Ranges of the architecture fields (inclusive). Generous beyond any published model; they
# keep every parameter and FLOP count an exact integer far below float overflow.
ARCH_RANGES = {"layers": (1, 2**16), "hidden": (1, 2**20), "heads": (1, 2**16), "vocab": (1, 2**24),
               "ffn": (0, 2**22), "kv_heads": (0, 2**16), "head_dim": (0, 2**16),
               "experts": (0, 2**16), "top_k": (0, 2**16), "expert_ffn": (0, 2**22),
               "shared_experts": (0, 2**10), "dense_layers": (0, 2**16)}
MLA_KEYS = ("q_lora", "kv_lora", "qk_nope", "qk_rope", "v_head")


def arch_from_dict(a: dict, where: str = "job.arch") -> Arch:
    """A checked Arch from a merged field dict (a built-in one updated by ``job.arch``):
    every field of the right JSON type and range, named ``job.arch.<field>`` when wrong."""
    known_fields(where, a, {f.name for f in fields(Arch)})
    kw = {"name": text(f"{where}.name", a["name"])}
    for key, (lo, hi) in ARCH_RANGES.items():
        if key in a:
            kw[key] = number(f"{where}.{key}", a[key], integer=True, lo=lo, hi=hi)
        elif key in ("layers", "hidden", "heads", "vocab"):
            raise InstanceError(f"{where}.{key}", "missing (needed for a custom model)")
    if "swiglu" in a:
        kw["swiglu"] = boolean(f"{where}.swiglu", a["swiglu"])
    mla = obj(f"{where}.mla", a.get("mla", {}))
    if mla:
        known_fields(f"{where}.mla", mla, MLA_KEYS)
        for key in MLA_KEYS:
            if key not in mla:
                raise InstanceError(f"{where}.mla.{key}", "missing")
        kw["mla"] = {key: number(f"{where}.mla.{key}", mla[key], integer=True, lo=1, hi=2**20)
                     for key in MLA_KEYS}
    stages = a.get("stage_layers", ())
    stages = seq(f"{where}.stage_layers", list(stages) if isinstance(stages, tuple) else stages,
                 max_len=2**16)
    kw["stage_layers"] = tuple(number(f"{where}.stage_layers[{i}]", v, integer=True, lo=1, hi=2**16)
                               for i, v in enumerate(stages))
    arch = Arch(**kw)
    if arch.kv_heads > arch.heads:
        raise InstanceError(f"{where}.kv_heads", f"{arch.kv_heads} exceeds heads={arch.heads}")
    if arch.top_k > arch.experts:
        raise InstanceError(f"{where}.top_k", f"{arch.top_k} exceeds experts={arch.experts}")
    if arch.dense_layers > arch.layers:
        raise InstanceError(f"{where}.dense_layers", f"{arch.dense_layers} exceeds layers={arch.layers}")
    if arch.heads > arch.hidden and not arch.head_dim and not arch.mla:
        raise InstanceError(f"{where}.heads", f"{arch.heads} heads exceed hidden={arch.hidden} "
                                              "(give head_dim)")
    return arch


ARCHS: dict[str, Arch] = {a.name: a for a in [
    # Megatron-LM README weak-scaling family (vocab 131072): 12*96*h^2 + 2*V*h = 177.1 B
    Arch("megatron-177b", layers=96, hidden=12288, heads=96, vocab=131072),
    # reconstruction: 12*L*h^2 + 2*V*h = 461.5 B
    Arch("megatron-462b", layers=112, hidden=18432, heads=144, vocab=131072),
    Arch("mixtral-8x22b", layers=56, hidden=6144, heads=48, kv_heads=8, head_dim=128, vocab=32768,
         swiglu=True, experts=8, top_k=2, expert_ffn=16384),
    # DeepSeek-V3: 61 layers (3 dense + 58 MoE); PP=16 split 3 + 13x4 + 3 + 3 (first/last lighter)
    Arch("deepseek-671b", layers=61, hidden=7168, heads=128, vocab=129280, swiglu=True, ffn=18432,
         experts=256, top_k=8, expert_ffn=2048, shared_experts=1, dense_layers=3,
         mla={"q_lora": 1536, "kv_lora": 512, "qk_nope": 128, "qk_rope": 64, "v_head": 128},
         stage_layers=(3,) + (4,) * 13 + (3, 3)),
    # AICB gpt_7B (Fig. 1/3 toy)
    Arch("gpt-7b", layers=36, hidden=4096, heads=32, vocab=50257),
]}
