// Entry of the trajectory worker thread. Node runs no TypeScript in a worker by itself and a
// worker does not inherit the main thread's module hooks, so register tsx here (as `npm start`
// and the tests use it) before loading the worker module.
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
