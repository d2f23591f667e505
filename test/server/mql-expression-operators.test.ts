/**
 * Expression operators over HTTP on a real server: trigonometry, `$regexFind`/`$regexFindAll`
 * (and `$regexMatch`, which shares their argument handling), `$setField`/`$unsetField`, `$rand`,
 * `$binarySize` and `$bsonSize`; through `/api/mql/aggregate` and a computed find projection.
 * Expected values are the MongoDB manual's examples, MongoDB's jstests
 * (jstests/aggregation/expressions/expression_trigonometric.js, expression_set_field.js,
 * binarySize.js, bsonSize.js), JavaScript's Math (the doubles MongoDB's std:: functions give),
 * the bson package's encoder (for `$bsonSize`) and mingo (an oracle only: randomized comparisons
 * for the operators it has). Every refusal is checked for MongoDB's message.
 */
import { calculateObjectSize, Double, Int32, Long } from 'bson';
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { randomInt, seededRandom } from '../helpers/random.js';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);

/** A value JSON cannot carry, as an expression: Infinity, -Infinity, NaN. */
const INF = { $multiply: [1e308, 10] };
const NEG_INF = { $multiply: [-1e308, 10] };
const NAN = { $toDouble: 'nan' };
/** How the answers write them (Extended JSON). */
const J_INF = { $numberDouble: 'Infinity' };
const J_NEG_INF = { $numberDouble: '-Infinity' };
const J_NAN = { $numberDouble: 'NaN' };

let oneDoc: string | undefined;
/** The value of `expr` over one document `{_id: 1}` (or over `doc`), or the 400's message. */
async function value(expr: unknown, doc: Record<string, unknown> = { _id: 1 }): Promise<unknown> {
  const c = doc['_id'] === 1 && Object.keys(doc).length === 1 ? (oneDoc ??= await file.seed([{ _id: 1 }], 'one')) : await file.seed([doc], 'v');
  const res = await mql('aggregate', { collection: c, pipeline: [{ $project: { _id: 0, v: expr } }] });
  expect(res.status, res.text).toBe(200);
  return res.body.documents[0].v;
}

/** The QUERY_ERROR message of `expr` over `doc`. */
async function refusal(expr: unknown, doc: Record<string, unknown> = { _id: 1 }): Promise<string> {
  const c = await file.seed([doc], 'r');
  const res = await mql('aggregate', { collection: c, pipeline: [{ $project: { _id: 0, v: expr } }] });
  expect(res.status, res.text).toBe(400);
  expect(res.body.error.code).toBe('QUERY_ERROR');
  return res.body.error.message as string;
}

