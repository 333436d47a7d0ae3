// For the unit suite (scripts/run-tests.mjs imports it after tsx): mujoco-js is loaded as it is, not through tsx.
// tsx hands every module it loads through its own decoding and scan; mujoco-js is one file of 11 MB (its WebAssembly
// as a base64 string), which took ~0.8 s of every test process that starts a simulator (~70 files), against ~0.1 s
// loaded as plain JavaScript (it is plain JavaScript: nothing in it needs compiling). Hooks registered later run
// first, so the loader below answers for that one file before tsx's. A test file run alone without it loads the same
// module, only slower.
import { register } from 'node:module';

register('./mujoco-load.mjs', import.meta.url);
