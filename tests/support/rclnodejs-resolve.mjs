// Module resolution hook registered by rclnodejs-hook.mjs (tests only): `rclnodejs` is the stand-in the hook names.
let standin;

export function initialize(data) {
  standin = data.standin;
}

export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'rclnodejs') return { url: standin, shortCircuit: true };
  return nextResolve(specifier, context);
}
