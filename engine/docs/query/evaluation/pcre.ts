/**
 * MongoDB patterns are PCRE; this translates the PCRE a client is likely to write into an
 * equivalent JavaScript RegExp (always in 'u' mode, so '.' and classes work on code points and
 * unknown escapes are errors instead of silently meaning a letter). The differences handled:
 *
 * - `^` `$` `.` keep PCRE's meaning: without `m`, `$` also matches before a final "\n"; with `m`
 *   only "\n" separates lines (JavaScript also breaks at "\r", U+2028, U+2029); `.` excludes only
 *   "\n" (with `s`, nothing).
 * - `x` (extended): unescaped whitespace and `#` comments outside classes are dropped.
 * - `\A` `\z` `\Z`, `\Q...\E`, `\e` `\a`, `\x{h..}`, octal `\0dd`, POSIX classes `[[:alpha:]]`,
 *   `(?P<name>...)`, `(?P=name)`, `(?'name'...)`, `\k{name}`, `(?#comment)`, leading inline flags
 *   `(?imsx)`, a `]` first in a class, and a `{` that does not start a quantifier.
 * - `\s` is ASCII whitespace outside classes, as in PCRE without Unicode properties.
 * - PCRE-only constructs (atomic groups, possessive quantifiers, recursion, conditionals,
 *   inline flags past the start, `\G` `\K` `\R` `\h` ...) make the pattern invalid, never wrong.
 */

import { queryError } from '../operator.js';

const VALID_FLAGS = 'imsx';
const SYNTAX_CHARS = new Set('^$\\.*+?()[]{}|/');
const PCRE_WHITESPACE = new Set([' ', '\t', '\n', '\r', '\f', '\v']);
const ASCII_SPACE_CLASS = '\\t\\n\\x0b\\f\\r ';
const POSIX_CLASSES = new Map<string, string>([
  ['alpha', 'a-zA-Z'],
  ['digit', '0-9'],
  ['alnum', 'a-zA-Z0-9'],
  ['upper', 'A-Z'],
  ['lower', 'a-z'],
  ['space', ASCII_SPACE_CLASS],
  ['blank', ' \\t'],
  ['punct', '!-\\/:-@\\[-`{-~'],
  ['xdigit', '0-9A-Fa-f'],
  ['word', '\\w'],
  ['cntrl', '\\x00-\\x1f\\x7f'],
  ['print', ' -~'],
  ['graph', '!-~'],
]);
const QUANTIFIER = /\{\d+(?:,\d*)?\}/y;

function invalid(message: string): never {
  queryError('$regex', `Regular expression is invalid: ${message}`);
}

function literal(ch: string, inClass: boolean): string {
  if (SYNTAX_CHARS.has(ch) || (inClass && ch === '-')) return `\\${ch}`;
  return ch;
}

function codePoint(hex: string): string {
  const cp = hex === '' ? 0 : parseInt(hex, 16);
  if (!(cp <= 0x10ffff)) invalid(`code point \\x{${hex}} is too large`);
  return `\\u{${cp.toString(16)}}`;
}

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  x: boolean;
}

class Translator {
  readonly #p: string;
  readonly #f: Flags;
  #i = 0;
  #out = '';
  #inClass = false;
  #classStart = -1;

  constructor(pattern: string, flags: Flags) {
    this.#p = pattern;
    this.#f = flags;
  }

