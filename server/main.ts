// Placeholder until the HTTP service lands (issue: "The service"). It says so and exits non-zero,
// so nobody mistakes it for a running database.
process.stderr.write('tetradb: the HTTP service is not built yet; the storage engine is in engine/ (see README.md)\n');
process.exitCode = 1;
