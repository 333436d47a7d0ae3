#!/usr/bin/env bash
# npm run ros2:build: builds the minimal ROS 2 Jazzy core from ../shared/ros2-jazzy with Debian's colcon
# (Release, tests off, only the packages in packages.txt and what they need) into a cache folder keyed
# by the sources' manifest and that list; a second run finds it and only says where it is. Then the
# overlay on it from ../shared/ros2-control (the real ros2_control stack the test stack runs: overlay.txt),
# cached the same way (keyed by the core's key, its manifest, its patch and overlay.txt). Then builds
# rclnodejs's native addon against both and generates rclnodejs's JavaScript messages (scripts/ros2/rclnodejs.sh).
#
# Left out on purpose: Fast DDS (not in Debian 12; Cyclone DDS from Debian is the one middleware),
# ros2cli (rclnodejs needs only a `ros2` on PATH to find the prefix: a stub stands in), tracing (no LTTng).
# Debian packages it needs: DEBIAN_PACKAGES below; as root it installs the missing ones with apt-get.
#   --force   build again even when the cache holds this key (the core and the overlay)
#   --core    build the core only (not the overlay, not rclnodejs)
set -euo pipefail
armgate_ros2_dir=$(CDPATH= cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=paths.sh
. "$armgate_ros2_dir/paths.sh"

force=0
core_only=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    --core) core_only=1 ;;
    *) echo "ros2:build: unknown argument $arg" >&2; exit 2 ;;
  esac
done

CORE_PACKAGES=(colcon python3-colcon-ros python3-colcon-cmake python3-colcon-library-path
  python3-colcon-package-selection python3-colcon-parallel-executor python3-colcon-recursive-crawl
  python3-colcon-python-setup-py python3-colcon-output python3-colcon-defaults
  python3-colcon-package-information python3-colcon-pkg-config python3-colcon-metadata python3-colcon-bash
  cmake g++ python3-dev python3-setuptools python3-empy python3-lark python3-catkin-pkg python3-numpy
  libyaml-dev libacl1-dev libspdlog-dev libtinyxml2-dev cyclonedds-dev libssl-dev)
# The overlay's (../shared/ros2-control/README.md): urdfdom, KDL, Eigen, console_bridge for urdf, kdl_parser
# and robot_state_publisher; libcap and libdw for rclcpp and backward_ros; tl-expected and Boost for
# ros2_control; Jinja2 and typeguard for generate_parameter_library.
OVERLAY_PACKAGES=(libeigen3-dev liburdfdom-dev liburdfdom-headers-dev libconsole-bridge-dev liborocos-kdl-dev
  libcap-dev libdw-dev libexpected-dev libboost-dev libfmt-dev python3-jinja2 python3-typeguard python3-yaml)

say() { printf 'ros2:build: %s\n' "$*"; }

# Installs the Debian packages named that are missing (as root; else fails, naming them).
need_debian_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    say "missing Debian packages (install them as root): ${missing[*]}" >&2
    exit 1
  fi
  say "installing ${#missing[@]} Debian packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

if [ -z "$ARMGATE_ROS2_KEY" ]; then
  say "no sources at $ARMGATE_ROS2_SOURCES (MANIFEST.tsv missing); set ARMGATE_ROS2_SOURCES" >&2
  exit 1
fi

stamp="$ARMGATE_ROS2_PREFIX/.armgate-built"
if [ "$force" = 0 ] && [ -f "$stamp" ]; then
  say "the core is built: $ARMGATE_ROS2_PREFIX (key $ARMGATE_ROS2_KEY; $(cat "$stamp"))"
