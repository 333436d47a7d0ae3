/** A stepped arm for the jog engine's tests: the engine's command followed by the simulator's drive, period by period. */
import { JogEngine, type JogGuards, type JogLimit, type JogEndReason, type JogSpeeds } from '../../lib/motion/jog.ts';
import { createSample, type JointSample } from '../../lib/planning/trajectory.ts';
import { createClipInfo, driveStep } from '../../lib/sim/drive.ts';
import type { Chain } from '../../lib/kinematics/chain.ts';
import type { JointLimits } from '../../lib/robot/limits.ts';
import { createFkWorkspace, forwardKinematics } from '../../lib/kinematics/fk.ts';

export const DT = 0.002;
export const SPEEDS: JogSpeeds = { jointSpeed: 0.25, tcpSpeedMS: 0.25, tcpAngularSpeedRadS: 0.5 };

export interface Trace {
  readonly t: number[];
  readonly q: number[][];
  readonly qd: number[][];
  readonly tcp: number[][];
  readonly rot: number[][];
  readonly limits: (JogLimit | undefined)[];
  ended: JogEndReason | undefined;
  endedAt: number | undefined;
  clipped: number;
}

export class SteppedArm {
  readonly engine: JogEngine;
  readonly state: JointSample;
  private readonly out: JointSample;
  private readonly limits: JointLimits;
  private readonly chain: Chain;
  nowS = 0;
  rate = 1;
  private readonly fk;

  constructor(chain: Chain, limits: JointLimits, q0: readonly number[], guards: JogGuards = {}, speeds = SPEEDS) {
    this.engine = new JogEngine(chain, limits, speeds, guards);
    this.state = createSample(limits.jointNames.length);
    this.state.q.set(q0);
    this.out = createSample(limits.jointNames.length);
    this.limits = limits;
    this.chain = chain;
    this.fk = createFkWorkspace(chain);
  }

  tcp(q: ArrayLike<number> = this.state.q): { pos: number[]; rot: number[] } {
    forwardKinematics(this.chain, q, this.fk);
    return { pos: Array.from(this.fk.tipPos), rot: Array.from(this.fk.tipRot) };
  }

  /** Runs `seconds` of periods (or until the jog ends with `untilEnd`), calling `each` before every period. */
  run(seconds: number, options: { untilEnd?: boolean; each?: (t: number) => void } = {}): Trace {
    const trace: Trace = {
      t: [],
      q: [],
      qd: [],
      tcp: [],
      rot: [],
      limits: [],
      ended: undefined,
      endedAt: undefined,
      clipped: 0,
    };
    const clip = createClipInfo();
    const steps = Math.round(seconds / DT);
    for (let k = 0; k < steps; k++) {
      options.each?.(this.nowS);
      this.nowS += DT;
      const report = this.engine.step(this.state, this.nowS, DT, this.rate, this.out);
      if (!driveStep(this.state, this.out, this.limits, DT, clip)) trace.clipped++;
      const { pos, rot } = this.tcp();
      trace.t.push(this.nowS);
      trace.q.push(Array.from(this.state.q));
      trace.qd.push(Array.from(this.state.qd));
      trace.tcp.push(pos);
      trace.rot.push(rot);
      trace.limits.push(report.limit);
      if (report.ended && trace.ended === undefined) {
        trace.ended = report.ended;
        trace.endedAt = this.nowS;
        if (options.untilEnd) break;
      }
    }
    return trace;
  }
}
