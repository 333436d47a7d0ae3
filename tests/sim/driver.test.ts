/**
 * The simulation driver's clock of the state: a joint state is stamped with the time its state was
 * current (the last controller update), not the time it is sent. A tick that takes long on a loaded
 * machine must not make a state look newer than it is (the dead-man and pause tests read accelerations
 * from the stamps of consecutive joint states).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SteppedClock } from '../../lib/clock.ts';
import { SimDriver } from '../../lib/sim/driver.ts';

const START_MS = 1000;

/** A driver whose every update takes `stepWallMs` of wall time; remembers the sim time of the last update. */
function slowDriver(timeScale: number, stepWallMs: number) {
  const clock = new SteppedClock(START_MS, 1.7e12);
  const updates: number[] = [];
  const driver = new SimDriver(clock, timeScale, 500, (nowS) => {
    updates.push(nowS);
    clock.skip(stepWallMs);
    return true;
  });
  /** Wall ms since the last update's sim time. */
  const sinceLastUpdateMs = () => ((clock.nowMs() - START_MS) / 1000 - (updates.at(-1) ?? 0) / timeScale) * 1000;
  return { clock, updates, driver, sinceLastUpdateMs };
}

describe('SimDriver.stateAgeMs', () => {
  for (const timeScale of [1, 0.5, 2]) {
    it(`time_scale ${timeScale}: the wall time since the last update after a slow tick, 0 while asleep`, () => {
      const { clock, updates, driver, sinceLastUpdateMs } = slowDriver(timeScale, 1);
      assert.equal(driver.stateAgeMs(), 0, 'asleep: the state holds now');
      driver.wake();
      try {
        clock.skip(20);
        driver.tick();
        assert.ok(updates.length >= 4, `${updates.length} updates`);
        // The tick's updates took 1 ms of wall each: the state is that much older than the clock.
        assert.ok(sinceLastUpdateMs() >= updates.length - 1e-6);
        assert.ok(
          Math.abs(driver.stateAgeMs() - sinceLastUpdateMs()) < 1e-6,
          `age ${driver.stateAgeMs()} ms, since the last update ${sinceLastUpdateMs()} ms`,
        );
      } finally {
        driver.sleep();
      }
      assert.equal(driver.stateAgeMs(), 0);
    });
  }
});
