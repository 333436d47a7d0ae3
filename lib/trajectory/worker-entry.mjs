// Entry of the trajectory worker thread where the sources run under tsx (npm start runs a compiled bundle of
// worker.ts instead: scripts/start.mjs, worker-pool.ts). Node runs no TypeScript in a worker by itself and a
// worker does not inherit the main thread's module hooks, so register tsx here (as the tests'
// servers do) before loading the worker module.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
