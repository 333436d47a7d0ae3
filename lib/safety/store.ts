/**
 * The safety envelope of a configuration, as an app holds it (lib/app/services.ts): the trajectory check hands it to
 * the worker, GET /robot/safety and the MCP resource show it.
 */
import { type Chain, chainFromUrdf, withToolOffset } from '../kinematics/chain.ts';
import { matFromAbc } from '../kinematics/rotation.ts';
import { err, ok, type Result } from '../result.ts';
import type { Config } from '../settings/load.ts';
import { type Envelope, envelopeFromSettings } from './envelope.ts';

/** The envelope (undefined: none configured), the TCP chain it is checked on, and the life of a plan. */
export interface SafetyState {
  readonly envelope: Envelope | undefined;
  readonly chain: Chain;
  readonly planTtlS: number;
}

/** What of the configuration the safety state comes from. */
export type SafetyConfig = Pick<Config, 'safety' | 'endpoints' | 'robotDescriptionXml' | 'robot' | 'sim'>;

/**
 * The safety state of a configuration: the envelope of the `safety` block on the TCP chain of the
 * robot description (on the simulator with `sim.tool_offset`). An envelope whose chain cannot be
 * built (the TCP link is not in the description) is an error naming the keys.
 */
export function safetyStateFor(config: SafetyConfig): Result<SafetyState, string> {
  const envelope = envelopeFromSettings(config.safety);
  const { planning_frame, tcp_link, joint_names } = config.endpoints;
  const chain = chainFromUrdf(config.robotDescriptionXml, planning_frame, tcp_link, joint_names);
  if (!chain.ok) {
    if (envelope)
      return err(`safety: the envelope needs the TCP chain of the robot description (${tcp_link}): ${chain.error}`);
    const empty: Chain = {
      jointNames: [],
      originPos: new Float64Array(0),
      originRot: new Float64Array(0),
      axis: new Float64Array(0),
      tipPos: new Float64Array(3),
      tipRot: new Float64Array(9),
    };
    return ok({ envelope: undefined, chain: empty, planTtlS: config.safety.plan_ttl_s });
  }
  let tcp = chain.value;
  if (config.robot.backend === 'sim') {
    const t = config.sim.tool_offset;
    tcp = withToolOffset(tcp, Float64Array.from([t.x, t.y, t.z]), matFromAbc(new Float64Array(9), t.a, t.b, t.c));
  }
  return ok({ envelope, chain: tcp, planTtlS: config.safety.plan_ttl_s });
}
