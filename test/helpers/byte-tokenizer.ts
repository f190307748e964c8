import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IM_END, IM_START } from './scripted-upstream.js';

/** GPT-2's byte → printable character table, which byte-level BPE vocabularies are written in. */
function byteChars(): string[] {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  let extra = 0;
  return Array.from({ length: 256 }, (_, b) => String.fromCodePoint(printable(b) ? b : 256 + extra++));
}

/**
 * A Hugging Face tokenizer.json for the scripted upstream's ids: byte b is id b, the chat markers 256/257, and
 * `merged` words as single tokens from 258 on (their BPE merges included), so a test can sample a merged token that
 * re-tokenizes as bytes.
 */
export function writeByteTokenizer(dir: string, merged: string[] = []): string {
  const chars = byteChars();
  const vocab: Record<string, number> = Object.fromEntries(chars.map((c, b) => [c, b]));
  const merges: string[] = [];
  merged.forEach((word, k) => {
    for (let i = 2; i <= word.length; i++) {
      const piece = word.slice(0, i);
      if (i < word.length && vocab[piece] === undefined)
        throw new Error(`merged words are built one letter at a time: ${piece}`);
      merges.push(`${word.slice(0, i - 1)} ${word[i - 1]}`);
    }
    vocab[word] = 258 + k;
  });
  const special = (id: number, content: string) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  vocab['<|im_start|>'] = IM_START;
  vocab['<|im_end|>'] = IM_END;
  const file = join(dir, 'tokenizer.json');
  writeFileSync(
    file,
    JSON.stringify({
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: [special(IM_START, '<|im_start|>'), special(IM_END, '<|im_end|>')],
      normalizer: null,
      pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
      post_processor: null,
      decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
      model: {
        type: 'BPE',
        dropout: null,
        unk_token: null,
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: false,
        vocab,
        merges,
      },
    }),
  );
  return file;
}
