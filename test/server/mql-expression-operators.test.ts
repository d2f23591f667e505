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
