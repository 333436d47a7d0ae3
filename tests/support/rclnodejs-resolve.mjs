// Module resolution hook registered by rclnodejs-hook.mjs (tests only).
const standin = new URL('./rclnodejs-standin-remote.ts', import.meta.url).href;

export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'rclnodejs') return { url: standin, shortCircuit: true };
  return nextResolve(specifier, context);
}
