// The document model's pure core: values and their BSON order, Extended JSON dates, dot paths,
// the MQL filter compiler and its AST, update operators, projections, sorts, ids and document
// validation. No storage here: the collection layer applies these to stored documents.
export { DOCS_LIMITS } from './limits.js';
export {
  MISSING,
  TYPE_BRACKET,
  bsonTypeOf,
  cloneValue,
  compareStrings,
  compareValues,
  getOwn,
  isPlainObject,
  setOwn,
  typeBracket,
  valuesEqual,
  type BsonType,
  type Doc,
  type Missing,
} from './values.js';
export { fromJson, parseIsoDate, toJson, type FromJsonOptions } from './ejson.js';
export { compileLet, type LetOptions, type LetVariables } from './let-variables.js';
export { collectValues, getPathValue, isArrayIndex, parsePath, type LeafArrays } from './path.js';
export { compileFilter, filterFields, parseFilter, topLevelConditions, type CompiledFilter } from './query/compile-filter.js';
export type {
  AndNode,
  BitsOp,
  BsonTypeAlias,
  ComparisonOp,
  ElemMatchOp,
  ElemMatchSpec,
  ExistsOp,
  FieldNode,
  FieldOp,
  FieldOpName,
  FilterNode,
  InOp,
  ModOp,
  NorNode,
  NotOp,
  OrNode,
  RegexOp,
  SizeOp,
  TypeOp,
} from './query/filter-ast.js';
export { compileUpdate, type ApplyOptions, type CompiledUpdate, type UpdateResult } from './update/compile-update.js';
export { buildUpsertDocument } from './update/upsert.js';
export { compileProjection, type CompiledProjection } from './projection.js';
export { compileSort, sortDocuments, type CompiledSort, type SortKey } from './sort.js';
export { isValidId, newObjectId } from './object-id.js';
export { documentFromJson, validateDocument, validateFields, type ValidateOptions } from './validate.js';
// The collection layer over a tenant's store: CRUD, indexes, the planner and TTL expiry.
export {
  DOCS_MODEL_LIMITS,
  docsAggregate,
  allowDiskUseOf,
  docsHintKeyPattern,
  docsCount,
  docsCreateIndex,
  docsCreateIndexes,
  docsDelete,
  docsDistinct,
  docsDropCollection,
  docsDropIndex,
  docsDropIndexes,
  docsExpireDue,
  docsExpiry,
  docsFind,
  docsFindNow,
  docsFindOneAndDelete,
  docsFindOneAndReplace,
  docsFindOneAndUpdate,
  docsFindOne,
  docsInsert,
  docsInsertCost,
  docsListCollections,
  docsListIndexes,
  docsNextExpiry,
  docsCollMod,
  docsCreateCollection,
  docsEstimatedCount,
  docsRenameCollection,
  docsReplace,
  docsUpdate,
  maxTimeMSOf,
  timeLimitExceeded,
  timeLimitOf,
  type CreateIndexOptions,
  type FindOptions,
  type FindDefaults,
  type MemorySettings,
  type QueryGuard,
  type TimeOptions,
  type FindAndModifyOutcome,
  type FindResult,
  type IndexDescription,
  type ReturnDocument,
  type UpdateOutcome,
  type Written,
} from './docs-model.js';
export { bulkWriteExpired, bulkWriteFailed, MAX_BULK_OPERATIONS, prepareBulkWrite, type BulkWriteError, type BulkWriteResult, type BulkWritten } from './bulk-write.js';
export { onValidationWarning, type ValidationWarning } from './collection-validator.js';
export { upgradeIdKeys } from './upgrade.js';
export { docsAggregateCursor, docsFindCursor, dropTemporaryCollections, newCursorInterrupt } from './docs-model.js';
export { batchSizeOf, CursorRegistry, cursorOfDocuments, DEFAULT_CURSOR_LIMITS, DEFAULT_FIRST_BATCH, MAX_BATCH_SIZE, type Batch, type BatchGuard, type CursorLimits, type OpenedCursor } from './cursors.js';
export { validateCollectionName } from './catalog.js';
export { compilePipeline, type CompiledPipeline } from './aggregate/pipeline.js';
export { AGGREGATE_LIMITS, IN_MEMORY_ONLY, type QueryMemory } from './aggregate/stage.js';
export { compileExpression, EXPRESSION_OPERATOR_NAMES } from './aggregate/expression/operator-table.js';
export { MAX_COLLECTION_NAME_BYTES } from './catalog.js';
export { MAX_ID_BYTES } from './doc-codec.js';
