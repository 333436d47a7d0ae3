// For tests only: a process started with NODE_OPTIONS=--import=<this file> starts a `sleep 120`
// child in its own process group and leaves it running, as a careless helper of the runner would;
// see the "leaves no process behind" test in tests/http/sequences.test.ts.
import { spawn } from 'node:child_process';

spawn('sleep', ['120'], { stdio: 'ignore' }).unref();
