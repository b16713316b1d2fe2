// A reader for the small, non-recursive subset of GBNF our grammars use (string literals,
// character classes, rule references, groups, `|`, `?`, `*`, `+`, `{m,n}`), so tests can ask
// what a grammar admits (as a RegExp) and how long its longest text is, without a model.
// A recursive grammar or syntax outside the subset throws.

type Node =
  | { kind: 'literal'; text: string }
  | { kind: 'class'; source: string }
  | { kind: 'ref'; name: string }
  | { kind: 'seq'; items: Node[] }
  | { kind: 'alt'; options: Node[] }
  | { kind: 'repeat'; node: Node; min: number; max: number };

function parseRules(grammar: string): Map<string, Node> {
  const rules = new Map<string, Node>();
  for (const line of grammar.split('\n')) {
    if (line.trim() === '') continue;
    const m = /^([a-z][a-z0-9-]*)\s*::=\s*(.*)$/i.exec(line);
    if (!m) throw new Error(`not a rule: ${line}`);
    const parser = new ExprParser(m[2]!);
    const node = parser.alt();
    if (!parser.done()) throw new Error(`cannot read the rest of: ${line}`);
    rules.set(m[1]!, node);
  }
  return rules;
}

class ExprParser {
  private i = 0;
  constructor(private readonly s: string) {}
  done(): boolean {
    this.space();
    return this.i >= this.s.length;
  }
  private space(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i]!)) this.i++;
  }
  alt(): Node {
    const options = [this.seq()];
    for (this.space(); this.s[this.i] === '|'; this.space()) {
      this.i++;
      options.push(this.seq());
    }
    return options.length === 1 ? options[0]! : { kind: 'alt', options };
  }
  private seq(): Node {
    const items: Node[] = [];
    for (;;) {
      this.space();
      const c = this.s[this.i];
      if (c === undefined || c === '|' || c === ')') break;
      items.push(this.quantified(this.atom()));
    }
    return items.length === 1 ? items[0]! : { kind: 'seq', items };
  }
  private atom(): Node {
    const c = this.s[this.i]!;
    if (c === '"') {
      let text = '';
      for (this.i++; this.s[this.i] !== '"'; this.i++) {
        if (this.i >= this.s.length) throw new Error('unclosed literal');
        if (this.s[this.i] === '\\') {
          const e = this.s[++this.i]!;
          text += e === 'n' ? '\n' : e === 't' ? '\t' : e;
        } else text += this.s[this.i];
      }
      this.i++;
      return { kind: 'literal', text };
    }
    if (c === '[') {
      const end = this.s.indexOf(']', this.i + 1);
      if (end < 0) throw new Error('unclosed class');
      const source = this.s.slice(this.i, end + 1);
      this.i = end + 1;
      return { kind: 'class', source };
    }
    if (c === '(') {
      this.i++;
      const inner = this.alt();
      this.space();
      if (this.s[this.i] !== ')') throw new Error('unclosed group');
      this.i++;
      return inner;
    }
    const name = /^[a-z][a-z0-9-]*/i.exec(this.s.slice(this.i));
    if (!name) throw new Error(`unexpected ${c} at ${this.i} in ${this.s}`);
    this.i += name[0].length;
    return { kind: 'ref', name: name[0] };
  }
  private quantified(node: Node): Node {
    const c = this.s[this.i];
    if (c === '?') return (this.i++, { kind: 'repeat', node, min: 0, max: 1 });
    if (c === '*') return (this.i++, { kind: 'repeat', node, min: 0, max: Infinity });
    if (c === '+') return (this.i++, { kind: 'repeat', node, min: 1, max: Infinity });
    const m = /^\{(\d+)(?:,(\d*))?\}/.exec(this.s.slice(this.i));
    if (!m) return node;
    this.i += m[0].length;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[2] === '' ? Infinity : Number(m[2]);
    return { kind: 'repeat', node, min, max };
  }
}

function resolve(rules: Map<string, Node>, name: string, seen: string[] = []): Node {
  if (seen.includes(name)) throw new Error(`recursive rule ${name}`);
  const node = rules.get(name);
  if (!node) throw new Error(`undefined rule ${name}`);
  return node;
}

function toRegex(rules: Map<string, Node>, node: Node, seen: string[]): string {
  switch (node.kind) {
    case 'literal':
      return node.text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    case 'class':
      return node.source;
    case 'ref':
      return `(?:${toRegex(rules, resolve(rules, node.name, seen), [...seen, node.name])})`;
    case 'seq':
      return node.items.map((n) => toRegex(rules, n, seen)).join('');
    case 'alt':
      return `(?:${node.options.map((n) => toRegex(rules, n, seen)).join('|')})`;
    case 'repeat':
      return `(?:${toRegex(rules, node.node, seen)}){${node.min},${node.max === Infinity ? '' : node.max}}`;
  }
}

function maxLength(rules: Map<string, Node>, node: Node, seen: string[]): number {
  switch (node.kind) {
    case 'literal':
      return Array.from(node.text).length;
    case 'class':
      return 1;
    case 'ref':
      return maxLength(rules, resolve(rules, node.name, seen), [...seen, node.name]);
    case 'seq':
      return node.items.reduce((sum, n) => sum + maxLength(rules, n, seen), 0);
    case 'alt':
      return Math.max(...node.options.map((n) => maxLength(rules, n, seen)));
    case 'repeat':
      return node.max === 0 ? 0 : node.max * maxLength(rules, node.node, seen);
  }
}

/** The texts `grammar` admits from `root`, as an anchored RegExp (characters, not bytes). */
export function gbnfRegExp(grammar: string): RegExp {
  const rules = parseRules(grammar);
  return new RegExp(`^${toRegex(rules, resolve(rules, 'root'), ['root'])}$`, 'u');
}

/** Characters (code points) of the longest text `grammar` admits; Infinity when unbounded. */
export function gbnfMaxLength(grammar: string): number {
  const rules = parseRules(grammar);
  return maxLength(rules, resolve(rules, 'root'), ['root']);
}
