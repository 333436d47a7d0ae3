import type { MainModule } from 'mujoco-js';

let loading: Promise<MainModule> | undefined;

/** Loads the MuJoCo WebAssembly module once per process (about 100 ms) and shares it. */
export function loadMujocoModule(): Promise<MainModule> {
  loading ??= import('mujoco-js').then((mod) => mod.default());
  return loading;
}
