// BERT's tokenizer (uncased): the "basic" pre-tokenization (clean text, split CJK characters,
// lower-case, strip accents, split on whitespace and punctuation) followed by greedy
// longest-match-first WordPiece, as in Hugging Face's `BertTokenizer` / tokenizers'
// `BertNormalizer` + `BertPreTokenizer` + `WordPiece`. The vocabulary comes from the model's
// `vocab.txt` or `tokenizer.json`, on disk.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface WordPieceOptions {
  lowercase?: boolean;
  /** Strip accents; default: whenever lowercasing (BERT's rule when unset). */
  stripAccents?: boolean;
  unkToken?: string;
  clsToken?: string;
  sepToken?: string;
  /** Prefix of word continuations, `##`. */
  continuingPrefix?: string;
  /** Longer words become the unknown token. */
  maxInputCharsPerWord?: number;
}

export interface Encoding {
  ids: number[];
  tokens: string[];
}

function isControl(ch: string): boolean {
  if (ch === '\t' || ch === '\n' || ch === '\r') return false;
  return /\p{Cc}|\p{Cf}/u.test(ch);
}

function isWhitespace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || /\p{Zs}/u.test(ch);
}

function isPunctuation(ch: string): boolean {
  const cp = ch.codePointAt(0)!;
  // ASCII non-letters/digits count as punctuation for BERT, like `$`, `^`, `+`, `<`.
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) return true;
  return /\p{P}/u.test(ch);
}

function isCjk(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

export class WordPieceTokenizer {
  private readonly lowercase: boolean;
  private readonly stripAccents: boolean;
  private readonly unk: string;
  private readonly prefix: string;
  private readonly maxChars: number;
  readonly clsId: number;
  readonly sepId: number;
  readonly unkId: number;

  constructor(
    private readonly vocab: ReadonlyMap<string, number>,
    opts: WordPieceOptions = {},
  ) {
    this.lowercase = opts.lowercase ?? true;
    this.stripAccents = opts.stripAccents ?? this.lowercase;
    this.unk = opts.unkToken ?? '[UNK]';
    this.prefix = opts.continuingPrefix ?? '##';
    this.maxChars = opts.maxInputCharsPerWord ?? 100;
    const need = (t: string) => {
      const id = vocab.get(t);
      if (id === undefined) throw new Error(`the vocabulary has no ${t} token`);
      return id;
    };
    this.unkId = need(this.unk);
    this.clsId = need(opts.clsToken ?? '[CLS]');
    this.sepId = need(opts.sepToken ?? '[SEP]');
  }

  /** Reads `tokenizer.json` (preferred: it carries the normalizer settings) or `vocab.txt`. */
  static fromDir(dir: string): WordPieceTokenizer {
    const jsonPath = join(dir, 'tokenizer.json');
    if (existsSync(jsonPath)) return WordPieceTokenizer.fromTokenizerJson(JSON.parse(readFileSync(jsonPath, 'utf8')));
    const vocabPath = join(dir, 'vocab.txt');
    if (existsSync(vocabPath)) return WordPieceTokenizer.fromVocabTxt(readFileSync(vocabPath, 'utf8'));
    throw new Error(`no tokenizer.json or vocab.txt in ${dir}`);
  }

  static fromVocabTxt(text: string, opts?: WordPieceOptions): WordPieceTokenizer {
    const vocab = new Map<string, number>();
    const lines = text.split('\n');
    if (lines.at(-1) === '') lines.pop();
    lines.forEach((line, i) => {
      const token = line.replace(/\r$/, '');
      if (!vocab.has(token)) vocab.set(token, i);
    });
    return new WordPieceTokenizer(vocab, opts);
  }

  static fromTokenizerJson(json: {
    normalizer?: { type?: string; lowercase?: boolean; strip_accents?: boolean | null } | null;
    model?: {
      type?: string;
      vocab?: Record<string, number>;
      unk_token?: string;
      continuing_subword_prefix?: string;
      max_input_chars_per_word?: number;
    };
  }): WordPieceTokenizer {
    const model = json.model;
    if (!model || model.type !== 'WordPiece' || !model.vocab) {
      throw new Error(`tokenizer.json: expected a WordPiece model, found ${model?.type ?? 'none'}`);
    }
    const norm = json.normalizer;
    if (norm && norm.type !== 'BertNormalizer') throw new Error(`tokenizer.json: unsupported normalizer ${String(norm.type)}`);
    const lowercase = norm?.lowercase ?? true;
    return new WordPieceTokenizer(new Map(Object.entries(model.vocab)), {
      lowercase,
      stripAccents: norm?.strip_accents ?? lowercase,
      ...(model.unk_token ? { unkToken: model.unk_token } : {}),
      ...(model.continuing_subword_prefix ? { continuingPrefix: model.continuing_subword_prefix } : {}),
      ...(model.max_input_chars_per_word ? { maxInputCharsPerWord: model.max_input_chars_per_word } : {}),
    });
  }

  /** The basic tokenizer: words and punctuation marks, normalised. */
  preTokenize(text: string): string[] {
    let s = '';
    for (const ch of text) {
      const cp = ch.codePointAt(0)!;
      if (cp === 0 || cp === 0xfffd || isControl(ch)) continue;
      if (isWhitespace(ch)) s += ' ';
      else if (isCjk(cp)) s += ` ${ch} `;
      else s += ch;
    }
    if (this.lowercase) s = s.toLowerCase();
    if (this.stripAccents) s = s.normalize('NFD').replace(/\p{Mn}/gu, '');
    const words: string[] = [];
    for (const chunk of s.split(' ')) {
      if (chunk === '') continue;
      let current = '';
      for (const ch of chunk) {
        if (isPunctuation(ch)) {
          if (current) words.push(current);
          words.push(ch);
          current = '';
        } else current += ch;
      }
      if (current) words.push(current);
    }
    return words;
  }

  /** WordPiece of one word: greedy longest match; a word with an unmatched rest is unknown. */
  wordPieces(word: string): string[] {
    const chars = [...word];
    if (chars.length > this.maxChars) return [this.unk];
    const pieces: string[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found: string | undefined;
      while (start < end) {
        const sub = (start > 0 ? this.prefix : '') + chars.slice(start, end).join('');
        if (this.vocab.has(sub)) {
          found = sub;
          break;
        }
        end--;
      }
      if (found === undefined) return [this.unk];
      pieces.push(found);
      start = end;
    }
    return pieces;
  }

  /** `[CLS] pieces… [SEP]`, cut to at most maxLength tokens in all. */
  encode(text: string, maxLength = 512): Encoding {
    const tokens: string[] = [];
    const budget = Math.max(0, maxLength - 2);
    outer: for (const word of this.preTokenize(text)) {
      for (const piece of this.wordPieces(word)) {
        if (tokens.length >= budget) break outer;
        tokens.push(piece);
      }
    }
    const ids = tokens.map((t) => this.vocab.get(t) ?? this.unkId);
    return { ids: [this.clsId, ...ids, this.sepId], tokens: ['[CLS]', ...tokens, '[SEP]'] };
  }
}
