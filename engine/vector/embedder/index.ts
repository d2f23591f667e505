// The embedding layer of the vector store: the public face of engine/vector/embedder.
export type { Embedder, EmbedderChoice, OnnxEmbedderOptions } from './embedder.js';
export { loadEmbedder } from './embedder.js';
export { createFallbackEmbedder, FALLBACK_DIMS, FALLBACK_EMBEDDER_ID } from './fallback-embedder.js';
export { createOnnxEmbedder, OnnxEmbedder } from './onnx-embedder.js';
export { fetchModel, type FetchModelOptions } from './model-fetch.js';
export { DEFAULT_MODEL_BASE_URL, DEFAULT_MODEL_DIR, MODEL_FILES } from './model-files.js';
export { loadWordPieceTokenizer, type WordPieceTokenizer } from './wordpiece-tokenizer.js';
