// For tests only: a process started with NODE_OPTIONS=--import=<this file> faults when it gets SIGUSR2, as a defect of
// armgate's own code would, with nothing in armgate's code changed for it: ARMGATE_TEST_FAULT=throw (the default)
// throws from a timer (an 'uncaughtException'), =reject rejects a promise nobody handles (an 'unhandledRejection'),
// =twice throws from a timer and again as the first fault is being handled (a second fault on the way out). See
// tests/server/fatal.test.ts and tests/ros2/faults.test.ts.
const mode = process.env.ARMGATE_TEST_FAULT ?? 'throw';
// A careless error message may carry a secret: the token, when the process has one, is in the fault's.
const token = process.env.ARMGATE_TOKEN ? ` with the token ${process.env.ARMGATE_TOKEN} in it` : '';

process.on('SIGUSR2', () => {
  if (mode === 'reject') {
    setTimeout(() => {
      void Promise.reject(new Error('injected rejection (tests/support/fault-hook.mjs)'));
    }, 0);
    return;
  }
  if (mode === 'twice')
    // Registered before armgate's own listener's first run ends: the second fault comes while the first is handled.
    process.once('uncaughtException', () =>
      queueMicrotask(() => {
        throw new Error('injected second fault (tests/support/fault-hook.mjs)');
      }),
    );
  setTimeout(() => {
    throw new Error(`injected fault (tests/support/fault-hook.mjs)${token}`);
  }, 0);
});