describe('trigonometry', () => {
  it("the manual's right triangle: sides from an angle and the hypotenuse, and the angles back", async () => {
    const c = await file.seed([{ _id: 1, side_a: 3, side_b: 4, hypotenuse: 5, angle_a: 36.86989764584402 }]);
    const res = await mql('aggregate', {
      collection: c,
      pipeline: [
        {
          $project: {
            _id: 0,
            side_a: { $multiply: [{ $sin: { $degreesToRadians: '$angle_a' } }, '$hypotenuse'] },
            side_b: { $multiply: [{ $cos: { $degreesToRadians: '$angle_a' } }, '$hypotenuse'] },
            tan_a: { $tan: { $degreesToRadians: '$angle_a' } },
            asin_deg: { $radiansToDegrees: { $asin: { $divide: ['$side_a', '$hypotenuse'] } } },
            acos_deg: { $radiansToDegrees: { $acos: { $divide: ['$side_b', '$hypotenuse'] } } },
            atan_deg: { $radiansToDegrees: { $atan: { $divide: ['$side_a', '$side_b'] } } },
            atan2_deg: { $radiansToDegrees: { $atan2: ['$side_a', '$side_b'] } },
          },
        },
      ],
    });
    expect(res.status, res.text).toBe(200);
    const r = res.body.documents[0];
    const rad = 36.86989764584402 * (Math.PI / 180);
    expect(r).toEqual({
      side_a: Math.sin(rad) * 5,
      side_b: Math.cos(rad) * 5,
      tan_a: Math.tan(rad),
      asin_deg: Math.asin(3 / 5) * (180 / Math.PI),
      acos_deg: Math.acos(4 / 5) * (180 / Math.PI),
      atan_deg: Math.atan(3 / 4) * (180 / Math.PI),
      atan2_deg: Math.atan2(3, 4) * (180 / Math.PI),
    });
    expect(r.side_a).toBeCloseTo(3, 12);
    expect(r.side_b).toBeCloseTo(4, 12);
  });

  it("the manual's hyperbolic functions of an angle", async () => {
    const c = await file.seed([{ _id: 1, angle: 1.5 }]);
    const ops = ['$sinh', '$cosh', '$tanh', '$asinh'] as const;
    const res = await mql('aggregate', { collection: c, pipeline: [{ $project: { _id: 0, ...Object.fromEntries(ops.map((op) => [op.slice(1), { [op]: '$angle' }])), acosh: { $acosh: { $add: ['$angle', 1] } }, atanh: { $atanh: { $divide: ['$angle', 2] } } } }] });
    expect(res.body.documents).toEqual([{ sinh: Math.sinh(1.5), cosh: Math.cosh(1.5), tanh: Math.tanh(1.5), asinh: Math.asinh(1.5), acosh: Math.acosh(2.5), atanh: Math.atanh(0.75) }]);
  });

  // jstests expression_trigonometric.js: simple inputs, infinities, NaN.
  const values: ReadonlyArray<readonly [string, unknown, unknown]> = [
    ['$acos of 1', { $acos: 1 }, 0],
    ['$acosh of 1', { $acosh: 1 }, 0],
    ['$asin of 0', { $asin: 0 }, 0],
    ['$atan2 of [0, 0]', { $atan2: [0, 0] }, 0],
    ['$cos of 0', { $cos: 0 }, 1],
    ['$cosh of 0', { $cosh: 0 }, 1],
    ['$tan of 0', { $tan: 0 }, 0],
    ['$acosh of Infinity', { $acosh: INF }, J_INF],
    ['$asinh of -Infinity', { $asinh: NEG_INF }, J_NEG_INF],
    ['$cosh of -Infinity', { $cosh: NEG_INF }, J_INF],
    ['$sinh of -Infinity', { $sinh: NEG_INF }, J_NEG_INF],
    ['$atan of Infinity', { $atan: INF }, Math.PI / 2],
    ['$atan2 of [-Infinity, Infinity]', { $atan2: [NEG_INF, INF] }, -Math.PI / 4],
    ['$atan2 of [0, -Infinity]', { $atan2: [0, NEG_INF] }, Math.PI],
    ['$atanh of 1', { $atanh: 1 }, J_INF],
    ['$atanh of -1', { $atanh: -1 }, J_NEG_INF],
    ['$tanh of Infinity', { $tanh: INF }, 1],
    ['$acos of NaN', { $acos: NAN }, J_NAN],
    ['$sin of NaN', { $sin: NAN }, J_NAN],
    ['$atanh of NaN', { $atanh: NAN }, J_NAN],
    ['$degreesToRadians of -Infinity', { $degreesToRadians: NEG_INF }, J_NEG_INF],
    ['$radiansToDegrees of NaN', { $radiansToDegrees: NAN }, J_NAN],
    ['$atan2 of [3, 2]', { $atan2: [3, 2] }, Math.atan2(3, 2)],
    ['$degreesToRadians of 180', { $degreesToRadians: 180 }, Math.PI],
    ['a one-element list', { $sin: [0] }, 0],
    ['null', { $sin: null }, null],
    ['missing', { $acos: '$nothing' }, null],
    ['$atan2 with a null first argument (the second is not looked at)', { $atan2: [null, 'x'] }, null],
    ['$atan2 with a missing second argument', { $atan2: [1, '$nothing'] }, null],
  ];
  for (const [name, expr, want] of values) it(name, async () => expect(await value(expr)).toEqual(want));

  // MongoDB's message (code 50989) says "must in", not "must be in"; values as C++ writes doubles.
  const domainErrors: ReadonlyArray<readonly [unknown, string]> = [
    [{ $acos: 2 }, 'cannot apply $acos to 2, value must in [-1,1]'],
    [{ $acos: -1.1 }, 'cannot apply $acos to -1.1, value must in [-1,1]'],
    [{ $acos: INF }, 'cannot apply $acos to inf, value must in [-1,1]'],
    [{ $asin: NEG_INF }, 'cannot apply $asin to -inf, value must in [-1,1]'],
    [{ $asin: 1234567 }, 'cannot apply $asin to 1.23457e+06, value must in [-1,1]'],
    [{ $atanh: 1.00001 }, 'cannot apply $atanh to 1.00001, value must in [-1,1]'],
    [{ $atanh: -2 }, 'cannot apply $atanh to -2, value must in [-1,1]'],
    [{ $acosh: 0.9 }, 'cannot apply $acosh to 0.9, value must in [1,inf]'],
    [{ $acosh: NEG_INF }, 'cannot apply $acosh to -inf, value must in [1,inf]'],
    [{ $acosh: 0.00001 }, 'cannot apply $acosh to 1e-05, value must in [1,inf]'],
    [{ $sin: INF }, 'cannot apply $sin to inf, value must in (-inf,inf)'],
    [{ $cos: NEG_INF }, 'cannot apply $cos to -inf, value must in (-inf,inf)'],
    [{ $tan: INF }, 'cannot apply $tan to inf, value must in (-inf,inf)'],
  ];
  for (const [expr, message] of domainErrors) it(`refuses ${JSON.stringify(expr)}`, async () => expect(await refusal(expr)).toBe(message));

  const typeErrors: ReadonlyArray<readonly [unknown, string]> = [
    ...['$sin', '$cos', '$tan', '$asin', '$acos', '$atan', '$sinh', '$cosh', '$tanh', '$asinh', '$acosh', '$atanh', '$degreesToRadians', '$radiansToDegrees'].map((op) => [{ [op]: 'string' }, `${op} only supports numeric types, not string`] as const),
    [{ $atan2: ['string', 0] }, '$atan2 only supports numeric types, not string'],
    [{ $atan2: [0, true] }, '$atan2 only supports numeric types, not bool'],
    [{ $sin: [1, 2] }, 'Expression $sin takes 1 argument. 2 were passed in.'],
    [{ $atan2: [1] }, 'Expression $atan2 takes 2 arguments. 1 were passed in.'],
  ];
  for (const [expr, message] of typeErrors) it(`refuses ${JSON.stringify(expr)}`, async () => expect(await refusal(expr)).toBe(message));

  it('agrees with mingo on random numbers in each domain', async () => {
    const rand = seededRandom(7);
    const docs = Array.from({ length: 200 }, (_, i) => ({ _id: i, x: (rand() - 0.5) * 20, u: rand() * 2 - 1, g: 1 + rand() * 50, y: randomInt(rand, -5, 5) }));
    const project = {
      _id: 1,
      sin: { $sin: '$x' }, cos: { $cos: '$x' }, tan: { $tan: '$x' }, atan: { $atan: '$x' }, atan2: { $atan2: ['$x', '$y'] },
      sinh: { $sinh: '$x' }, cosh: { $cosh: '$x' }, tanh: { $tanh: '$x' }, asinh: { $asinh: '$x' },
      asin: { $asin: '$u' }, acos: { $acos: '$u' }, atanh: { $atanh: '$u' }, acosh: { $acosh: '$g' },
      d2r: { $degreesToRadians: '$x' }, r2d: { $radiansToDegrees: '$y' },
    };
    const c = await file.seed(docs, 'trig');
    const res = await mql('aggregate', { collection: c, pipeline: [{ $project: project }, { $sort: { _id: 1 } }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents).toEqual(aggregate(docs, [{ $project: project }, { $sort: { _id: 1 } }]));
  });
});

describe('$regexFind, $regexFindAll, $regexMatch', () => {
  // The manual's products collection (the $regexFind and $regexFindAll pages).
  const PRODUCTS = [
    { _id: 1, description: 'Single LINE description.' },
    { _id: 2, description: 'First lines\nsecond line' },
    { _id: 3, description: 'Many spaces before     line' },
    { _id: 4, description: 'Multiple\nline descriptions' },
    { _id: 5, description: 'anchors, links and hyperlinks' },
    { _id: 6, description: 'métier work vocation' },
  ];
  const run = async (op: string, args: Record<string, unknown>): Promise<unknown[]> => {
    const c = await file.seed(PRODUCTS, 'p');
    const res = await mql('aggregate', { collection: c, pipeline: [{ $addFields: { out: { [op]: { input: '$description', ...args } } } }, { $sort: { _id: 1 } }, { $project: { _id: 0, out: 1 } }] });
    expect(res.status, res.text).toBe(200);
    return res.body.documents.map((d: { out: unknown }) => d.out);
  };
  const m = (match: string, idx: number, captures: unknown[] = []): unknown => ({ match, idx, captures });

  it("the manual: $regexFind of /line/", async () => {
    expect(await run('$regexFind', { regex: 'line' })).toEqual([null, m('line', 6), m('line', 23), m('line', 9), null, null]);
  });
  it("the manual: option i", async () => {
    expect((await run('$regexFind', { regex: 'line', options: 'i' }))[0]).toEqual(m('LINE', 7));
  });
  it("the manual: idx counts code points ('métier', /tier/ is at 2, its byte offset 3)", async () => {
    expect((await run('$regexFind', { regex: 'tier' }))[5]).toEqual(m('tier', 2));
  });
  it("the manual: option m makes ^ match at each line's start", async () => {
    expect(await run('$regexFindAll', { regex: '^s', options: 'im' })).toEqual([[m('S', 0)], [m('s', 12)], [], [], [], []]);
  });
  it("the manual: option x ignores whitespace and # comments, a capture group", async () => {
    expect((await run('$regexFind', { regex: 'lin(e|k) # matches line or link', options: 'x' }))[4]).toEqual(m('link', 9, ['k']));
  });
  it("the manual: option s lets '.' match a newline", async () => {
    expect(await run('$regexFind', { regex: 'm.*line', options: 'si' })).toEqual([null, null, m('Many spaces before     line', 0), m('Multiple\nline', 0), null, null]);
  });
  it("the manual: $regexFindAll of /line/ finds every match", async () => {
    expect(await run('$regexFindAll', { regex: 'line' })).toEqual([[], [m('line', 6), m('line', 19)], [m('line', 23)], [m('line', 9)], [], []]);
  });
  it("the manual: $regexMatch", async () => {
    expect(await run('$regexMatch', { regex: 'line' })).toEqual([false, true, true, true, false, false]);
  });

  const cases: ReadonlyArray<readonly [string, unknown, unknown]> = [
    ['the manual: e-mail captures', { $regexFind: { input: 'Hi, my address is Emily.B@Example.com, thanks', regex: '([a-z0-9_.+-]+)@([a-z0-9_.+-]+\\.[a-z0-9_.+-]+)', options: 'i' } }, m('Emily.B@Example.com', 18, ['Emily.B', 'Example.com'])],
    ['an unmatched group is null, an empty one ""', { $regexFind: { input: 'ac', regex: '(b)?(x*)c' } }, m('c', 1, [null, ''])],
    ['named groups are captures too', { $regexFind: { input: 'k=v', regex: '(?P<key>\\w)=(?<value>\\w)' } }, m('k=v', 0, ['k', 'v'])],
    ['no match is null', { $regexFind: { input: 'abc', regex: 'z' } }, null],
    ['an empty match after a non-empty one, none at the end', { $regexFindAll: { input: 'ab', regex: 'a*' } }, [m('a', 0), m('', 1)]],
    ['no empty match after the last non-empty one at the end', { $regexFindAll: { input: 'aa', regex: 'a*' } }, [m('aa', 0)]],
    ['an empty input is searched once', { $regexFindAll: { input: '', regex: 'x*' } }, [m('', 0)]],
    ['empty matches step a character, astral ones included', { $regexFindAll: { input: '😀é', regex: '' } }, [m('', 0), m('', 1)]],
    ['$regexFind: idx past an astral character counts code points', { $regexFind: { input: '😀😀x', regex: 'x' } }, m('x', 2)],
    ['idx past astral characters counts code points', { $regexFindAll: { input: '😀x😀x', regex: 'x' } }, [m('x', 1), m('x', 3)]],
    ['matches do not overlap', { $regexFindAll: { input: 'aaaa', regex: 'aa' } }, [m('aa', 0), m('aa', 2)]],
    ['a later search still sees the text before it (lookbehind)', { $regexFindAll: { input: 'xa xa', regex: '(?<=x)a' } }, [m('a', 1), m('a', 4)]],
    ['$ before a final newline, as PCRE', { $regexFind: { input: 'end\n', regex: 'end$' } }, m('end', 0)],
    ['a BSON regex literal carries its options', { $regexFind: { input: 'ABC', regex: { $regularExpression: { pattern: 'b', options: 'i' } } } }, m('B', 1)],
    ['a literal without options takes options', { $regexFind: { input: 'ABC', regex: { $regularExpression: { pattern: 'b', options: '' } }, options: 'i' } }, m('B', 1)],
    ["option 'u' is accepted", { $regexMatch: { input: 'é', regex: '^.$', options: 'u' } }, true],
    ['null input: null', { $regexFind: { input: null, regex: 'a' } }, null],
    ['missing input: []', { $regexFindAll: { input: '$nothing', regex: 'a' } }, []],
    ['null regex: false', { $regexMatch: { input: 'a', regex: null } }, false],
    ['null options are no options', { $regexFind: { input: 'A', regex: 'a', options: null } }, null],
    ['a computed regex', { $regexFind: { input: 'abc', regex: { $concat: ['b', 'c'] } } }, m('bc', 1)],
  ];
  for (const [name, expr, want] of cases) it(name, async () => expect(await value(expr)).toEqual(want));

  const errors: ReadonlyArray<readonly [unknown, string]> = [
    [{ $regexFind: 'x' }, '$regexFind expects an object of named arguments but found: string'],
    [{ $regexFindAll: { input: 'a', regex: 'a', flags: 'i' } }, '$regexFindAll found an unknown argument: flags'],
    [{ $regexFind: { regex: 'a' } }, "$regexFind requires 'input' parameter"],
    [{ $regexMatch: { input: 'a' } }, "$regexMatch requires 'regex' parameter"],
    [{ $regexFind: { input: 5, regex: 'a' } }, "$regexFind needs 'input' to be of type string"],
    [{ $regexFind: { input: 5, regex: null } }, "$regexFind needs 'input' to be of type string"],
    [{ $regexFindAll: { input: 'a', regex: 5 } }, "$regexFindAll needs 'regex' to be of type string or regex"],
    [{ $regexFind: { input: 'a', regex: 'a', options: 1 } }, "$regexFind needs 'options' to be of type string"],
    [{ $regexFind: { input: 'a', regex: null, options: 1 } }, "$regexFind needs 'options' to be of type string"],
    [{ $regexFind: { input: 'a', regex: { $regularExpression: { pattern: 'a', options: 'i' } }, options: 'm' } }, "$regexFind: found regex option(s) specified in both 'regex' and 'option' fields"],
    [{ $regexFind: { input: 'a', regex: 'a', options: 'g' } }, '$regexFind invalid flag in regex options: g'],
    [{ $regexMatch: { input: 'a', regex: { $concat: ['a', '\u0000'] } } }, '$regexMatch: regular expression cannot contain an embedded null byte'],
    [{ $regexFindAll: { input: 'a', regex: 'a', options: { $concat: ['i', '\u0000'] } } }, '$regexFindAll: regular expression options cannot contain an embedded null byte'],
    [{ $regexFind: { input: 'a', regex: '(' } }, 'Invalid Regex in $regexFind: /(/u: Unterminated group'],
  ];
  for (const [expr, message] of errors) it(`refuses ${JSON.stringify(expr)}`, async () => expect(await refusal(expr)).toBe(message));

  // The PCRE-only syntax the $regex query operator refuses is refused here too.
  for (const pattern of ['a++', '(?>a)', '\\Ga', 'a(?i)b', '(?(1)a|b)', '\\R']) {
    it(`refuses the PCRE-only ${pattern}`, async () => expect(await refusal({ $regexFind: { input: 'a', regex: pattern } })).toMatch(/^Invalid Regex in \$regexFind: /));
  }

  it('agrees with mingo on random ASCII text and patterns that cannot match empty', async () => {
    const rand = seededRandom(11);
    const alphabet = 'abAB \n.';
    // No 'a$' (PCRE's $ also matches before a final newline; mingo's JavaScript one does not).
    const patterns = ['a', 'ab', 'a+', '[ab]b?', '(a)(b)?', 'b.', '\\s', '^a', 'A(B|b)'];
    const docs = Array.from({ length: 150 }, (_, i) => ({ _id: i, s: Array.from({ length: randomInt(rand, 0, 12) }, () => alphabet[randomInt(rand, 0, alphabet.length - 1)]).join(''), p: patterns[randomInt(rand, 0, patterns.length - 1)], o: ['', 'i', 'm', 'im'][randomInt(rand, 0, 3)] }));
    const project = { _id: 1, one: { $regexFind: { input: '$s', regex: '$p', options: '$o' } }, all: { $regexFindAll: { input: '$s', regex: '$p', options: '$o' } }, any: { $regexMatch: { input: '$s', regex: '$p', options: '$o' } } };
    const c = await file.seed(docs, 'rx');
    const res = await mql('aggregate', { collection: c, pipeline: [{ $project: project }, { $sort: { _id: 1 } }] });
    expect(res.status, res.text).toBe(200);
    // mingo's $regexFindAll searches the rest of the text as a new string: its idx is wrong from
    // the third match on and '^' matches after each match. The matches and captures are compared
    // (without '^'); idx is checked against the text itself.
    const withoutIdx = (all: Array<{ idx: number }>): unknown[] => all.map(({ idx: _idx, ...rest }) => rest);
    const want = aggregate(docs, [{ $project: project }, { $sort: { _id: 1 } }]) as Array<Record<string, any>>;
    const got = res.body.documents as Array<Record<string, any>>;
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      expect([got[i]!.one, got[i]!.any], JSON.stringify(d)).toEqual([want[i]!.one, want[i]!.any]);
      if (d.p !== '^a') expect(withoutIdx(got[i]!.all), JSON.stringify(d)).toEqual(withoutIdx(want[i]!.all));
      let from = 0;
      for (const match of got[i]!.all as Array<{ match: string; idx: number }>) {
        const at = [...d.s].slice(match.idx).join('');
        expect(at.startsWith(match.match) && match.idx >= from, JSON.stringify(d)).toBe(true);
        from = match.idx + [...match.match].length;
      }
    }
  });
});

describe('$setField, $unsetField', () => {
  const INVENTORY = [
    { _id: 1, item: 'sweatshirt', price: 45.99, qty: 300 },
    { _id: 2, item: 'winter coat', price: 499.99, qty: 200 },
  ];
  const run = async (pipeline: unknown[], docs: unknown[] = INVENTORY): Promise<unknown[]> => {
    const c = await file.seed(docs, 's');
    const res = await mql('aggregate', { collection: c, pipeline: [...pipeline, { $sort: { _id: 1 } }] });
    expect(res.status, res.text).toBe(200);
    return res.body.documents;
  };

  it("the manual: a field whose name has a '.' (then $unset of the old one)", async () => {
    expect(await run([{ $replaceWith: { $setField: { field: 'price.usd', input: '$$ROOT', value: '$price' } } }, { $unset: 'price' }])).toEqual([
      { _id: 1, item: 'sweatshirt', qty: 300, 'price.usd': 45.99 },
      { _id: 2, item: 'winter coat', qty: 200, 'price.usd': 499.99 },
    ]);
  });
  it("the manual: a field whose name starts with '$' ($literal)", async () => {
    expect(await run([{ $replaceWith: { $setField: { field: { $literal: '$price' }, input: '$$ROOT', value: '$price' } } }, { $unset: 'price' }])).toEqual([
      { _id: 1, item: 'sweatshirt', qty: 300, $price: 45.99 },
      { _id: 2, item: 'winter coat', qty: 200, $price: 499.99 },
    ]);
  });
  it('the manual: $$REMOVE removes, and $unsetField does the same', async () => {
    const want = [{ _id: 1, item: 'sweatshirt', qty: 300 }, { _id: 2, item: 'winter coat', qty: 200 }];
    expect(await run([{ $replaceWith: { $setField: { field: 'price', input: '$$ROOT', value: '$$REMOVE' } } }])).toEqual(want);
    expect(await run([{ $replaceWith: { $unsetField: { field: 'price', input: '$$ROOT' } } }])).toEqual(want);
  });
  it("the manual: $unsetField of a '$' name in an embedded document", async () => {
    // (tetradb refuses '$' and '.' in stored field names: the document is built by the expression.)
    expect(await value({ $setField: { field: 'quantity', input: '$$ROOT', value: { $unsetField: { field: { $literal: '$small' }, input: { $literal: { $large: 50, $small: 25 } } } } } })).toEqual({ _id: 1, quantity: { $large: 50 } });
  });

  const cases: ReadonlyArray<readonly [string, unknown, unknown]> = [
    ['sets an existing field in its place', { $setField: { field: 'a', input: { a: 'b', c: 1 }, value: 24 } }, { a: 24, c: 1 }],
    ['appends a new field', { $setField: { field: 'a', input: { b: 'b' }, value: 24 } }, { b: 'b', a: 24 }],
    ['a missing value removes', { $setField: { field: 'b', input: { b: 'b', c: 1 }, value: '$nothing' } }, { c: 1 }],
    ['a null value is set', { $setField: { field: 'b', input: { b: 'b' }, value: null } }, { b: null }],
    ['a dotted name is one field, not a path', { $setField: { field: 'a.b.c', input: { a: { b: { c: 5 } } }, value: 12345 } }, { a: { b: { c: 5 } }, 'a.b.c': 12345 }],
    ["'$' inside a name is allowed", { $setField: { field: 'a$b', input: { a$b: 'b' }, value: 1 } }, { a$b: 1 }],
    ['nested $setField', { $setField: { field: 'x', input: { $setField: { field: 'b.c', input: { $literal: { 'b.c': { a: 5 } } }, value: 'forget-me-not' } }, value: 'something' } }, { 'b.c': 'forget-me-not', x: 'something' }],
    ['with $getField', { $getField: { field: 'foo', input: { $setField: { field: 'foo', input: '$$ROOT', value: 1234 } } } }, 1234],
    ['null input: null', { $setField: { field: 'a', input: null, value: 0 } }, null],
    ['$unsetField of null input: null', { $unsetField: { field: 'a', input: '$nothing' } }, null],
    ['$unsetField of an absent field', { $unsetField: { field: 'a', input: { b: 'b' } } }, { b: 'b' }],
  ];
  for (const [name, expr, want] of cases) it(name, async () => expect(await value(expr)).toEqual(want));
  it('keeps the field order: an existing field in its place, a new one last', async () => {
    expect(Object.keys((await value({ $setField: { field: 'a', input: { a: 1, b: 2, c: 3 }, value: 9 } })) as object)).toEqual(['a', 'b', 'c']);
    expect(Object.keys((await value({ $setField: { field: 'z', input: { b: 2, a: 1 }, value: 9 } })) as object)).toEqual(['b', 'a', 'z']);
  });

  // jstests expression_set_field.js, with the messages MongoDB gives for them.
  const errors: ReadonlyArray<readonly [unknown, string]> = [
    [{ $setField: { input: { a: 'b' } } }, "$setField requires 'field' to be specified"],
    [{ $unsetField: {} }, "$unsetField requires 'field' to be specified"],
    [{ $setField: { field: 'a', input: { a: 'b' } } }, "$setField requires 'value' to be specified"],
    [{ $unsetField: { field: 'a', value: null, input: { a: 'b' } } }, '$unsetField found an unknown argument: value'],
    [{ $setField: { field: 'foo', value: 0 } }, "$setField requires 'input' to be specified"],
    [{ $unsetField: { field: 'foo' } }, "$unsetField requires 'input' to be specified"],
    [{ $setField: { field: true, input: { a: 'b' }, value: 24 } }, "$setField requires 'field' to evaluate to type String, but got bool"],
    [{ $unsetField: { field: 33, input: 33 } }, "$unsetField requires 'field' to evaluate to type String, but got int"],
    [{ $setField: { field: null, input: {}, value: 0 } }, "$setField requires 'field' to evaluate to type String, but got null"],
    [{ $setField: { field: { a: 1 }, input: { a: 1 }, value: 24 } }, "$setField requires 'field' to evaluate to a constant, but got a non-constant argument"],
    [{ $unsetField: { field: { $concat: ['a.b', '.', 'c'] }, input: { $literal: { 'a.b.c': 5 } } } }, "$unsetField requires 'field' to evaluate to a constant, but got a non-constant argument"],
    [{ $setField: { field: '$field_path', input: {}, value: 0 } }, "'$CURRENT.field_path' is a field path reference which is not allowed in this context. Did you mean {$literal: '$CURRENT.field_path'}?"],
    [{ $setField: 5 }, '$setField only supports an object as its argument'],
    [{ $unsetField: 'foo' }, '$unsetField only supports an object as its argument'],
    [{ $setField: { $add: [2, 3] } }, '$setField found an unknown argument: $add'],
    [{ $setField: { field: 'a', input: { a: 'b' }, value: 24, unknown: true } }, '$setField found an unknown argument: unknown'],
    [{ $setField: { field: 'a', input: true, value: 24 } }, "$setField requires 'input' to evaluate to type Object"],
    // MongoDB's $unsetField is $setField once parsed: its evaluation error names $setField.
    [{ $unsetField: { field: 'a', input: true } }, "$setField requires 'input' to evaluate to type Object"],
  ];
  for (const [expr, message] of errors) it(`refuses ${JSON.stringify(expr)}`, async () => expect(await refusal(expr)).toBe(message));

  it("a pipeline-style update cannot store a name with '.' (tetradb's stored field names)", async () => {
    const c = await file.seed([{ _id: 1, a: 1 }], 'su');
    const res = await mql('updateOne', { collection: c, filter: { _id: 1 }, update: [{ $replaceWith: { $setField: { field: 'a.b', input: '$$ROOT', value: 2 } } }] });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(await file.all(c)).toEqual([{ _id: 1, a: 1 }]);
    const ok = await mql('updateOne', { collection: c, filter: { _id: 1 }, update: [{ $replaceWith: { $setField: { field: 'b', input: '$$ROOT', value: 2 } } }] });
    expect(ok.body.modifiedCount).toBe(1);
    expect(await file.all(c)).toEqual([{ _id: 1, a: 1, b: 2 }]);
  });

  it('agrees with mingo on random documents', async () => {
    const rand = seededRandom(5);
    const docs = Array.from({ length: 100 }, (_, i) => {
      const d: Record<string, unknown> = { _id: i };
      for (const k of ['a', 'b', 'c']) if (rand() < 0.6) d[k] = randomInt(rand, 0, 9);
      return d;
    });
    const project = { _id: 1, set: { $setField: { field: 'b', input: '$$ROOT', value: { $add: [1, 2] } } }, unset: { $unsetField: { field: 'a', input: '$$ROOT' } }, removed: { $setField: { field: 'c', input: '$$ROOT', value: '$$REMOVE' } } };
    const c = await file.seed(docs, 'sf');
    const res = await mql('aggregate', { collection: c, pipeline: [{ $project: project }, { $sort: { _id: 1 } }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents).toEqual(aggregate(docs, [{ $project: project }, { $sort: { _id: 1 } }]));
  });
});

describe('$rand', () => {
  it("the manual: a random amount per document, each a double in [0, 1) drawn afresh", async () => {
    const docs = Array.from({ length: 50 }, (_, i) => ({ _id: i }));
    const c = await file.seed(docs, 'rnd');
    const res = await mql('aggregate', { collection: c, pipeline: [{ $set: { r: { $rand: {} }, again: { $rand: {} }, amount: { $multiply: [{ $rand: {} }, 100] } } }] });
    expect(res.status, res.text).toBe(200);
    const rows = res.body.documents as Array<{ r: number; again: number; amount: number }>;
    for (const row of rows) {
      for (const v of [row.r, row.again]) expect(v >= 0 && v < 1).toBe(true);
      expect(row.amount >= 0 && row.amount < 100).toBe(true);
    }
    expect(new Set(rows.map((d) => d.r)).size).toBe(rows.length);
    expect(rows.some((d) => d.r !== d.again)).toBe(true);
  });
  it('in $match through $expr, about half the documents', async () => {
    const c = await file.seed(Array.from({ length: 400 }, (_, i) => ({ _id: i })), 'rm');
    const res = await mql('aggregate', { collection: c, pipeline: [{ $match: { $expr: { $lt: [0.5, { $rand: {} }] } } }, { $count: 'n' }] });
    expect(res.body.documents[0].n).toBeGreaterThan(120);
    expect(res.body.documents[0].n).toBeLessThan(280);
  });
  it('in a find filter and a count, one draw per document', async () => {
    const c = await file.seed(Array.from({ length: 400 }, (_, i) => ({ _id: i })), 'rf');
    const found = await mql('find', { collection: c, filter: { $expr: { $lt: [{ $rand: {} }, 0.5] } }, limit: 1000 });
    expect(found.body.documents.length).toBeGreaterThan(120);
    expect(found.body.documents.length).toBeLessThan(280);
    const counted = await mql('countDocuments', { collection: c, filter: { $expr: { $lt: [{ $rand: {} }, 0.5] } } });
    expect(counted.body.count).toBeGreaterThan(120);
    expect(counted.body.count).toBeLessThan(280);
  });
  it('in the filter of updateMany and deleteMany, one draw per document: a write re-tests its matches with the same draws', async () => {
    // 400 documents at a rate of one half: 200 expected, sd 10; the bands are 6 sd. Drawing
    // afresh at the write's re-test passed a quarter (97 in a run).
    const u = await file.seed(Array.from({ length: 400 }, (_, i) => ({ _id: i })), 'rwu');
    const updated = await mql('updateMany', { collection: u, filter: { $expr: { $lt: [{ $rand: {} }, 0.5] } }, update: { $set: { picked: true } } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.modifiedCount).toBeGreaterThan(140);
    expect(updated.body.modifiedCount).toBeLessThan(260);
    expect((await mql('countDocuments', { collection: u, filter: { picked: true } })).body.count).toBe(updated.body.modifiedCount);
    const d = await file.seed(Array.from({ length: 400 }, (_, i) => ({ _id: i })), 'rwd');
    const deleted = await mql('deleteMany', { collection: d, filter: { $expr: { $lt: [{ $rand: {} }, 0.5] } } });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body.deletedCount).toBeGreaterThan(140);
    expect(deleted.body.deletedCount).toBeLessThan(260);
    expect((await mql('countDocuments', { collection: d, filter: {} })).body.count).toBe(400 - deleted.body.deletedCount);
  });
  it('in a pipeline-style update, a draw per document', async () => {
    const c = await file.seed(Array.from({ length: 20 }, (_, i) => ({ _id: i })), 'ru');
    const res = await mql('updateMany', { collection: c, filter: {}, update: [{ $set: { r: { $rand: {} } } }] });
    expect(res.body.modifiedCount).toBe(20);
    const rs = (await file.all(c)).map((d: { r: number }) => d.r);
    expect(rs.every((r: number) => r >= 0 && r < 1)).toBe(true);
    expect(new Set(rs).size).toBe(20);
  });
  it('refuses arguments', async () => {
    expect(await refusal({ $rand: { seed: 1 } })).toBe('$rand does not currently accept arguments');
    expect(await refusal({ $rand: 1 })).toBe('invalid parameter: expected an object ($rand)');
  });
});

describe('$binarySize, $bsonSize', () => {
  it('jstests binarySize.js: UTF-8 bytes of strings; null and missing give null', async () => {
    const docs = [{ _id: 0, x: '' }, { _id: 1, x: 'abc' }, { _id: 2, x: 'ab\u0000c' }, { _id: 3, x: 'é😀' }, { _id: 6, x: null }, { _id: 7 }];
    const c = await file.seed(docs, 'bin');
    const res = await mql('aggregate', { collection: c, pipeline: [{ $sort: { _id: 1 } }, { $project: { s: { $binarySize: '$x' } } }] });
    expect(res.body.documents).toEqual([{ _id: 0, s: 0 }, { _id: 1, s: 3 }, { _id: 2, s: 4 }, { _id: 3, s: 6 }, { _id: 6, s: null }, { _id: 7, s: null }]);
    expect(await refusal({ $binarySize: '$x' }, { _id: 1, x: 42 })).toBe('$binarySize requires a string or BinData argument, found: int');
  });

  /** A document as BSON with tetradb's typing (docs/mql.md, Types), for the bson package to size. */
  const typed = (v: unknown): unknown => {
    if (typeof v === 'number') return Number.isInteger(v) && !Object.is(v, -0) && Math.abs(v) <= 2 ** 31 && v >= -(2 ** 31) && v < 2 ** 31 ? new Int32(v) : Number.isSafeInteger(v) ? Long.fromNumber(v) : new Double(v);
    if (Array.isArray(v)) return v.map(typed);
    if (v !== null && typeof v === 'object' && !(v instanceof Date)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typed(x)]));
    return v;
  };

  it("the manual's employees: $bsonSize of $$ROOT, as the bson package sizes the same typed document", async () => {
    const EMPLOYEES = [
      { _id: 1, name: 'Alice', email: 'alice@company.com', position: 'Software Developer', current_task: { project_id: 1, project_name: 'Auditing', project_duration: 5, hours: 20 } },
      { _id: 2, name: 'Bob', email: 'bob@company.com', position: 'Sales', current_task: { project_id: 2, project_name: 'Marketing', project_duration: 4, hours: 18.5 } },
      { _id: 3, name: 'Charlie', email: 'charlie@company.com', position: 'HR (Onboarding)', current_task: null },
      { _id: 4, name: 'Dianne', email: 'diane@company.com', position: 'Web Designer', current_task: { project_id: 3, project_name: 'Web Design', project_duration: 2 ** 40, hours: [1, -0.5, 'x', true, null] } },
    ];
    const c = await file.seed(EMPLOYEES, 'emp');
    const res = await mql('aggregate', { collection: c, pipeline: [{ $sort: { _id: 1 } }, { $project: { name: 1, object_size: { $bsonSize: '$$ROOT' }, task_size: { $bsonSize: '$current_task' } } }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents).toEqual(EMPLOYEES.map((e) => ({ _id: e._id, name: e.name, object_size: calculateObjectSize(typed(e) as object), task_size: e.current_task === null ? null : calculateObjectSize(typed(e.current_task) as object) })));
  });

  it('dates are BSON dates (8 bytes)', async () => {
    const c = await file.seed([{ _id: 1, at: { $date: '2024-01-31T12:00:00Z' } }], 'bd');
    const res = await mql('aggregate', { collection: c, pipeline: [{ $project: { _id: 0, n: { $bsonSize: '$$ROOT' } } }] });
    expect(res.body.documents).toEqual([{ n: calculateObjectSize({ _id: new Int32(1), at: new Date('2024-01-31T12:00:00Z') }) }]);
  });

  it('jstests bsonSize.js: the argument must be a document', async () => {
    for (const [bad, type] of [[123, 'int'], ['abc', 'string'], [[123, 456], 'array']] as const) {
      expect(await refusal({ $bsonSize: { $literal: bad } })).toBe(`$bsonSize requires a document input, found: ${type}`);
    }
    expect(await value({ $bsonSize: null })).toBeNull();
  });
});

describe('through a computed find projection', () => {
  it('computes the new operators per document', async () => {
    const c = await file.seed([{ _id: 1, deg: 90, s: 'a1b22', doc: { k: 1 } }, { _id: 2, deg: 0, s: '', doc: null }], 'fp');
    const res = await mql('find', {
      collection: c,
      filter: {},
      sort: { _id: 1 },
      projection: { sin: { $sin: { $degreesToRadians: '$deg' } }, digits: { $regexFindAll: { input: '$s', regex: '\\d+' } }, withId: { $setField: { field: 'id', input: '$doc', value: '$_id' } }, bytes: { $binarySize: '$s' }, size: { $bsonSize: '$doc' }, r: { $lt: [{ $rand: {} }, 1] } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents).toEqual([
      { _id: 1, sin: Math.sin(Math.PI / 2), digits: [{ match: '1', idx: 1, captures: [] }, { match: '22', idx: 3, captures: [] }], withId: { k: 1, id: 1 }, bytes: 5, size: calculateObjectSize({ k: new Int32(1) }), r: true },
      { _id: 2, sin: 0, digits: [], withId: null, bytes: 0, size: null, r: true },
    ]);
  });
});
