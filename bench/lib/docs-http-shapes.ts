// Request shapes of the documents-over-HTTP benchmark (docs-http.bench.ts) that its PostgreSQL peer
// (servers/pg-docs-server.ts) recognises by value: the peer answers exactly these and refuses
// anything else, so the two files share them rather than each spelling them out. The SQL whose
// plan the benchmark prints (find-partial's) is here too, so the plan shown is the statement run.

/** The partial index of `find-partial` holds the documents of this age and over (~13/60 of them). */
export const SENIOR_AGE = 65;

/** tetradb's partialFilterExpression for that index; every find-partial query repeats it (so implies it). */
export const SENIOR_FILTER = { 'profile.age': { $gte: SENIOR_AGE } } as const;

/** How many documents a find-partial asks for, in `_id` order. */
export const PARTIAL_LIMIT = 20;

/** The name of the partial index in both stores. */
export const SENIOR_INDEX = 'senior_city';

/**
 * find-partial in SQL: the partial expression index's key and predicate, written the same way so
 * the planner can match both. The age bound is a literal, not a parameter: PostgreSQL proves that
 * a query implies an index predicate from constants only (a generic plan with `$2 >= 65` could not
 * use the index).
 */
export function seniorIndexSql(table: string): string {
  return `CREATE INDEX ${table}_${SENIOR_INDEX} ON ${table} ((doc->'profile'->>'city'), id) WHERE (doc->'profile'->>'age')::int >= ${SENIOR_AGE}`;
}
export function seniorByCitySql(table: string): string {
  return `SELECT doc FROM ${table} WHERE doc->'profile'->>'city' = $1 AND (doc->'profile'->>'age')::int >= ${SENIOR_AGE} ORDER BY id LIMIT $2`;
}

/**
 * find-computed's projection (MongoDB 4.4+ computed fields): the email, a label made from the name
 * and city, and the decade of the age. Every generated document has these fields, so no value is
 * ever null or missing (where MongoDB would leave `email` out and SQL give null).
 */
export const COMPUTED_PROJECTION = {
  _id: 0,
  email: 1,
  label: { $concat: ['$name', ' (', '$profile.city', ')'] },
  decade: { $multiply: [{ $floor: { $divide: ['$profile.age', 10] } }, 10] },
} as const;

/** The score from which update-pipeline's second stage labels a document "gold". */
export const GOLD_SCORE = 100;

/**
 * update-pipeline's update: `score` grows by the document's age (created by the first update, as
 * $ifNull gives 0 for a missing field), then a second stage reads the new score to set `level`.
 * Each update changes the document (ages are 18-77), so each is a durable write.
 */
export const SCORE_PIPELINE = [
  { $set: { score: { $add: [{ $ifNull: ['$score', 0] }, '$profile.age'] } } },
  { $set: { level: { $cond: [{ $gte: ['$score', GOLD_SCORE] }, 'gold', 'basic'] } } },
] as const;