else
  need_debian_packages "${CORE_PACKAGES[@]}"

  mapfile -t packages < <(grep -v '^#' "$armgate_ros2_dir/packages.txt" | grep -v '^$')
  work="$ARMGATE_ROS2_CACHE/$ARMGATE_ROS2_KEY"
  # A build that failed or was cut off resumes where it stopped (same key: same sources, same packages);
  # --force starts afresh.
  [ "$force" = 1 ] && rm -rf "$work/build" "$ARMGATE_ROS2_PREFIX"
  rm -rf "$work/ws"
  mkdir -p "$work/ws/src"
  say "unpacking $(ls "$ARMGATE_ROS2_SOURCES"/src/*.tar.gz | wc -l) source archives into $work/ws/src"
  for f in "$ARMGATE_ROS2_SOURCES"/src/*.tar.gz; do tar -xzf "$f" -C "$work/ws/src"; done
  say "building ${#packages[@]} packages and what they need (colcon, Release, tests off) into $ARMGATE_ROS2_PREFIX"
  started=$SECONDS
  # Debian's Python first (a pyenv Python lacks catkin_pkg, empy 3 and lark); no LTTng, so tracing off;
  # test_msgs is a test-only dependency that --packages-up-to pulls in (ignored: skipping it would still
  # make colcon look for its install).
  (
    cd "$work/ws"
    PATH=/usr/bin:/bin:/usr/sbin:/sbin colcon --log-base "$work/log" build --merge-install \
      --build-base "$work/build" --install-base "$ARMGATE_ROS2_PREFIX" \
      --executor parallel --parallel-workers "$(nproc)" --event-handlers console_direct- console_stderr- \
      --cmake-args -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3 \
        -DTRACETOOLS_DISABLED=ON \
      --packages-up-to "${packages[@]}" --packages-ignore test_msgs
  ) || { say "colcon build failed; its logs: $work/log/latest_build" >&2; exit 1; }
  # rclnodejs's build finds the ROS prefix by `which ros2`; the CLI is not built here.
  printf '#!/bin/sh\necho "ros2cli is not part of this core (armgate builds only what it needs)" >&2\nexit 1\n' \
    >"$ARMGATE_ROS2_PREFIX/bin/ros2"
  chmod +x "$ARMGATE_ROS2_PREFIX/bin/ros2"
  rm -rf "$work/ws" "$work/build" "$work/log"
  took=$((SECONDS - started))
  size=$(du -sm "$ARMGATE_ROS2_PREFIX" | cut -f1)
  echo "built $(date -u +%FT%TZ) in ${took} s, ${size} MB installed" >"$stamp"
  say "the core is built: $ARMGATE_ROS2_PREFIX ($(cat "$stamp"))"
fi

[ "$core_only" = 1 ] && exit 0

# The overlay: ros2_control from ../shared/ros2-control on top of the core (its README has the commands
# that worked; 48 packages). One colcon worker with make -j2, as measured there: two workers on 2 cores
# run two big C++ packages (rclcpp, controller_manager) side by side and swap.
if [ -z "$ARMGATE_ROS2_OVERLAY_KEY" ]; then
  say "no ros2_control sources at $ARMGATE_ROS2_CONTROL_SOURCES (MANIFEST.tsv missing); set ARMGATE_ROS2_CONTROL_SOURCES" >&2
  exit 1
fi
overlay_stamp="$ARMGATE_ROS2_OVERLAY_PREFIX/.armgate-built"
if [ "$force" = 0 ] && [ -f "$overlay_stamp" ]; then
  say "the overlay is built: $ARMGATE_ROS2_OVERLAY_PREFIX (key $ARMGATE_ROS2_OVERLAY_KEY; $(cat "$overlay_stamp"))"
else
  need_debian_packages "${OVERLAY_PACKAGES[@]}"
  mapfile -t overlay < <(grep -v '^#' "$armgate_ros2_dir/overlay.txt" | grep -v '^$')
  work="$ARMGATE_ROS2_CACHE/overlay-$ARMGATE_ROS2_OVERLAY_KEY"
  src="$ARMGATE_ROS2_CONTROL_SOURCES"
  [ "$force" = 1 ] && rm -rf "$work/build" "$ARMGATE_ROS2_OVERLAY_PREFIX"
  rm -rf "$work/ws"
  mkdir -p "$work/ws/src"
  say "unpacking $(ls "$src"/src/*.tar.gz | wc -l) ros2_control archives (and 3 of the core's) into $work/ws/src"
  (
    cd "$work/ws/src"
    for f in "$src"/src/*.tar.gz; do tar -xzf "$f"; done
    # Packages the overlay needs that the core's archives hold but the core does not build.
    tar -xzf "$ARMGATE_ROS2_SOURCES/src/rcl_interfaces.tar.gz" rcl_interfaces/statistics_msgs \
      rcl_interfaces/composition_interfaces rcl_interfaces/rosgraph_msgs
    tar -xzf "$ARMGATE_ROS2_SOURCES/src/common_interfaces.tar.gz" common_interfaces/diagnostic_msgs
    tar -xzf "$ARMGATE_ROS2_SOURCES/src/ament_cmake.tar.gz" ament_cmake/ament_cmake_auto
    # diagnostic_updater asks for rclpy (not built) for its Python module only: the patch drops that.
    patch -s -p1 -d diagnostics <"$src/diagnostic_updater-no-rclpy.patch"
  )
  say "building the overlay up to ${overlay[*]} (colcon, Release, tests off) into $ARMGATE_ROS2_OVERLAY_PREFIX"
  started=$SECONDS
  (
    cd "$work/ws"
    export PATH=/usr/bin:/bin:/usr/sbin:/sbin
    # The core's setup.sh is not written for `set -u`.
    set +u
    COLCON_CURRENT_PREFIX="$ARMGATE_ROS2_PREFIX" . "$ARMGATE_ROS2_PREFIX/setup.sh"
    MAKEFLAGS=${MAKEFLAGS:--j$(nproc)} colcon --log-base "$work/log" build --merge-install \
      --build-base "$work/build" --install-base "$ARMGATE_ROS2_OVERLAY_PREFIX" \
      --executor parallel --parallel-workers 1 --event-handlers console_direct- console_stderr- \
      --cmake-args -DBUILD_TESTING=OFF -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3 \
        -DTRACETOOLS_DISABLED=ON \
      --packages-up-to "${overlay[@]}"
  ) || { say "colcon build of the overlay failed; its logs: $work/log/latest_build" >&2; exit 1; }
  rm -rf "$work/ws" "$work/build" "$work/log"
  took=$((SECONDS - started))
  size=$(du -sm "$ARMGATE_ROS2_OVERLAY_PREFIX" | cut -f1)
  echo "built $(date -u +%FT%TZ) in ${took} s, ${size} MB installed" >"$overlay_stamp"
  say "the overlay is built: $ARMGATE_ROS2_OVERLAY_PREFIX ($(cat "$overlay_stamp"))"
fi

exec bash "$armgate_ros2_dir/rclnodejs.sh"
