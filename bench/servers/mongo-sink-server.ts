// Peer for bench/mongo-mirror.bench.ts: the stand-in MongoDB of the routing tests
// (test/helpers/mongo-standin.ts) in sink mode, in a process of its own: it acknowledges what the
// mirror sends and counts the documents (the `count` command) without keeping them, so the
// benchmark measures what mirroring costs tetradb, not what a store behind it costs.
import { startMongoStandIn } from '../../test/helpers/mongo-standin.js';

await startMongoStandIn({ sink: true, keepDb: 'tetra_mirror', port: Number(process.argv[2]) });
process.stdout.write('ready\n');
