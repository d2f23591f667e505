// The vector store: embedders (ONNX all-MiniLM-L6-v2 and a lexical fallback), the HNSW index
// written here, and the service that keeps records in a tenant's trees with a graph per namespace.
export { VECTOR_LIMITS, HNSW_LIMITS } from './vector-limits.js';
export { HnswIndex, type HnswHit, type HnswOptions } from './hnsw-index.js';
export {
  VectorService,
  validateVectorId,
  type DeleteInput,
  type QueryInput,
  type TextEmbedder,
  type VectorInput,
  type VectorMatch,
  type VectorServiceOptions,
} from './vector-service.js';
export type { QueryPath } from './vector-namespace.js';
export { loadEmbedder, createFallbackEmbedder, fetchModel, FALLBACK_EMBEDDER_ID, type Embedder, type EmbedderChoice, type OnnxEmbedderOptions } from './embedder/index.js';
