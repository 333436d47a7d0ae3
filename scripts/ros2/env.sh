# Source this file (`. scripts/ros2/env.sh`, from bash, zsh or sh in the repository) to get the environment
# of the ROS 2 Jazzy core that `npm run ros2:build` built: AMENT_PREFIX_PATH, CMAKE_PREFIX_PATH,
# LD_LIBRARY_PATH, PYTHONPATH and PATH from the install's own setup.sh, plus ROS_DISTRO=jazzy,
# ROS_VERSION=2 and RMW_IMPLEMENTATION=rmw_cyclonedds_cpp (Cyclone DDS is the one middleware built); then,
# when it is built, the ros2_control overlay on it (its local_setup.sh: ros2_control_node, the controllers,
# robot_state_publisher, controller_manager_msgs), with ARMGATE_ROS2_OVERLAY=1 (else 0).
# It returns 1, saying why, when the core is not built. ROS_DOMAIN_ID and ROS_LOCALHOST_ONLY are left
# as they are (set them to keep a test graph apart from others on the network).
if [ -n "${BASH_SOURCE:-}" ]; then
  armgate_ros2_dir=$(CDPATH= cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
elif [ -n "${ZSH_VERSION:-}" ]; then
  # shellcheck disable=SC2296
  armgate_ros2_dir=$(CDPATH= cd -- "$(dirname -- "${(%):-%x}")" && pwd)
else
  armgate_ros2_dir=$(pwd)/scripts/ros2
fi
if [ ! -f "$armgate_ros2_dir/paths.sh" ]; then
  echo "scripts/ros2/env.sh: source it from the repository's root in sh (. scripts/ros2/env.sh), or from bash/zsh" >&2
  return 1 2>/dev/null || exit 1
fi
. "$armgate_ros2_dir/paths.sh"
if [ -z "$ARMGATE_ROS2_KEY" ]; then
  echo "scripts/ros2/env.sh: no ROS 2 core sources at $ARMGATE_ROS2_SOURCES (MANIFEST.tsv); set ARMGATE_ROS2_SOURCES" >&2
  return 1 2>/dev/null || exit 1
fi
if [ ! -f "$ARMGATE_ROS2_PREFIX/.armgate-built" ]; then
  echo "scripts/ros2/env.sh: the ROS 2 core is not built at $ARMGATE_ROS2_PREFIX; run: npm run ros2:build" >&2
  return 1 2>/dev/null || exit 1
fi
# The install's own setup.sh (colcon's; it prints nothing) is not written for `set -u`: off while it runs.
case $- in *u*) armgate_nounset=1; set +u ;; *) armgate_nounset= ;; esac
COLCON_CURRENT_PREFIX="$ARMGATE_ROS2_PREFIX" . "$ARMGATE_ROS2_PREFIX/setup.sh"
if [ -f "$ARMGATE_ROS2_OVERLAY_PREFIX/.armgate-built" ]; then
  COLCON_CURRENT_PREFIX="$ARMGATE_ROS2_OVERLAY_PREFIX" . "$ARMGATE_ROS2_OVERLAY_PREFIX/local_setup.sh"
  ARMGATE_ROS2_OVERLAY=1
else
  ARMGATE_ROS2_OVERLAY=0
fi
export ARMGATE_ROS2_OVERLAY
[ -n "$armgate_nounset" ] && set -u
unset armgate_nounset
export ROS_DISTRO=jazzy ROS_VERSION=2 ROS_PYTHON_VERSION=3 RMW_IMPLEMENTATION=rmw_cyclonedds_cpp
