"""The bundled model the app runs is the published GGUF with its Latin-script vocabulary
(rt_core/models/bundled.py): the same tokens for the app's texts, the same logits for the
tokens it keeps, the same sampled text, and every other character still readable."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rt_core.models import bundled

ROOT = Path(__file__).resolve().parents[1]
BYTE, CONTROL, NORMAL = 6, 3, 1


def test_kept_tokens_are_the_latin_script_pieces_and_every_special_one():
    pieces = ["<pad>", "<0xE6>", "▁the", "é", "▁naïve", "—", "π", "≤", "東京", "▁Москва", "ab東", "<h1>"]
    kinds = [CONTROL, BYTE, NORMAL, NORMAL, NORMAL, NORMAL, NORMAL, NORMAL, NORMAL, NORMAL, NORMAL, 4]
    kept = bundled.kept_token_ids(pieces, kinds)
    assert [pieces[i] for i in kept] == ["<pad>", "<0xE6>", "▁the", "é", "▁naïve", "—", "π", "≤", "<h1>"]


def test_a_piece_of_kept_characters_is_never_dropped_so_its_texts_split_alike():
    """Every piece a kept text can be split into is itself made of kept characters."""
    assert all(bundled.kept_char(c) for c in "Ångström's naïve ζ-function — “quoted” ≤ 5 ± 1 → ∞")
    assert not any(bundled.kept_char(c) for c in "東京Москваअ")


def _texts() -> list[str]:
    """What the app feeds the model: the bundled papers and researchers, and the prompts."""
    folder = ROOT / "assets" / "community"
    papers = json.loads((folder / "papers.json").read_text("utf-8"))
    people = json.loads((folder / "researchers.json").read_text("utf-8"))
    texts = [" ".join(str(p.get(k) or "") for k in ("title", "abstract", "summary")) for p in papers]
    texts += [json.dumps(r, ensure_ascii=False) for r in people]
    texts += [p.read_text("utf-8") for p in sorted((ROOT / "rt_core" / "run" / "prompts").glob("*.yaml"))]
    return texts


@pytest.fixture(scope="module")
def pair():
    from llama_cpp import Llama

    def load(path: Path):
        return Llama(model_path=str(path), n_ctx=1024, n_threads=2, n_threads_batch=2, verbose=False, seed=0)

    full, latin = load(bundled.original_path()), load(bundled.run_path())
    yield full, latin
    full.close()
    latin.close()


def _pieces(llm, text: str) -> list[bytes]:
    return [llm.detokenize([t]) for t in llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)]


def test_the_app_texts_are_tokenised_as_by_the_whole_vocabulary(pair):
    full, latin = pair
    assert latin.n_vocab() < 0.7 * full.n_vocab()
    texts = _texts()
    assert any(any(ord(c) > 127 for c in t) for t in texts)  # accents, dashes, π among them
    for text in texts:
        assert _pieces(latin, text) == _pieces(full, text), text[:80]
    for name in ("bos", "eos"):  # the special tokens are renumbered, not lost
        assert latin.detokenize([getattr(latin, f"token_{name}")()], special=True) == \
            full.detokenize([getattr(full, f"token_{name}")()], special=True)


def test_other_scripts_are_still_read_and_written_through_the_byte_tokens(pair):
    _, latin = pair
    text = "Galaxy surveys in Tokyo (東京) and Moscow (Москва)"
    assert latin.detokenize(latin.tokenize(text.encode("utf-8"), add_bos=False)).decode("utf-8") == text


def test_the_kept_tokens_logits_are_the_models_own_and_the_sampled_text_is_the_same(pair):
    full, latin = pair
    ids = {full.detokenize([i], special=True): i for i in range(full.n_vocab())}
    to_full = np.array([ids[latin.detokenize([i], special=True)] for i in range(latin.n_vocab())])
    prompt = ("Research idea, written by an astronomer and an NLP researcher.\n"
              "1. Research question: How can stellar velocity distributions from Gaia be used with")
    for llm in pair:
        llm.reset()
        llm.eval(llm.tokenize(prompt.encode("utf-8")))
    row_full = np.asarray(full.scores[full.n_tokens - 1])
    row_latin = np.asarray(latin.scores[latin.n_tokens - 1])
    assert np.array_equal(row_latin, row_full[to_full])
    for seed in range(3):
        assert _sampled(latin, prompt, seed) == _sampled(full, prompt, seed)


def _sampled(llm, prompt: str, seed: int) -> str:
    llm.reset()
    out = llm.create_completion(prompt, max_tokens=32, temperature=0.8, top_k=40, top_p=0.95, seed=seed)
    return out["choices"][0]["text"]


def test_the_copy_keeps_the_rows_of_the_kept_tokens_and_renumbers_the_special_ones(tmp_path):
    """On a tiny model file: the embedding rows, the tokenizer's lists and the special ids
    follow the tokens kept (in the bundled model the special tokens come first, so their ids
    happen not to move; in another file they would)."""
    import gguf

    src, dst = tmp_path / "tiny.gguf", tmp_path / "tiny.latin.gguf"
    pieces = ["東", "<pad>", "▁a", "Мо", "<eos>", "é", "<bos>"]
    kinds = [NORMAL, CONTROL, NORMAL, NORMAL, CONTROL, NORMAL, CONTROL]
    rows = np.arange(len(pieces) * 4, dtype=np.float32).reshape(len(pieces), 4)
    w = gguf.GGUFWriter(src, arch="gemma3")
    w.add_tokenizer_model("llama")
    w.add_token_list(pieces)
    w.add_token_scores([float(-i) for i in range(len(pieces))])
    w.add_token_types(kinds)
    w.add_bos_token_id(6)
    w.add_eos_token_id(4)
    w.add_pad_token_id(1)
    w.add_tensor("token_embd.weight", rows)
    w.add_tensor("blk.0.ffn_up.weight", np.ones((2, 4), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()

    assert bundled.write_latin_copy(src, dst) == 5
    r = gguf.GGUFReader(dst)
    assert r.fields["tokenizer.ggml.tokens"].contents() == ["<pad>", "▁a", "<eos>", "é", "<bos>"]
    assert r.fields["tokenizer.ggml.scores"].contents() == [-1.0, -2.0, -4.0, -5.0, -6.0]
    assert [r.fields[f"tokenizer.ggml.{k}_token_id"].contents() for k in ("bos", "eos", "padding")] == [4, 2, 0]
    tensors = {t.name: t for t in r.tensors}
    assert np.array_equal(np.asarray(tensors["token_embd.weight"].data), rows[[1, 2, 4, 5, 6]])
    assert np.array_equal(np.asarray(tensors["blk.0.ffn_up.weight"].data), np.ones((2, 4), dtype=np.float32))
