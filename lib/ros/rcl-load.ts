import { err, ok, type Result } from '../result.ts';
import { PROJECT_ROOT } from '../settings/resolve.ts';
import { asRclModule, type RclModule } from './rclnodejs-api.ts';

/** The package name, kept in a variable so type checking never needs the optional package. */
const RCLNODEJS = 'rclnodejs';

/** How to get what `robot.backend: ros2` needs, in one sentence. */
export const ROS2_HOWTO =
  `to get both here, run \`npm run ros2:build\` in ${PROJECT_ROOT} (a ROS 2 Jazzy core built offline, then rclnodejs ` +
  'against it; 9-42 min cold), then `. scripts/ros2/env.sh` in this shell and start armgate from it; with an installed ' +
  'ROS 2 instead, source /opt/ros/<distro>/setup.bash and run `npm install` (docs/ros2.md)';

/** Imports a module by name (the default: Node's dynamic import). */
export type Importer = (specifier: string) => Promise<unknown>;

const nodeImport: Importer = (specifier) => import(specifier);

function installed(): boolean {
  try {
    import.meta.resolve(RCLNODEJS);
    return true;
  } catch {
    return false;
  }
}

/**
 * Loads rclnodejs for `robot.backend: ros2`. It needs a sourced ROS 2 (ROS_DISTRO and
 * AMENT_PREFIX_PATH set) and the package built against it; when either is missing the error is
 * one message saying what is missing and how to get both.
 */
export async function loadRclnodejs(
  env: Readonly<Record<string, string | undefined>>,
  importer: Importer = nodeImport,
): Promise<Result<RclModule, string>> {
  const problems: string[] = [];
  const unset = ['ROS_DISTRO', 'AMENT_PREFIX_PATH'].filter((k) => !env[k]);
  if (unset.length > 0) {
    problems.push(`${unset.join(' and ')} ${unset.length > 1 ? 'are' : 'is'} not set (no ROS 2 sourced)`);
    // Without ROS 2 the native addon cannot load; only say whether the package is there.
    if (importer === nodeImport && !installed()) problems.push('the rclnodejs package is not installed');
  } else {
    try {
      const module = asRclModule(await importer(RCLNODEJS));
      if (module) {
        // rclnodejs installs a SIGINT handler on import that shuts every context down; it would run
        // before armgate's own (which cancels the goals in flight, then destroys the node and shuts
        // down), which then worked on destroyed clients and exited 1. armgate's shutdown is the one.
        module.removeSignalHandlers?.();
        return ok(module);
      }
      problems.push('the rclnodejs package loaded but lacks init/Node/ActionClient (an unsupported version?)');
    } catch (e) {
      const message = e instanceof Error ? e.message.split('\n')[0] : String(e);
      problems.push(`rclnodejs cannot be loaded (${message})`);
    }
  }
  return err(
    `robot.backend 'ros2' needs a sourced ROS 2 and the rclnodejs package: ${problems.join('; ')}; ${ROS2_HOWTO}`,
  );
}
