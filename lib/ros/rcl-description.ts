/**
 * What the stack says of the robot, read once over its parameter service and kept: the SRDF's named positions of the
 * planning group, and the URDF (`robot_description`) of the node the SRDF is read from (MoveIt's move_group holds both).
 */
import { type GroupState, parseGroupStates } from '../robot/srdf.ts';
import { err, ok, type Result } from '../result.ts';
import type { InterfaceUnavailable } from './context.ts';
import { getParametersRequest, stringParameterFromRos } from './convert.ts';
import type { EndpointsFile } from '../settings/endpoints.ts';
import { type Iface, type RclCalls, rosName, unavailable } from './rcl-calls.ts';

export class RclDescription {
  readonly #calls: RclCalls;
  readonly #endpoints: EndpointsFile;
  #states: readonly GroupState[] | undefined;
  /** The stack's URDF once read. */
  #urdf: string | undefined;

  /** `states`: the named positions when the endpoints file gives them (an SRDF file), else read from the stack. */
  constructor(calls: RclCalls, endpoints: EndpointsFile, states: readonly GroupState[] | undefined) {
    this.#calls = calls;
    this.#endpoints = endpoints;
    this.#states = states;
  }

  /** The parameter service of `node`. */
  #service(node: string): Iface {
    return { name: `${rosName(node)}/get_parameters`, type: 'rcl_interfaces/srv/GetParameters' };
  }

  /** A string parameter of `node` through its parameter service: the call's outcome, then the parameter's. */
  async #parameter(node: string, name: string): Promise<Result<Result<string, string>, InterfaceUnavailable>> {
    const answer = await this.#calls.call(
      this.#service(node),
      `parameter service of ${node}`,
      getParametersRequest([name]),
      this.#endpoints.timeouts.server_wait_s * 1000,
    );
    return answer.ok ? ok(stringParameterFromRos(answer.value, name)) : answer;
  }

  /** The named positions of the planning group: the SRDF file's, or the SRDF parameter's of the stack (kept once read). */
  async groupStates(): Promise<Result<readonly GroupState[], InterfaceUnavailable>> {
    if (this.#states) return ok(this.#states);
    const srdf = this.#endpoints.srdf;
    if ('file' in srdf) return ok([]);
    const xml = await this.#parameter(srdf.node, srdf.parameter);
    if (!xml.ok) return xml;
    const states = xml.value.ok
      ? parseGroupStates(xml.value.value, this.#endpoints.planning_group, this.#endpoints.joint_names)
      : xml.value;
    if (!states.ok)
      return err(
        unavailable(
          this.#service(srdf.node).name,
          `SRDF from ${srdf.node} parameter ${srdf.parameter}: ${states.error}`,
        ),
      );
    this.#states = states.value;
    return ok(states.value);
  }

  /**
   * The stack's URDF: the `robot_description` string parameter of the node the SRDF is read from
   * (`srdf: {node: ...}` in the endpoints file, MoveIt's move_group holds both); without such a
   * node, unavailable (the endpoints file's robot_description is then the model). Kept once read.
   */
  async robotDescription(): Promise<Result<string, InterfaceUnavailable>> {
    if (this.#urdf !== undefined) return ok(this.#urdf);
    const srdf = this.#endpoints.srdf;
    if ('file' in srdf)
      return err(
        unavailable('robot_description', 'the SRDF comes from a file: no node to read robot_description from'),
      );
    const xml = await this.#parameter(srdf.node, 'robot_description');
    if (!xml.ok) return xml;
    if (!xml.value.ok)
      return err(unavailable(this.#service(srdf.node).name, `robot_description of ${srdf.node}: ${xml.value.error}`));
    this.#urdf = xml.value.value;
    return ok(this.#urdf);
  }
}