  run(): string {
    const p = this.#p;
    while (this.#i < p.length) {
      const c = p[this.#i]!;
      if (c === '\\') this.#escape();
      else if (this.#inClass) this.#classChar(c);
      else this.#outsideChar(c);
    }
    if (this.#inClass) invalid('missing terminating ] for character class');
    return this.#out;
  }

  #escape(): void {
    const p = this.#p;
    const d = p[this.#i + 1];
    if (d === undefined) invalid('\\ at end of pattern');
    const inClass = this.#inClass;
    this.#i += 2;
    switch (d) {
      case 'Q': {
        const end = p.indexOf('\\E', this.#i);
        const text = p.slice(this.#i, end === -1 ? p.length : end);
        for (const ch of text) this.#out += literal(ch, inClass);
        this.#i = end === -1 ? p.length : end + 2;
        return;
      }
      case 'E':
        return;
      case 'd': case 'D': case 'w': case 'W': case 'b': case 'B': case 'n': case 'r': case 't': case 'f':
        this.#out += `\\${d}`;
        return;
      case 's':
        this.#out += inClass ? ASCII_SPACE_CLASS : `[${ASCII_SPACE_CLASS}]`;
        return;
      case 'S':
        this.#out += inClass ? '\\S' : `[^${ASCII_SPACE_CLASS}]`;
        return;
      case 'a':
        this.#out += '\\x07';
        return;
      case 'e':
        this.#out += '\\x1b';
        return;
      case 'c': {
        const letter = p[this.#i];
        if (letter === undefined || !/[A-Za-z]/.test(letter)) invalid('\\c must be followed by a letter');
        this.#out += `\\c${letter}`;
        this.#i++;
        return;
      }
      case 'x': {
        if (p[this.#i] === '{') {
          const end = p.indexOf('}', this.#i);
          const hex = end === -1 ? '' : p.slice(this.#i + 1, end);
          if (end === -1 || !/^[0-9a-fA-F]{1,8}$/.test(hex)) invalid('malformed \\x{...} escape');
          this.#out += codePoint(hex);
          this.#i = end + 1;
        } else {
          const hex = /^[0-9a-fA-F]{0,2}/.exec(p.slice(this.#i))![0];
          this.#out += codePoint(hex);
          this.#i += hex.length;
        }
        return;
      }
      case '0': {
        const oct = /^[0-7]{0,2}/.exec(p.slice(this.#i))![0];
        this.#out += `\\u{${parseInt(`0${oct}`, 8).toString(16)}}`;
        this.#i += oct.length;
        return;
      }
      case 'A':
      case 'z':
      case 'Z':
        if (inClass) invalid(`\\${d} is not allowed in a character class`);
        this.#out += d === 'A' ? '(?<![\\s\\S])' : d === 'z' ? '(?![\\s\\S])' : '(?=\\n?(?![\\s\\S]))';
        return;
      case 'p':
      case 'P': {
        if (p[this.#i] === '{') {
          const end = p.indexOf('}', this.#i);
          if (end === -1) invalid(`malformed \\${d}{...} escape`);
          this.#out += `\\${d}${p.slice(this.#i, end + 1)}`;
          this.#i = end + 1;
        } else {
          const name = p[this.#i];
          if (name === undefined) invalid(`malformed \\${d} escape`);
          this.#out += `\\${d}{${name}}`;
          this.#i++;
        }
        return;
      }
      case 'k': {
        const open = p[this.#i];
        const close = open === '<' ? '>' : open === "'" ? "'" : open === '{' ? '}' : undefined;
        const end = close === undefined ? -1 : p.indexOf(close, this.#i + 1);
        if (end === -1 || inClass) invalid('malformed \\k<name> back reference');
        this.#out += `\\k<${p.slice(this.#i + 1, end)}>`;
        this.#i = end + 1;
        return;
      }
      default:
        break;
    }
    if (d >= '1' && d <= '9') {
      if (inClass) invalid('octal escapes in a character class are not supported');
      const digits = /^[0-9]*/.exec(p.slice(this.#i))![0];
      this.#out += `\\${d}${digits}`;
      this.#i += digits.length;
      return;
    }
    if (/[A-Za-z0-9]/.test(d)) invalid(`unsupported escape \\${d}`);
    // PCRE: a backslash before any other character makes it literal.
    const cp = p.codePointAt(this.#i - 1)!;
    const ch = String.fromCodePoint(cp);
    this.#out += literal(ch, inClass);
    this.#i += ch.length - 1;
  }

  #classChar(c: string): void {
    const p = this.#p;
    if (c === ']') {
      // PCRE: a ']' right after '[' or '[^' is a literal member, not the end of the class.
      this.#out += this.#i === this.#classStart ? '\\]' : ']';
      if (this.#i !== this.#classStart) this.#inClass = false;
      this.#i++;
      return;
    }
    if (c === '[') {
      const m = /^\[:(\^?)([a-z]+):\]/.exec(p.slice(this.#i));
      if (m !== null) {
        const members = POSIX_CLASSES.get(m[2]!);
        if (members === undefined || m[1] === '^') invalid(`unsupported POSIX class [:${m[1]}${m[2]}:]`);
        this.#out += members;
        this.#i += m[0].length;
        return;
      }
      this.#out += '\\[';
      this.#i++;
      return;
    }
    this.#out += c;
    this.#i++;
  }

  #outsideChar(c: string): void {
    const p = this.#p;
    const f = this.#f;
    if (f.x && PCRE_WHITESPACE.has(c)) {
      this.#i++;
      return;
    }
    if (f.x && c === '#') {
      const end = p.indexOf('\n', this.#i);
      this.#i = end === -1 ? p.length : end + 1;
      return;
    }
    switch (c) {
      case '[':
        this.#out += '[';
        this.#i++;
        if (p[this.#i] === '^') {
          this.#out += '^';
          this.#i++;
        }
        this.#inClass = true;
        this.#classStart = this.#i;
        return;
      case '.':
        this.#out += f.s ? '[\\s\\S]' : '[^\\n]';
        break;
      case '^':
        this.#out += f.m ? '(?<![^\\n])' : '(?<![\\s\\S])';
        break;
      case '$':
        this.#out += f.m ? '(?![^\\n])' : '(?=\\n?(?![\\s\\S]))';
        break;
      case '(':
        this.#group();
        return;
      case '{': {
        QUANTIFIER.lastIndex = this.#i;
        const m = QUANTIFIER.exec(p);
        if (m !== null) {
          this.#out += m[0];
          this.#i += m[0].length;
          return;
        }
        this.#out += '\\{';
        break;
      }
      case '}':
      case ']':
        this.#out += `\\${c}`;
        break;
      default:
        this.#out += c;
    }
    this.#i++;
  }

  #group(): void {
    const p = this.#p;
    const rest = p.slice(this.#i, this.#i + 4);
    if (rest.startsWith('(?#')) {
      const end = p.indexOf(')', this.#i);
      if (end === -1) invalid('missing ) after (?# comment');
      this.#i = end + 1;
      return;
    }
    if (rest === '(?P<') {
      this.#out += '(?<';
      this.#i += 4;
      return;
    }
    if (rest === '(?P=') {
      const end = p.indexOf(')', this.#i);
      if (end === -1) invalid('missing ) after (?P=name');
      this.#out += `\\k<${p.slice(this.#i + 4, end)}>`;
      this.#i = end + 1;
      return;
    }
    if (rest.startsWith("(?'")) {
      const end = p.indexOf("'", this.#i + 3);
      if (end === -1) invalid("missing ' after (?'name");
      this.#out += `(?<${p.slice(this.#i + 3, end)}>`;
      this.#i = end + 1;
      return;
    }
    this.#out += '(';
    this.#i++;
  }
}

/** Options of $regex checked as MongoDB does: only i, m, s and x. @throws QUERY_ERROR */
export function checkRegexOptions(options: string): void {
  for (const ch of options) {
    if (!VALID_FLAGS.includes(ch)) queryError('$regex', `invalid flag in regex options: ${ch}`, { options });
  }
}

/** A JavaScript RegExp that matches what the PCRE `pattern` with `options` matches. @throws QUERY_ERROR */
export function compilePcre(pattern: string, options: string): RegExp {
  checkRegexOptions(options);
  if (pattern.includes('\0')) queryError('$regex', 'Regular expression cannot contain an embedded null byte');
  const flags: Flags = { i: options.includes('i'), m: options.includes('m'), s: options.includes('s'), x: options.includes('x') };
  let body = pattern;
  // Inline flags at the very start, e.g. "(?i)abc", are the same as $options.
  for (let m = /^\(\?([imsx]+)\)/.exec(body); m !== null; m = /^\(\?([imsx]+)\)/.exec(body)) {
    for (const ch of m[1]!) flags[ch as keyof Flags] = true;
    body = body.slice(m[0].length);
  }
  const source = new Translator(body, flags).run();
  try {
    return new RegExp(source, flags.i ? 'iu' : 'u');
  } catch (err) {
    invalid((err as Error).message.replace(/^Invalid regular expression: /, ''));
  }
}
