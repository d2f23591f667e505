// `node --import ./lib/ts-register.mjs x.bench.ts`: TypeScript as npm start compiles it (see ts-hooks.mjs).
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);
