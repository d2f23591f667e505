/** Limits of the vector endpoints (docs/api.md, Vector). */
export const VECTOR_LIMITS = {
  /** Record ids: UTF-8 bytes (hosted stores allow 512). */
  maxIdBytes: 512,
  /** Text to embed: UTF-8 bytes (the model reads at most its first 256 tokens). */
  maxTextBytes: 64 * 1024,
  /** Metadata: encoded bytes of the object (Pinecone allows 40 KB per record). */
  maxMetadataBytes: 40 * 1024,
  /** Metadata nesting depth, the object itself being level 1. */
  maxMetadataDepth: 20,
  /** Namespace names: UTF-8 bytes; '' is the default namespace. */
  maxNamespaceBytes: 64,
  maxNamespaces: 1000,
  maxTopK: 1000,
  defaultTopK: 10,
  /** Records in one upsertMany (embedded in batches). */
  maxUpsertMany: 1000,
  /** Ids in one delete by ids. */
  maxDeleteIds: 1000,
  defaultListLimit: 100,
  maxListLimit: 1000,
} as const;

/** HNSW parameters a namespace may set (defaults: M 16, efConstruction 200, efSearch adaptive). */
export const HNSW_LIMITS = {
  M: { min: 4, max: 64, default: 16 },
  efConstruction: { min: 10, max: 1000, default: 200 },
  /** 0 = adaptive to topK. */
  efSearch: { min: 0, max: 4000, default: 0 },
} as const;
