/**
 * The preferred number series of $bucketAuto's `granularity` (manual: $bucketAuto, Granularity):
 * the Renard series R5-R80, 1-2-5, the E series E6-E192 and POWERSOF2. roundUp gives the smallest
 * number of the series (times a power of 10) strictly above a value, roundDown the largest
 * strictly below it; 0 rounds to 0. The series and the scaling steps are MongoDB's
 * (granularity_rounder_preferred_numbers), so boundaries come out as the same doubles.
 */

import { bsonTypeOf } from '../../values.js';
import { stageError } from '../stage.js';

const SERIES: Readonly<Record<string, readonly number[]>> = {
  R5: [10, 16, 25, 40, 63],
  R10: [100, 125, 160, 200, 250, 315, 400, 500, 630, 800],
  R20: [100, 112, 125, 140, 160, 180, 200, 224, 250, 280, 315, 355, 400, 450, 500, 560, 630, 710, 800, 900],
  R40: [100, 106, 112, 118, 125, 132, 140, 150, 160, 170, 180, 190, 200, 212, 224, 236, 250, 265, 280, 300, 315, 355, 375, 400, 425, 450, 475, 500, 530, 560, 600, 630, 670, 710, 750, 800, 850, 900, 950],
  R80: [103, 109, 115, 122, 128, 136, 145, 155, 165, 175, 185, 195, 206, 218, 230, 243, 258, 272, 290, 307, 325, 345, 365, 387, 412, 437, 462, 487, 515, 545, 575, 615, 650, 690, 730, 775, 825, 875, 925, 975],
  '1-2-5': [10, 20, 50],
  E6: [10, 15, 22, 33, 47, 68],
  E12: [10, 12, 15, 18, 22, 27, 33, 39, 47, 56, 68, 82],
  E24: [10, 11, 12, 13, 15, 16, 18, 20, 22, 24, 27, 30, 33, 36, 39, 43, 47, 51, 56, 62, 68, 75, 82, 91],
  E48: [100, 105, 110, 115, 121, 127, 133, 140, 147, 154, 162, 169, 178, 187, 196, 205, 215, 226, 237, 249, 261, 274, 287, 301, 316, 332, 348, 365, 383, 402, 422, 442, 464, 487, 511, 536, 562, 590, 619, 649, 681, 715, 750, 787, 825, 866, 909, 953],
  E96: [
    100, 102, 105, 107, 110, 113, 115, 118, 121, 124, 127, 130, 133, 137, 140, 143, 147, 150, 154, 158, 162, 165, 169, 174, 178, 182, 187, 191, 196, 200, 205, 210, 215, 221, 226, 232, 237, 243, 249, 255, 261, 267,
    274, 280, 287, 294, 301, 309, 316, 324, 332, 340, 348, 357, 365, 374, 383, 392, 402, 412, 422, 432, 442, 453, 464, 475, 487, 499, 511, 523, 536, 549, 562, 576, 590, 604, 619, 634, 649, 665, 681, 698, 715, 732,
    750, 768, 787, 806, 825, 845, 866, 887, 909, 931, 953, 976,
  ],
  E192: [
    100, 101, 102, 104, 105, 106, 107, 109, 110, 111, 113, 114, 115, 117, 118, 120, 121, 123, 124, 126, 127, 129, 130, 132, 133, 135, 137, 138, 140, 142, 143, 145, 147, 149, 150, 152, 154, 156, 158, 160, 162, 164,
    165, 167, 169, 172, 174, 176, 178, 180, 182, 184, 187, 189, 191, 193, 196, 198, 200, 203, 205, 208, 210, 213, 215, 218, 221, 223, 226, 229, 232, 234, 237, 240, 243, 246, 249, 252, 255, 258, 261, 264, 267, 271,
    274, 277, 280, 284, 287, 291, 294, 298, 301, 305, 309, 312, 316, 320, 324, 328, 332, 336, 340, 344, 348, 352, 357, 361, 365, 370, 374, 379, 383, 388, 392, 397, 402, 407, 412, 417, 422, 427, 432, 437, 442, 448,
    453, 459, 464, 470, 475, 481, 487, 493, 499, 505, 511, 517, 523, 530, 536, 542, 549, 556, 562, 569, 576, 583, 590, 597, 604, 612, 619, 626, 634, 642, 649, 657, 665, 673, 681, 690, 698, 706, 715, 723, 732, 741,
    750, 759, 768, 777, 787, 796, 806, 816, 825, 835, 845, 856, 866, 876, 887, 898, 909, 920, 931, 942, 953, 965, 976, 988,
  ],
};

export interface GranularityRounder {
  roundUp(v: number): number;
  roundDown(v: number): number;
}

/** Checks a value a rounder is given: a non-negative finite number. @throws QUERY_ERROR naming $bucketAuto */
function checked(v: unknown): number {
  if (typeof v !== 'number') stageError('$bucketAuto', `A granularity rounder can only round numeric values, but found type: ${bsonTypeOf(v)}`);
  if (Number.isNaN(v)) stageError('$bucketAuto', 'A granularity rounder cannot round NaN');
  if (v < 0) stageError('$bucketAuto', 'A granularity rounder can only round non-negative numbers');
  return v;
}

function preferred(series: readonly number[]): GranularityRounder {
  const first = series[0]!;
  const last = series[series.length - 1]!;
  return {
    roundUp(value) {
      const n = checked(value);
      if (n === 0 || n === Infinity) return n;
      let multiplier = 1;
      while (n >= last * multiplier) multiplier *= 10;
      while (n < first * multiplier) {
        const previousMin = first * multiplier;
        multiplier /= 10;
        // Between the previous scale's first number and this scale's last: the former.
        if (n >= last * multiplier) return previousMin;
      }
      for (const s of series) if (n < s * multiplier) return s * multiplier;
      return last * multiplier;
    },
    roundDown(value) {
      const n = checked(value);
      if (n === 0 || n === Infinity) return n;
      let multiplier = 1;
      while (n <= first * multiplier) multiplier /= 10;
      while (n > last * multiplier) {
        const previousMax = last * multiplier;
        multiplier *= 10;
        if (n <= first * multiplier) return previousMax;
      }
      let below = first * multiplier;
      for (const s of series) {
        if (s * multiplier < n) below = s * multiplier;
        else break;
      }
      return below;
    },
  };
}

/** Integers (int and long) count bits as MongoDB's integer path does; other numbers use log2. */
const POWERS_OF_TWO: GranularityRounder = {
  roundUp(value) {
    const n = checked(value);
    if (n === 0) return 0;
    const exp = bsonTypeOf(n) === 'double' ? Math.floor(Math.log2(n)) + 1 : BigInt(n).toString(2).length;
    return 2 ** exp;
  },
  roundDown(value) {
    const n = checked(value);
    if (n === 0) return 0;
    if (bsonTypeOf(n) === 'double') return 2 ** (Math.ceil(Math.log2(n)) - 1);
    const bits = BigInt(n).toString(2);
    // A power of two rounds down to the one below it.
    return 2 ** (bits.length - 1 - (/^10*$/.test(bits) ? 1 : 0));
  },
};

/** The rounder of a granularity name. @throws QUERY_ERROR for an unknown one */
export function granularityRounder(name: string): GranularityRounder {
  if (name === 'POWERSOF2') return POWERS_OF_TWO;
  const series = Object.hasOwn(SERIES, name) ? SERIES[name] : undefined;
  if (series === undefined) stageError('$bucketAuto', `Unknown rounding granularity '${name}'`);
  return preferred(series);
}
