# Where the ROS 2 Jazzy core's sources are and where its build is cached, and the same for the overlay
# on it (ros2_control: controller_manager, mock hardware, joint_trajectory_controller,
# joint_state_broadcaster, robot_state_publisher). Sourced by build.sh and env.sh (POSIX sh; no output).
# Sets ARMGATE_ROS2_SOURCES, ARMGATE_ROS2_KEY, ARMGATE_ROS2_PREFIX, and ARMGATE_ROS2_CONTROL_SOURCES,
# ARMGATE_ROS2_OVERLAY_KEY, ARMGATE_ROS2_OVERLAY_PREFIX.
#
# The cache folder is keyed by the sources' manifest and by the list of packages built (the file
# packages.txt beside this one): a change to either is a new key, so a stale install is never used.
#   ARMGATE_ROS2_SOURCES  the folder with MANIFEST.tsv and src/*.tar.gz (default: ../shared/ros2-jazzy
#                         beside the repository)
#   ARMGATE_ROS2_CACHE    the folder that holds one install per key (default: ~/.cache/armgate/ros2-jazzy)
#   ARMGATE_ROS2_CONTROL_SOURCES  the overlay's MANIFEST.tsv, src/*.tar.gz and patch (default:
#                         ../shared/ros2-control beside the repository)
# The overlay's key covers the core's key, its manifest, its patch and overlay.txt (its packages): a new
# core or new sources is a new overlay, in $ARMGATE_ROS2_CACHE/overlay-<key>/install.
armgate_ros2_dir=${armgate_ros2_dir:?armgate_ros2_dir must name scripts/ros2}
armgate_repo=$(CDPATH= cd -- "$armgate_ros2_dir/../.." && pwd)
ARMGATE_ROS2_SOURCES=${ARMGATE_ROS2_SOURCES:-$(CDPATH= cd -- "$armgate_repo/.." && pwd)/shared/ros2-jazzy}
ARMGATE_ROS2_CACHE=${ARMGATE_ROS2_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/armgate/ros2-jazzy}
if [ -f "$ARMGATE_ROS2_SOURCES/MANIFEST.tsv" ]; then
  ARMGATE_ROS2_KEY=$(cat "$ARMGATE_ROS2_SOURCES/MANIFEST.tsv" "$armgate_ros2_dir/packages.txt" | sha256sum | cut -c1-16)
else
  ARMGATE_ROS2_KEY=
fi
ARMGATE_ROS2_PREFIX=${ARMGATE_ROS2_PREFIX:-$ARMGATE_ROS2_CACHE/${ARMGATE_ROS2_KEY:-no-sources}/install}
ARMGATE_ROS2_CONTROL_SOURCES=${ARMGATE_ROS2_CONTROL_SOURCES:-$(CDPATH= cd -- "$armgate_repo/.." && pwd)/shared/ros2-control}
if [ -n "$ARMGATE_ROS2_KEY" ] && [ -f "$ARMGATE_ROS2_CONTROL_SOURCES/MANIFEST.tsv" ]; then
  ARMGATE_ROS2_OVERLAY_KEY=$({ echo "$ARMGATE_ROS2_KEY"; cat "$ARMGATE_ROS2_CONTROL_SOURCES/MANIFEST.tsv" \
    "$ARMGATE_ROS2_CONTROL_SOURCES"/*.patch "$armgate_ros2_dir/overlay.txt"; } | sha256sum | cut -c1-16)
else
  ARMGATE_ROS2_OVERLAY_KEY=
fi
ARMGATE_ROS2_OVERLAY_PREFIX=${ARMGATE_ROS2_OVERLAY_PREFIX:-$ARMGATE_ROS2_CACHE/overlay-${ARMGATE_ROS2_OVERLAY_KEY:-no-sources}/install}
export ARMGATE_ROS2_SOURCES ARMGATE_ROS2_CACHE ARMGATE_ROS2_KEY ARMGATE_ROS2_PREFIX
export ARMGATE_ROS2_CONTROL_SOURCES ARMGATE_ROS2_OVERLAY_KEY ARMGATE_ROS2_OVERLAY_PREFIX
