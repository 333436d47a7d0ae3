// Module load hook registered by mujoco-hook.mjs (tests only): mujoco-js's one file, read as the ES module it is.
import { readFile } from 'node:fs/promises';

const MUJOCO = /\/node_modules\/mujoco-js\/dist\/mujoco_wasm\.js$/;

export async function load(url, context, nextLoad) {
  const file = new URL(url);
  if (file.protocol === 'file:' && MUJOCO.test(file.pathname))
    return { format: 'module', source: await readFile(file.pathname, 'utf8'), shortCircuit: true };
  return nextLoad(url, context);
}
