"""A model's family from its id, for when neither the user nor models.dev says.

Families keep explorer seats diverse (never a member's family, no two of one family), so they are
coarse: a lineage, not a size or a variant (`mixtral`, `codestral`, `gpt-4o-mini` and `o3` fold
into `mistral` and `gpt`).

The rule: the provider prefix (`meta-llama/`) and variant suffix (`:free`, `:3b`) are dropped, then
the first row of `_TABLE` whose pattern occurs in the name wins. Fine-tunes that carry their own
name (Nemotron, Hermes, Dolphin, DeepSeek's R1 distills, LLaVA) come before the base families, so
`llama-3.1-nemotron-70b` is `nemotron`: a named fine-tune is trained to answer differently from
its base, which is what diversity is for.
"""

from __future__ import annotations

import re

# Order matters: named fine-tunes first, then `gpt-oss` before `gpt`, then base families.
# Short tokens are anchored (no letter before them) so `phi` does not match `dolphin`.
_TABLE: tuple[tuple[str, str], ...] = (
    (r"nemotron", "nemotron"),
    (r"hermes|nousresearch", "hermes"),
    (r"dolphin", "dolphin"),
    (r"llava", "llava"),
    (r"deepseek", "deepseek"),
    (r"gpt-oss", "gpt-oss"),
    (r"(?<![a-z])(chat)?gpt", "gpt"),
    (r"^o\d*(-|$)", "gpt"),  # OpenAI's o-series: o1, o3-mini, models.dev's "o-mini"
    (r"codestral|mixtral|mistral|ministral|magistral|devstral|pixtral|voxtral", "mistral"),
    (r"qwen|qwq|qvq", "qwen"),
    (r"gemma", "gemma"),
    (r"gemini", "gemini"),
    (r"llama", "llama"),
    (r"kimi|moonshot", "kimi"),
    (r"glm", "glm"),
    (r"(?<![a-z])phi(?![a-z])", "phi"),
    (r"claude", "claude"),
    (r"grok", "grok"),
    (r"minimax", "minimax"),
    (r"(?<![a-z])command", "command"),
    (r"granite", "granite"),
    (r"olmo", "olmo"),
    (r"jamba", "jamba"),
    (r"ernie", "ernie"),
    (r"hunyuan", "hunyuan"),
    (r"(?<![a-z])yi(?![a-z])", "yi"),
    (r"mimo", "mimo"),
    (r"trinity", "trinity"),
    (r"(?<![a-z])lfm", "lfm"),
    (r"cogito", "cogito"),
    (r"falcon", "falcon"),
    (r"smollm", "smollm"),
    (r"starcoder", "starcoder"),
    (r"internlm", "internlm"),
    (r"exaone", "exaone"),
    (r"(?<![a-z])nova(?![a-z])", "nova"),
    (r"sonar", "sonar"),
)
_COMPILED = tuple((re.compile(pattern), family) for pattern, family in _TABLE)


def _name_part(model_id: str) -> str:
    """`Meta-Llama/Llama-3.3-70B:free` → `llama-3.3-70b`: lower case, no provider prefix, no variant."""
    name = model_id.strip().lower().rsplit("/", 1)[-1]
    return name.split(":", 1)[0]


def family_of(model_id: str) -> str | None:
    """The family a model id names (see the module docstring for the rule); None when unknown."""
    name = _name_part(model_id)
    for pattern, family in _COMPILED:
        if pattern.search(name):
            return family
    return None


def normalise_family(name: str) -> str:
    """Fold a source's family label into this vocabulary (`qwen2` → `qwen`, `glm-air` → `glm`).

    Labels the table does not know are kept, lower-cased: a family is still a family.
    """
    return family_of(name) or name.strip().lower()
