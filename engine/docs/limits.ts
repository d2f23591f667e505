/** Bounds of the document model; each one is named in the error it causes and in docs/mql.md. */
export const DOCS_LIMITS = {
  /** Nesting of objects and arrays in a document, the top-level document being level 1 (MongoDB's limit). */
  maxDocumentDepth: 100,
  /** Nesting of $and/$or/$nor/$not/$elemMatch in a filter. */
  maxFilterDepth: 100,
  /**
   * Nesting that ejson conversion walks before refusing: above every semantic limit, it only keeps
   * a hostile body (a megabyte of "[") from overflowing the stack before validation runs.
   */
  maxJsonDepth: 512,
  /** Keys in a sort specification (MongoDB's limit). */
  maxSortKeys: 32,
  /** Highest array index an update may create by padding with nulls (MongoDB's limit). */
  maxArrayPadding: 1_500_000,
} as const;
